"""Throughput of `kwire spark` at local[1] and local[2], next to `kwire stats` on the same traffic.

    python scripts/bench_spark.py CAPTURE [--split PACKETS] [--masters local[1],local[2]] [--repeat 2]

CAPTURE (a classic pcap) is split into rotated files of PACKETS packets (as tcpdump -C would leave
them) in a temporary directory. For each master a fresh SparkSession is started (its start-up time is
reported apart), a warm-up job runs over two of the files, then `--repeat` timed jobs over all; the
best is reported, in captured MB/s, packets/s and exchanges/s. The in-process `kwire stats` aggregation over the unsplit capture
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

    with tempfile.TemporaryDirectory(prefix="kwire-bench-") as tmp:
        parts = [str(p) for p in split(args.capture, Path(tmp), args.split)]
        for master in args.masters.split(","):
            t = time.perf_counter()
            spark = get_session(master)
            started = time.perf_counter() - t
            run_job(spark, parts[:2], partitions=args.partitions)  # warm-up: Python workers, JIT
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                result = run_job(spark, parts, partitions=args.partitions)
                times.append(time.perf_counter() - t)
                if result.document != whole:
                    raise SystemExit(f"{master}: the Spark document differs from kwire stats'")
            best = min(times)
            print(f"kwire spark {master:<13} : {best:7.2f} s  {mb / best:7.2f} MB/s  {packets / best:9,.0f} packets/s  "
                  f"{exchanges / best:8,.0f} exchanges/s  ({len(parts)} files; session start {started:.1f} s; "
                  f"document equal to stats)")
            spark.stop()


if __name__ == "__main__":
    main()
