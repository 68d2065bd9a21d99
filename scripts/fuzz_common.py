"""Shared runner of the atheris harnesses scripts/fuzz_<target>.py (targets: tests/fuzz/targets.py).

    python scripts/fuzz_decoders.py [atheris/libFuzzer options] [CORPUS_DIR ...]
    python scripts/fuzz_pipeline.py -max_total_time=600 -artifact_prefix=/tmp/kwire-fuzz/

Seeds: tests/fuzz/corpus/<target>/ is always loaded (inputs that once failed), plus a few valid
inputs built here (real captures for capture/pipeline, valid encodings for decoders). A crash is
written by libFuzzer as crash-<sha1> (in -artifact_prefix); replay it with
`python -m tests.fuzz.targets TARGET FILE`, fix the bug, and keep the file as
tests/fuzz/corpus/<target>/<short-name>.bin so tests/fuzz/test_corpus.py replays it forever.
Needs `pip install atheris`.

atheris instruments Python, so it steers by the pure-Python build's coverage: run a harness with KWIRE_PURE=1,
then replay what it grew on both builds, `python scripts/fuzz_builds.py --corpus DIR TARGET` (a difference is
a bug of the compiled build, a death by signal a release blocker).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _seeds(name: str, out: Path) -> None:
    """Write the target's valid inputs (tests/fuzz/seeds.py) into `out`."""
    from tests.fuzz.seeds import seed_inputs

    for i, seed in enumerate(seed_inputs(name)):
        (out / f"seed-{i}").write_bytes(seed)


def main(name: str) -> None:
    import atheris

    with atheris.instrument_imports():
        from tests.fuzz import targets  # noqa: F401  (instruments kwire, which it imports)
    target = targets.TARGETS[name]

    def one(data: bytes) -> None:
        target(data)

    corpus = ROOT / "tests" / "fuzz" / "corpus" / name
    seeds = Path(tempfile.mkdtemp(prefix=f"kwire-fuzz-{name}-"))
    _seeds(name, seeds)
    args = [a for a in sys.argv]
    dirs = [str(seeds)] + ([str(corpus)] if corpus.is_dir() else [])
    if not any(not a.startswith("-") for a in args[1:]):
        args += dirs
    if not any(a.startswith("-max_len") for a in args):
        args.append("-max_len=65536" if name in ("capture", "pipeline") else "-max_len=8192")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    atheris.Setup(args, one)
    atheris.Fuzz()
