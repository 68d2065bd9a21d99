import os
import tempfile

import pytest

# Decoders the tests compile are cached on disk (kwire/codec/compiler.py) in a directory of this run,
# not in the user's ~/.cache; set at import so that subprocesses the tests start inherit it too.
_DECODER_CACHE = tempfile.TemporaryDirectory(prefix="kwire-test-decoders-")
os.environ.setdefault("KWIRE_CACHE_DIR", _DECODER_CACHE.name)


@pytest.fixture
def needs_compiled_core():
    """Skip unless this installation has the compiled core (fail instead under KWIRE_EXPECT_COMPILED, as CI sets):
    for the tests that compare it with the pure-Python reference (tests/test_compiled.py, tests/fuzz/test_builds.py)."""
    from kwire import compiled

    if os.environ.get(compiled.PURE_ENV, "") not in ("", "0"):
        pytest.skip("KWIRE_PURE is set: this run tests the pure-Python build")
    if not compiled._built_from():
        if os.environ.get("KWIRE_EXPECT_COMPILED"):
            pytest.fail("KWIRE_EXPECT_COMPILED is set but no compiled core was built (pip install -e . with gcc)")
        pytest.skip("no compiled core in this installation")
