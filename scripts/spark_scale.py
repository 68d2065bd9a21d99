"""What `kwire spark` would cost on a 1 TB archive of 100 MB rotated files (10,000 files) on 10, 100 and
1,000 executor cores: job time, shuffle bytes and driver memory, from per-file figures measured here.

    python scripts/spark_scale.py --measure figures.json [--capture captures/bulk-fetch.pcap --copies 48
                                  --packets 3000 --repeat 3]
    python scripts/spark_scale.py --figures figures.json [--archive-gb 1000 --file-mb 100 --cores 10,100,1000]

`--measure` builds a rotated archive (`--copies` interleaved copies of `--capture`, cut every `--packets`
packets as `editcap -c` cuts: tests/spark/rotate.py), runs the job on it on local[1] (a warm-up over two
files, then `--repeat` timed jobs, the fastest kept) and reads Spark's own stage metrics (the status store, as scripts/bench_spark.py):
the map stage's task time per input byte, the later stages' task time per input byte, the bytes the shuffles
wrote per input byte (the map stage's apart: the payload of connections cut by a file's edge), and the job's
fixed cost (its wall time less its tasks' time). It then times the merge (kwire.spark.job.combine) on the
run's own merged result: per result, and per file report it carries (partition 0's reduce task's result
carries every file's report; timed with 2,000 of them). The figures are written to FILE and modelled.

The model (pure functions below), for C cores and F files of B bytes:
    time     = start-up + fixed + ceil(F / C) waves x map time of one file + reduce work / C + merge
    merge    = (results per decode partition + FAN_IN x (levels + 1)) x (merge of one result)
               + (levels + 2) x (merge of F reports: the one partial of each level that carries them)
    shuffle  = input x measured ratio + the merge levels' partial results (one of each level with F reports)
    driver   = (FAN_IN + 1) results and F reports (collect() held every reduce task's, each with F reports,
               until 2026-12-04: 8 C of them)
It assumes files independent and alike (no stragglers, no skew: a connection's bytes are spread as in the
measured archive), the reduce work proportional to the bytes, the shuffle to the bytes that cross a file's
edge (as many connections cut per byte as in the measured archive), and the merged result the size the
measured archive's is (it grows with distinct keys, up to the caps of kwire.native.caps, not with bytes).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kwire.spark.job import FAN_IN  # noqa: E402

REDUCE_PER_CORE = 8  # kwire.spark.job.default_partitions
DECODE_PER_CORE = 2  # kwire.spark.job.decode_partitions


# The model: pure arithmetic on the figures (a dict of the keys --measure writes).

def waves(files: int, cores: int) -> int:
    """Rounds of map tasks: one task per file, `cores` at a time."""
    return -(-files // cores)


def merge_levels(partitions: int, fan_in: int = FAN_IN) -> list[int]:
    """The partial results each level of kwire.spark.job.merged shuffles, from one per partition down to the
    level that leaves at most `fan_in` for the driver."""
    levels = []
    n = partitions
    while n > fan_in:
        levels.append(n)
        n = -(-n // fan_in)
    return levels


def result_bytes(fig: dict, files: int) -> float:
    """A pickled result carrying `files` reports: the merged tables plus the reports (partition 0's reduce
    task's, and the partial that merged it at each level, carry every file's; the others none)."""
    return fig["result_bytes"] + files * fig["report_bytes"]


def result_merge_s(fig: dict, files: int) -> float:
    """The time to merge one result carrying `files` reports into another (unpickling them included)."""
    return fig["merge_s"] + files * fig["report_merge_s"]


def merge_time(fig: dict, files: int, cores: int, fan_in: int = FAN_IN) -> float:
    """The tree of kwire.spark.job.merged, level after level: each decode task merges the results it holds (its
    reduce tasks' and its own), each level's task `fan_in` partials, the driver the last `fan_in`; on that path,
    once a level (the decode task's, each of the tree's, the driver's), the partial with every file's report."""
    per_partition = REDUCE_PER_CORE // DECODE_PER_CORE + 1
    levels = len(merge_levels(DECODE_PER_CORE * cores, fan_in))
    steps = per_partition + fan_in * (levels + 1)
    return steps * result_merge_s(fig, 0) + (levels + 2) * files * fig["report_merge_s"]


def job_time(fig: dict, files: int, file_bytes: float, cores: int) -> float:
    map_file_s = fig["map_s_per_byte"] * file_bytes
    reduce_s = fig["reduce_s_per_byte"] * files * file_bytes / cores
    return (fig["startup_s"] + fig["fixed_s"] + waves(files, cores) * map_file_s + reduce_s
            + merge_time(fig, files, cores))


def shuffle_bytes(fig: dict, files: int, file_bytes: float, cores: int) -> float:
    levels = merge_levels(DECODE_PER_CORE * cores)
    tree = sum(levels) * result_bytes(fig, 0) + len(levels) * files * fig["report_bytes"]
    return fig["shuffle_per_byte"] * files * file_bytes + tree


def driver_bytes(fig: dict, files: int) -> float:
    """What the driver holds of the results at most: FAN_IN partials collected and the one it merges into, one
    of them with every file's report."""
    return (FAN_IN + 1) * result_bytes(fig, 0) + files * fig["report_bytes"]


def collected_bytes(fig: dict, files: int, cores: int) -> float:
    """What collect() held until 2026-12-04: every reduce task's result (each with every report, as every
    reduce task's carried them) and every decode task's."""
    return REDUCE_PER_CORE * cores * result_bytes(fig, files) + DECODE_PER_CORE * cores * fig["result_bytes"]


def table(fig: dict, archive_bytes: float, file_bytes: float, cores: list[int]) -> list[dict]:
    files = math.ceil(archive_bytes / file_bytes)
    return [{"cores": c, "files": files, "waves": waves(files, c), "time_s": job_time(fig, files, file_bytes, c),
             "merge_s": merge_time(fig, files, c), "shuffle_bytes": shuffle_bytes(fig, files, file_bytes, c),
             "driver_bytes": driver_bytes(fig, files), "collected_bytes": collected_bytes(fig, files, c)}
            for c in cores]


def render(rows: list[dict]) -> str:
    out = ["| executor cores | files | waves | job time | of it, the merge | shuffle written | driver holds "
           "(results) | collect() would hold |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| {r['cores']:,} | {r['files']:,} | {r['waves']:,} | {_duration(r['time_s'])} | "
                   f"{r['merge_s']:.1f} s | {r['shuffle_bytes'] / 1e9:,.1f} GB | {r['driver_bytes'] / 1e6:,.1f} MB | "
                   f"{r['collected_bytes'] / 1e9:,.2f} GB |")
    return "\n".join(out)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


# The measurement: a rotated archive through the job on local[1].

def build_archive(capture: Path, copies: int, packets: int, tmp: Path) -> list[str]:
    from tests.spark.rotate import interleaved_copies, rotate

    big = interleaved_copies(capture, tmp / "archive.pcap", copies)
    paths = [str(p) for p in rotate(big, tmp / "parts", packets)]
    big.unlink()
    return paths


def stage_figures(spark, since: float, files: int) -> dict:
    """Task seconds of the map stage (the first of `files` tasks that wrote a shuffle) and of the stages
    after it, and the bytes every shuffle wrote, of the stages submitted since `since` (epoch s)."""
    from bench_spark import spark_stages

    stages = [s for s in spark_stages(spark)
              if s.submissionTime().isDefined() and s.submissionTime().get().getTime() / 1000 >= since]
    stages.sort(key=lambda s: s.stageId())
    mapped = next(s for s in stages if s.numTasks() == files and s.shuffleWriteBytes() > 0)
    later = [s for s in stages if s.stageId() > mapped.stageId()]
    return {"map_task_s": mapped.executorRunTime() / 1000,
            "reduce_task_s": sum(s.executorRunTime() for s in later) / 1000,
            "map_shuffle_bytes": mapped.shuffleWriteBytes(),
            "shuffle_bytes": sum(s.shuffleWriteBytes() for s in stages)}


def merge_figures(result, reports: int = 2000, rounds: int = 10) -> dict:
    """The driver's merge of `result` (a PartitionResult), timed on copies of it: without file reports, and
    with `reports` copies of its first report (as many as a large archive gives every reduce task's result);
    the pickled sizes alike."""
    from dataclasses import replace

    from kwire.spark.job import combine
    from kwire.spark.wire import dumps, loads

    files, result.files = result.files, []
    bare = dumps(result)
    first = files[0]  # each copy its own path, lists and dicts, as distinct files' reports are pickled
    result.files = [replace(first, index=i, path=f"{first.path}.{i}", linktypes=list(first.linktypes),
                            net=dict(first.net)) for i in range(reports)]
    with_files = dumps(result)
    result.files = files
    timed = {}
    for name, blob in (("bare", bare), ("files", with_files)):
        into = loads(blob)
        t = time.perf_counter()
        for _ in range(rounds):
            combine(into, loads(blob))
        timed[name] = (time.perf_counter() - t) / rounds
    return {"result_bytes": len(bare), "report_bytes": (len(with_files) - len(bare)) / reports,
            "merge_s": timed["bare"], "report_merge_s": max(0.0, timed["files"] - timed["bare"]) / reports}


def timed_job(spark, paths: list[str]) -> tuple:
    """One timed job: its wall time, its stages' figures, its merged result."""
    since = time.time()
    t = time.perf_counter()
    result = merged_result(spark, paths)
    wall = time.perf_counter() - t
    return wall, stage_figures(spark, since, len(paths)), result


def measure(capture: Path, copies: int, packets: int, repeat: int) -> dict:
    from kwire.spark.job import run_job
    from kwire.spark.session import get_session

    os.environ["PYSPARK_PYTHON"] = sys.executable
    sys.path.insert(0, str(ROOT / "scripts"))
    with tempfile.TemporaryDirectory(prefix="kwire-scale-") as tmp:
        paths = build_archive(capture, copies, packets, Path(tmp))
        size = sum(os.path.getsize(p) for p in paths)
        t = time.perf_counter()
        spark = get_session("local[1]", verbose=False)
        startup = time.perf_counter() - t
        try:
            run_job(spark, paths[:2])
            runs = [timed_job(spark, paths) for _ in range(repeat)]
        finally:
            spark.stop()
    wall, stages, result = min(runs, key=lambda run: run[0])
    fig = {"capture": str(capture), "copies": copies, "packets_per_file": packets, "files": len(paths),
           "input_bytes": size, "exchanges": result.exchanges, "startup_s": startup, "job_s": wall, **stages,
           **merge_figures(result)}
    fig["map_s_per_byte"] = fig["map_task_s"] / size
    fig["reduce_s_per_byte"] = fig["reduce_task_s"] / size
    fig["shuffle_per_byte"] = fig["shuffle_bytes"] / size
    fig["fixed_s"] = max(0.0, wall - fig["map_task_s"] - fig["reduce_task_s"])
    return fig


def merged_result(spark, paths: list[str]):
    """The job kwire.spark.job.run_job runs without --out or --group, to its merged PartitionResult (which
    run_job turns into the document)."""
    from kwire.spark.job import decode_partitions, default_partitions, merged, placed_flows, stitched
    from kwire.spark.results import DecodeOptions

    n = default_partitions(spark, len(paths))
    return merged(stitched(spark, paths, DecodeOptions(), n, decode_partitions(spark), placed_flows(spark, paths, n)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--measure", type=Path, metavar="FILE", help="measure, write the figures to FILE, model them")
    ap.add_argument("--figures", type=Path, metavar="FILE", help="model figures a --measure run wrote")
    ap.add_argument("--capture", type=Path, default=ROOT / "captures" / "bulk-fetch.pcap")
    ap.add_argument("--copies", type=int, default=48)
    ap.add_argument("--packets", type=int, default=3000, help="packets per rotated file")
    ap.add_argument("--repeat", type=int, default=3, help="timed jobs, the fastest kept")
    ap.add_argument("--archive-gb", type=float, default=1000.0)
    ap.add_argument("--file-mb", type=float, default=100.0)
    ap.add_argument("--cores", default="10,100,1000")
    args = ap.parse_args()
    if args.measure:
        fig = measure(args.capture, args.copies, args.packets, args.repeat)
        args.measure.write_text(json.dumps(fig, indent=1) + "\n")
    elif args.figures:
        fig = json.loads(args.figures.read_text())
    else:
        ap.error("--measure FILE or --figures FILE")
    print(f"measured: {fig['files']} files, {fig['input_bytes'] / 1e6:.1f} MB, {fig['exchanges']:,} exchanges; "
          f"map {fig['map_s_per_byte'] * 1e8:.2f} s and later stages {fig['reduce_s_per_byte'] * 1e8:.2f} s of task "
          f"time per 100 MB; shuffle {fig['shuffle_per_byte']:.3f} bytes per input byte (the map stage's "
          f"{fig['map_shuffle_bytes'] / fig['input_bytes']:.3f}); start-up "
          f"{fig['startup_s']:.1f} s, fixed {fig['fixed_s']:.1f} s; result {fig['result_bytes']:,} bytes + "
          f"{fig['report_bytes']:.0f} per file report; merge {fig['merge_s'] * 1e3:.2f} ms + "
          f"{fig['report_merge_s'] * 1e6:.1f} us per report")
    rows = table(fig, args.archive_gb * 1e9, args.file_mb * 1e6, [int(c) for c in args.cores.split(",")])
    print(render(rows))


if __name__ == "__main__":
    main()
