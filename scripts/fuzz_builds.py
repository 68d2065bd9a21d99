"""Fuzz both builds against each other (issue 49): every fuzz target's inputs through the compiled core and
through the pure-Python reference, their observations compared (tests/fuzz/builds.py).

    python scripts/fuzz_builds.py                          # every target, 2,000 generated inputs each
    python scripts/fuzz_builds.py --count 20000 --seed 7 pipeline decoders
    python scripts/fuzz_builds.py --corpus /tmp/kwire-fuzz/pipeline pipeline   # replay what atheris grew

Inputs: the target's corpus (tests/fuzz/corpus/<target>/), generated ones (random bytes and mutations of the
target's valid seeds, from --seed), and the files of --corpus. A difference is a bug of the compiled build, a
death by signal or a hang a release blocker: each such input is written to --save (default
/tmp/kwire-fuzz-builds/<target>/) to keep under tests/fuzz/corpus/<target>/ once fixed. Exit status 1 if any.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fuzz import builds, targets  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("targets", nargs="*", help=f"default: all of {', '.join(sorted(targets.TARGETS))}")
    parser.add_argument("--count", type=int, default=2000, help="generated inputs per target")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", type=Path, action="append", default=[], help="a folder of more inputs")
    parser.add_argument("--save", type=Path, default=Path("/tmp/kwire-fuzz-builds"))
    args = parser.parse_args()
    names = args.targets or sorted(targets.TARGETS)
    unknown = [n for n in names if n not in targets.TARGETS]
    if unknown:
        parser.error(f"no such target: {', '.join(unknown)}")
    from kwire import compiled

    print(compiled.report(), flush=True)
    if not compiled._built_from():
        print("fuzz_builds: no compiled core in this installation (pip install -e . with gcc)", file=sys.stderr)
        return 2
    bad = 0
    for name in names:
        inputs = builds.corpus_inputs(name) + builds.generated_inputs(name, args.count, args.seed)
        for folder in args.corpus:
            inputs += [p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()]
        started = time.perf_counter()
        verdict = builds.compare(name, inputs)
        for line in verdict.lines(inputs):
            print(line, flush=True)
        print(f"  ({time.perf_counter() - started:.1f} s)", flush=True)
        for index in [i for i, _, _ in verdict.differences] + [i for i, _, _ in verdict.deaths]:
            folder = args.save / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / hashlib.sha1(inputs[index]).hexdigest()[:12]).write_bytes(inputs[index])
        bad += not verdict.clean
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
