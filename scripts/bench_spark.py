"""`kwire spark` against `kwire stats`, in one run: stats in process, local[1], local[2], and a standalone
cluster of one and of two single-core workers (started here from the pyspark installation, executors
on a Python without kwire, as tests/spark/cluster.py does).

    python scripts/bench_spark.py CAPTURE [--split PACKETS] [--repeat 2] [--configs ...]

CAPTURE (a classic pcap; at least 500 MB for issue 17's figures) is split into rotated files of
PACKETS packets (as tcpdump -C would leave them) in a temporary directory. `--repeat` rounds alternate
the configurations (so that load from other processes hits them alike); each round runs in a fresh
process (so the JVM starts anew) that starts the cluster if any, then the SparkSession (start-up timed
apart: the JVM, and for a cluster its executors), runs a warm-up job over two files (Python workers,
imports), then the timed job over all files. Reported per
configuration: the best job time, MB/s, packets/s, exchanges/s, the start-up and warm-up times, and
the bytes Spark's shuffle wrote per captured input byte (Spark's own stage metrics). Every document
is checked equal to the one `kwire stats` computes in process over the unsplit capture, which is
timed the same way (best of --repeat). The load average is printed at the start and at the end.

A worker started with `--cores 1` runs one task at a time, but its executor's JVM and the task's Python
worker are two processes, which on a shared machine run on two CPUs at once. The `-pinned`
configurations confine each worker, and everything it starts, to a CPU of its own
(tests/spark/cluster.py `pin`): one worker then has one core, as on a machine of one core, and two
workers have two. The driver and the master are not pinned.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kwire.analytics import Aggregator, summary_json  # noqa: E402
from kwire.gc_policy import settle_gc  # noqa: E402
from kwire.pipeline import RunSummary, analyze_files  # noqa: E402

CONFIGS = ("local[1]", "local[2]", "cluster-1", "cluster-2", "cluster-1-pinned", "cluster-2-pinned")


def stats_run(capture: Path) -> tuple[float, dict, RunSummary]:
    summary = RunSummary()
    agg = Aggregator()
    t = time.perf_counter()
    for ex in analyze_files([str(capture)], summary=summary):
        agg.add_exchange(ex)
    agg.tls.merge(summary.tls)
    doc = agg.document()
    return time.perf_counter() - t, doc, summary


def spark_stages(spark):
    """Every stage this session ran so far (Spark's status store)."""
    sc = spark.sparkContext
    gw = sc._gateway
    empty = gw.jvm.java.util.ArrayList()
    it = sc._jsc.sc().statusStore().stageList(empty, False, False, gw.new_array(gw.jvm.double, 0), empty).iterator()
    while it.hasNext():
        yield it.next()


def stage_times(spark, since: float) -> list[dict]:
    """Spark's own account of the stages submitted since `since` (epoch s): when each started (s after
    `since`), how long it ran, and the time its tasks ran in all (one core's worth: the stage's work)."""
    out = []
    for s in spark_stages(spark):
        sub, done = s.submissionTime(), s.completionTime()
        if not (sub.isDefined() and done.isDefined()) or sub.get().getTime() / 1000 < since:
            continue
        start = sub.get().getTime() / 1000 - since
        out.append({"id": s.stageId(), "tasks": s.numTasks(), "start": round(start, 2),
                    "seconds": round((done.get().getTime() - sub.get().getTime()) / 1000, 2),
                    "task_seconds": round(s.executorRunTime() / 1000, 2)})
    return sorted(out, key=lambda stage: stage["id"])


def shuffle_written(spark) -> int:
    """Bytes every stage of this session's shuffles wrote so far (Spark's stage metrics)."""
    return sum(s.shuffleWriteBytes() for s in spark_stages(spark))


class Master:
    """Where a configuration's session comes from: a local master, or a cluster started for it."""

    def __init__(self, name: str, root: Path):
        self.name = name
        self.cluster = None
        if name.startswith("cluster-"):
            from tests.spark.cluster import Cluster

            self.cluster = Cluster(root / name, workers=int(name.split("-")[1]), pin=name.endswith("-pinned"))
            self.cluster.start()

    def session(self):
        from kwire.spark.session import get_session

        if self.cluster is None:
            os.environ["PYSPARK_PYTHON"] = sys.executable
            return get_session(self.name, verbose=False)
        os.environ["PYSPARK_PYTHON"] = self.cluster.python
        return get_session(self.cluster.url, verbose=False)

    def close(self) -> None:
        if self.cluster is not None:
            self.cluster.stop()


def one_round(master: Master, parts: list[str], whole: str, partitions) -> dict:
    from kwire.spark.job import run_job

    t = time.perf_counter()
    spark = master.session()
    if master.cluster is not None:  # the executors too, not only the driver's JVM
        from kwire.spark.session import ExecutorWatch

        watch = ExecutorWatch(spark, 0)
        while watch.executors() < len(master.cluster.workers):
            time.sleep(0.1)
    started = time.perf_counter() - t
    try:
        t = time.perf_counter()
        run_job(spark, parts[:2], partitions=partitions)
        warm = time.perf_counter() - t
        before = shuffle_written(spark)
        since = time.time()
        t = time.perf_counter()
        result = run_job(spark, parts, partitions=partitions)
        elapsed = time.perf_counter() - t
        shuffled = shuffle_written(spark) - before
        stages = stage_times(spark, since)
    finally:
        spark.stop()
    if summary_json(result.document) != whole:  # `--json` text, to the byte
        raise SystemExit(f"{master.name}: the Spark document differs from kwire stats'")
    return {"job": elapsed, "start": started, "warm": warm, "shuffle": shuffled, "stages": stages}


def child(name: str, parts_file: Path, whole_file: Path, partitions) -> None:
    """One round of one configuration, in this (fresh) process: its figures as JSON on stdout."""
    parts = json.loads(parts_file.read_text())
    whole = whole_file.read_text()
    root = Path(tempfile.mkdtemp(prefix="kwire-bench-", dir=parts_file.parent))
    master = Master(name, root)
    try:
        r = one_round(master, parts, whole, partitions)
    finally:
        master.close()
    print(json.dumps(r))


def round_in_child(name: str, tmp: Path, partitions) -> dict:
    argv = [sys.executable, __file__, "--child", name, "--tmp", str(tmp)]
    if partitions:
        argv += ["--partitions", str(partitions)]
    run = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
    if run.returncode:
        raise SystemExit(f"{name}: {run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def main() -> None:
    settle_gc()  # as kwire's commands do once imported (kwire.cli.main)
    if "--child" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--child")
        ap.add_argument("--tmp", type=Path)
        ap.add_argument("--partitions", type=int, default=None)
        a = ap.parse_args()
        child(a.child, a.tmp / "parts.json", a.tmp / "whole.json", a.partitions)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("capture", type=Path)
    ap.add_argument("--split", type=int, default=20000, help="packets per rotated file (default 20000)")
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--stages", action="store_true", help="print each timed job's stages (Spark's status store)")
    args = ap.parse_args()

    size = args.capture.stat().st_size
    mb = size / 1e6
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} on {os.cpu_count()} cores at the start",
          flush=True)
    runs = [stats_run(args.capture) for _ in range(args.repeat)]
    best_stats = min(r[0] for r in runs)
    _, whole, summary = runs[0]
    packets, exchanges = summary.capture.packets, summary.exchanges
    print(f"capture {args.capture}: {mb:.1f} MB, {packets:,} packets, {exchanges:,} exchanges, "
          f"{len(summary.connections)} Kafka connections", flush=True)
    configs = args.configs.split(",")
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="kwire-bench-") as tmp:
        from tests.spark.rotate import rotate

        parts = [str(p) for p in rotate(args.capture, Path(tmp) / "parts", args.split)]
        (Path(tmp) / "parts.json").write_text(json.dumps(parts))
        (Path(tmp) / "whole.json").write_text(summary_json(whole))
        print(f"split into {len(parts)} rotated files of {args.split:,} packets", flush=True)
        for _ in range(args.repeat):
            for name in configs:
                r = round_in_child(name, Path(tmp), args.partitions)
                print(f"  {name}: job {r['job']:.2f} s, start {r['start']:.1f} s, warm-up {r['warm']:.1f} s", flush=True)
                if args.stages:
                    for st in r["stages"]:
                        print(f"    stage {st['id']}: {st['tasks']} tasks, from {st['start']:.2f} s "
                              f"for {st['seconds']:.2f} s, task time {st['task_seconds']:.2f} s", flush=True)
                if name not in best or r["job"] < best[name]["job"]:
                    best[name] = r
    print()
    print("| run | job time | MB/s | packets/s | exchanges/s | vs stats | start-up | warm-up | shuffle bytes / input byte |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print(f"| kwire stats (in process) | {best_stats:.2f} s | {mb / best_stats:.1f} | {packets / best_stats:,.0f} | "
          f"{exchanges / best_stats:,.0f} | 1.00 | - | - | - |")
    for name in configs:
        r = best[name]
        b = r["job"]
        print(f"| kwire spark {name} | {b:.2f} s | {mb / b:.1f} | {packets / b:,.0f} | {exchanges / b:,.0f} | "
              f"{b / best_stats:.2f} | {r['start']:.1f} s | {r['warm']:.1f} s | {r['shuffle'] / size:.3f} |")
    print()
    for pin in ("", "-pinned"):
        one, two = best.get("cluster-1" + pin), best.get("cluster-2" + pin)
        if one and two:
            print(f"two workers vs one{' (pinned)' if pin else ''}: {one['job'] / two['job']:.2f}x")
    if "local[2]" in best:
        print(f"local[2] vs kwire stats: {best['local[2]']['job'] / best_stats:.2f} of its time")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} at the end; every document equal to "
          "kwire stats'")


if __name__ == "__main__":
    main()
