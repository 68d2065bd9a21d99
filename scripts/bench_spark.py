"""Throughput of `kwire spark` at local[1] and local[2], next to `kwire stats` on the same traffic.

    python scripts/bench_spark.py CAPTURE [--split PACKETS] [--masters local[1],local[2]] [--repeat 2]

CAPTURE (a classic pcap) is split into rotated files of PACKETS packets (as tcpdump -C would leave
them) in a temporary directory. For each master a fresh SparkSession is started (its start-up time is
reported apart), a warm-up job runs over two of the files, then one timed job over all; `--repeat`
rounds alternate the masters and the best time of each is reported, in captured MB/s, packets/s and
exchanges/s. The in-process `kwire stats` aggregation over the unsplit capture
is timed the same way, and every Spark document is checked to be equal to its document.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kwire.analytics import Aggregator  # noqa: E402
from kwire.pipeline import RunSummary, analyze_files  # noqa: E402


def split(capture: Path, out: Path, per_file: int) -> list[Path]:
    from tests.spark.rotate import rotate

    return rotate(capture, out, per_file)


def stats_run(capture: Path) -> tuple[float, dict, RunSummary]:
    summary = RunSummary()
    agg = Aggregator()
    t = time.perf_counter()
    for ex in analyze_files([str(capture)], summary=summary):
        agg.add_exchange(ex)
    doc = agg.document()
    return time.perf_counter() - t, doc, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("capture", type=Path)
    ap.add_argument("--split", type=int, default=5000, help="packets per rotated file (default 5000)")
    ap.add_argument("--masters", default="local[1],local[2]")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=None)
    args = ap.parse_args()

    size = args.capture.stat().st_size
    best_stats, whole, summary = min((stats_run(args.capture) for _ in range(args.repeat)), key=lambda r: r[0])
    packets, exchanges = summary.capture.packets, summary.exchanges
    mb = size / 1e6
    print(f"capture {args.capture} : {mb:.1f} MB, {packets:,} packets, {exchanges:,} exchanges; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"kwire stats (in process)  : {best_stats:7.2f} s  {mb / best_stats:7.2f} MB/s  "
          f"{packets / best_stats:9,.0f} packets/s  {exchanges / best_stats:8,.0f} exchanges/s")

    from kwire.spark.job import run_job
    from kwire.spark.session import get_session

    masters = args.masters.split(",")
    best: dict[str, float] = {}
    started: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="kwire-bench-") as tmp:
        parts = [str(p) for p in split(args.capture, Path(tmp), args.split)]
        # Rounds alternate the masters, so that load from other processes hits them alike.
        for _ in range(args.repeat):
            for master in masters:
                t = time.perf_counter()
                spark = get_session(master)
                started.setdefault(master, time.perf_counter() - t)
                run_job(spark, parts[:2], partitions=args.partitions)  # warm-up: Python workers, JIT
                t = time.perf_counter()
                result = run_job(spark, parts, partitions=args.partitions)
                elapsed = time.perf_counter() - t
                spark.stop()
                if result.document != whole:
                    raise SystemExit(f"{master}: the Spark document differs from kwire stats'")
                best[master] = min(best.get(master, elapsed), elapsed)
    for master in masters:
        b = best[master]
        print(f"kwire spark {master:<13} : {b:7.2f} s  {mb / b:7.2f} MB/s  {packets / b:9,.0f} packets/s  "
              f"{exchanges / b:8,.0f} exchanges/s  ({len(parts)} files; first session start {started[master]:.1f} s; "
              f"document equal to stats)")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
