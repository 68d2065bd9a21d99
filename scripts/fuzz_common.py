"""Shared runner of the atheris harnesses scripts/fuzz_<target>.py (targets: tests/fuzz/targets.py).

    python scripts/fuzz_decoders.py [atheris/libFuzzer options] [CORPUS_DIR ...]
    python scripts/fuzz_pipeline.py -max_total_time=600 -artifact_prefix=/tmp/kwire-fuzz/

Seeds: tests/fuzz/corpus/<target>/ is always loaded (inputs that once failed), plus a few valid
inputs built here (real captures for capture/pipeline, valid encodings for decoders). A crash is
written by libFuzzer as crash-<sha1> (in -artifact_prefix); replay it with
`python -m tests.fuzz.targets TARGET FILE`, fix the bug, and keep the file as
tests/fuzz/corpus/<target>/<short-name>.bin so tests/fuzz/test_corpus.py replays it forever.
Needs `pip install atheris`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _seeds(name: str, out: Path) -> None:
    """Write a few valid inputs for the target into `out`."""
    import random

    from tests.fuzz import targets

    rng = random.Random(1)
    seeds: list[bytes] = []
    if name in ("capture",):
        seeds += [p.read_bytes()[:200_000] for p in sorted((ROOT / "captures").glob("*.pcap*"))
                  if not p.name.endswith(".log")][:4]
    elif name == "decoders":
        for i, (schema, version) in enumerate(targets.SCHEMAS[::7]):
            seeds.append(targets.SCHEMAS.index((schema, version)).to_bytes(2, "big") + b"\x01" + rng.randbytes(8))
    elif name == "pipeline":
        from tests.kafka.frames import request_frame, response_frame

        frames = [(0, request_frame(18, 0, 1, "c")), (1, response_frame(1, b"\x00\x00\x00\x00\x00\x00")),
                  (0, request_frame(3, 1, 2, "c", b"\x00\x00\x00\x00")), (1, response_frame(2, b"\x00" * 12))]
        seeds.append(b"\x00" + b"".join(bytes([d, len(f)]) + f for d, f in frames))
    elif name == "records":
        seeds.append(targets._random_batches(rng))
    for i, seed in enumerate(seeds):
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
