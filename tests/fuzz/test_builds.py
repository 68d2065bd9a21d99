"""The fuzz targets on both builds (issue 49): the corpus of inputs that once failed and a few hundred
generated ones per target give the same observation on the compiled core and on the pure-Python reference,
and neither build dies (tests/fuzz/builds.py; scripts/fuzz_builds.py runs the same at any size)."""

from __future__ import annotations

import pytest

from tests.fuzz import builds, targets

COUNT = 150


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_both_builds_observe_the_same(name, needs_compiled_core):
    inputs = builds.corpus_inputs(name) + builds.generated_inputs(name, COUNT, seed=49)
    verdict = builds.compare(name, inputs)
    assert verdict.clean, "\n".join(verdict.lines(inputs))


def test_a_difference_and_a_death_are_found(tmp_path, monkeypatch):
    """The comparison can fail: a worker that prints another line for one build, and one killed by a signal."""
    fake = tmp_path / "tests" / "fuzz"
    fake.mkdir(parents=True)
    (tmp_path / "tests" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "builds.py").write_text(
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "def read_inputs(path):\n"
        "    return Path(path).read_bytes().split(b'|')\n"
        "if sys.argv[1] == 'worker':\n"
        "    for i, data in enumerate(read_inputs(sys.argv[3])):\n"
        "        if i < int(sys.argv[4]):\n"
        "            continue\n"
        "        if data == b'kill' and not os.environ.get('KWIRE_PURE'):\n"
        "            os.kill(os.getpid(), signal.SIGSEGV)\n"
        "        line = 'ok ' + data.decode() + ('!' if data == b'odd' and os.environ.get('KWIRE_PURE') else '')\n"
        "        print(i, line, flush=True)\n")
    monkeypatch.setattr(builds, "ROOT", tmp_path)
    monkeypatch.setattr(builds, "write_inputs", lambda inputs, path: path.write_bytes(b"|".join(inputs)))
    verdict = builds.compare("any", [b"a", b"odd", b"kill", b"b"], timeout=60)
    assert verdict.differences == [(1, "ok odd", "ok odd!")]
    assert verdict.deaths == [(2, "compiled", "signal SIGSEGV")]
    assert not verdict.clean
