#!/usr/bin/env python3
"""What a change does to kwire's output: REV's kwire against the working tree's, on every committed capture.

    python scripts/diff_revisions.py [REV] [--out DIR] [--records]

REV (default HEAD) is taken out of git into a temporary folder and run from there; both run
`inspect --json -j 0` (with --records: every record decoded) and `stats --json -j 0` on every capture under
captures/ (TLS ones with their key logs). Prints, per capture and command, "same" or the number of
lines that differ, and writes both outputs and a unified diff under --out for reading. Exit 1 when
anything differs. For reviewing a change such as regenerated schemas; not a test (it needs git).
"""

from __future__ import annotations

import argparse
import difflib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def captures() -> list[Path]:
    found = [p for p in sorted((ROOT / "captures").rglob("*")) if p.suffix in (".pcap", ".pcapng", ".gz")
             and ".truth." not in p.name]
    return found


def commands(capture: Path, records: bool) -> dict[str, list[str]]:
    keys = capture.with_name(capture.name + ".keys")
    tls = ["--keylog", str(keys)] if keys.exists() else []
    inspect = ["inspect", "--json", "-j", "0", "--no-summary"] + (["--records"] if records else [])
    return {"inspect": inspect + tls + [str(capture)], "stats": ["stats", "--json", "-j", "0"] + tls + [str(capture)]}


def run(tree: Path, argv: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, "-m", "kwire", *argv], capture_output=True, text=True, env=env,
                          cwd=tree, timeout=600)
    return done.stdout + (f"\n[exit {done.returncode}] {done.stderr[-2000:]}" if done.returncode else "")


def checkout(rev: str, into: Path) -> Path:
    archive = into / "rev.tar"
    subprocess.run(["git", "archive", "-o", str(archive), rev, "kwire"], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "rev", filter="data")
    return into / "rev"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", nargs="?", default="HEAD")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "kwire-diff")
    parser.add_argument("--records", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    differs = 0
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = checkout(args.rev, Path(tmp))
        for capture in captures():
            for name, argv_ in commands(capture, args.records).items():
                old, new = run(old_tree, argv_), run(ROOT, argv_)
                stem = f"{capture.name}.{name}"
                if old == new:
                    print(f"same     {stem}")
                    continue
                differs += 1
                diff = list(difflib.unified_diff(old.splitlines(), new.splitlines(), args.rev, "working tree",
                                                 lineterm="", n=0))
                (args.out / f"{stem}.diff").write_text("\n".join(diff) + "\n")
                changed = sum(1 for line in diff if line.startswith("+") and not line.startswith("+++"))
                print(f"DIFFERS  {stem}: {changed} lines (see {args.out / (stem + '.diff')})")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
