#!/usr/bin/env python3
"""Work per core (issue 27): exchanges per second of CPU, a base revision against this tree, same run.

    python scripts/bench_core.py                       # base 63e8425 (main before issue 27), small10 + bulk
    python scripts/bench_core.py --base HEAD~3 --runs 5 --capture /tmp/x.pcap

Builds both: REV's kwire is taken out of git into a temporary folder, this tree's tracked files are
copied beside it, and each is built as `pip install .` would (`setup.py build_ext --inplace` where the
tree has a setup.py, so with its compiled core when a compiler is there). Then, per capture, runs
`kwire stats -j 0` and `kwire inspect --json -j 0` (one process: the work of one core) --runs times,
alternating trees: base, this tree compiled, this tree with KWIRE_PURE=1 (its pure-Python build).
Prints medians of CPU time (user + sys, from wait4) and wall time, exchanges per CPU second, and the
ratio to the base, and the least CPU time of the runs and the ratio of the least times (the steadiest figure
on a shared machine, where other work only ever adds time); and checks every tree's output is byte-identical to the base's (SHA-256 of stdout).

Captures (--dir, default /tmp/kwire-bench-cf, as scripts/bench.py records them): small10.pcap, ten
interleaved copies of small.pcap (many small Produce exchanges, ~360,000 packets; made here with
bench.make_big when missing) and bulk.pcap (a consumer fetching 100 MB).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import bench  # noqa: E402  (scripts/bench.py: measure() and make_big())

DEFAULT_BASE = "63e8425"  # main at the start of issue 27
COMMANDS = {"stats": ["stats", "-j", "0"], "inspect --json": ["inspect", "--json", "-j", "0"]}


def base_tree(rev: str, into: Path) -> Path:
    archive = into / "base.tar"
    subprocess.run(["git", "archive", "-o", str(archive), rev], cwd=ROOT, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "base", filter="data")
    return into / "base"


def this_tree(into: Path) -> Path:
    """The working tree's tracked files (edits included), without built files."""
    listed = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    files = subprocess.run(listed, cwd=ROOT, check=True, capture_output=True).stdout
    dst = into / "this"
    for name in filter(None, files.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)
    return dst


def build(tree: Path) -> str:
    if not (tree / "setup.py").exists():
        return "pure Python (no setup.py)"
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree,
                          capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"bench_core: building {tree} failed:\n{done.stderr[-3000:]}")
    for line in done.stdout.splitlines():  # what setup.py says of its build (a profile-guided build that fell back)
        if line.startswith("kwire:"):
            print(f"{tree.name}: {line}")
    report = subprocess.run([sys.executable, "-c", "import kwire.compiled as c; print(c.report())"], cwd=tree,
                            capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(tree)))
    return report.stdout.strip()


def env_for(tree: Path, pure: bool) -> dict[str, str]:
    """Bytecode written and read (a user's Python does; PYTHONDONTWRITEBYTECODE would make every run
    compile every module again), in a cache of each tree's own."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONPYCACHEPREFIX=str(tree / ".pycache" / str(pure)))
    env.pop("KWIRE_PURE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pure:
        env["KWIRE_PURE"] = "1"
    return env


def output_digest(tree: Path, pure: bool, argv: list[str]) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-m", "kwire", *argv], cwd=tree, capture_output=True,
                          env=env_for(tree, pure))
    # the run's summary, "200,090 exchanges (200,090 paired, ...": grouped by commas, and not a note before it
    # that counts some of them ("158 exchanges out of time order")
    found = re.search(rb"(\d[\d,]*) exchanges \(", done.stderr)
    if done.returncode or not found:
        sys.exit(f"bench_core: {' '.join(argv)} failed in {tree}: {done.stderr[-2000:]!r}")
    return hashlib.sha256(done.stdout).hexdigest(), int(found.group(1).replace(b",", b""))


def small10(folder: Path) -> Path:
    out = folder / "small10.pcap"
    if not out.exists():
        src = folder / "small.pcap"
        if not src.exists():
            sys.exit(f"bench_core: {src} is missing: record it with `sudo python scripts/bench.py --dir {folder}`")
        bench.make_big(src, out, 10 * src.stat().st_size, bench.broker_ports(src))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default=DEFAULT_BASE)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/kwire-bench-cf"))
    parser.add_argument("--capture", type=Path, action="append", help="instead of small10.pcap and bulk.pcap")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    captures = args.capture or [small10(args.dir), args.dir / "bulk.pcap"]
    with tempfile.TemporaryDirectory(prefix="kwire-bench-core-") as tmp:
        base, this = base_tree(args.base, Path(tmp)), this_tree(Path(tmp))
        print(f"base {args.base}: {build(base)}\nthis tree: {build(this)}\n", flush=True)
        trees = [("base", base, False), ("compiled", this, False), ("pure", this, True)]
        print("| capture | command | tree | exchanges | CPU s (median) | wall s | exchanges/s/core | x base "
              "| CPU s (best) | x base (best) |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for capture in captures:
            for label, argv in COMMANDS.items():
                bench_one(capture, label, argv + [str(capture)], trees, args.runs)


def bench_one(capture: Path, label: str, argv: list[str], trees, runs: int) -> None:
    digests = {name: output_digest(tree, pure, argv) for name, tree, pure in trees}  # also warms the caches
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in trees}
    wall: dict[str, list[float]] = {name: [] for name, _, _ in trees}
    for _ in range(runs):
        for name, tree, pure in trees:
            bench.ENV.clear()
            bench.ENV.update(env_for(tree, pure))
            bench.CWD["dir"] = str(tree)
            run = bench.measure([sys.executable, "-m", "kwire", *argv], 3600)
            if run.rc:
                sys.exit(f"bench_core: {name} failed: {run.stderr[-2000:]}")
            cpu[name].append(run.cpu)
            wall[name].append(run.wall)
    base_rate = base_best = None
    for name, _, _ in trees:
        digest, exchanges = digests[name]
        same = "" if digest == digests["base"][0] else " OUTPUT DIFFERS"
        c, best = statistics.median(cpu[name]), min(cpu[name])
        rate = exchanges / c
        base_rate, base_best = base_rate or rate, base_best or best
        # the best of the runs too: on a shared VM a neighbour only ever adds time, so the least is the steadiest
        print(f"| {capture.name} | {label} | {name}{same} | {exchanges:,} | {c:.2f} | "
              f"{statistics.median(wall[name]):.2f} | {rate:,.0f} | {rate / base_rate:.2f} | {best:.2f} | "
              f"{base_best / best:.2f} |", flush=True)


if __name__ == "__main__":
    main()
