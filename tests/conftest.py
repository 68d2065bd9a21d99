import os
import tempfile

# Decoders the tests compile are cached on disk (kwire/codec/compiler.py) in a directory of this run,
# not in the user's ~/.cache; set at import so that subprocesses the tests start inherit it too.
_DECODER_CACHE = tempfile.TemporaryDirectory(prefix="kwire-test-decoders-")
os.environ.setdefault("KWIRE_CACHE_DIR", _DECODER_CACHE.name)
