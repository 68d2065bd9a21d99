"""The Spark job of `kwire spark`: capture files -> the stats document (and Parquet tables).

    range(files)  --mapInArrow(read_file)-->      wire rows      kwire.spark.mapside, one task per file
                  --repartition(part), sort-->    by flow key    kwire.spark.wire.SORT_COLUMNS
                  --mapInArrow(stitch)-->         results        kwire.spark.stitch, one task per partition
                  --repartition(d), sort-->       round robin    kwire.spark.job.decode_partitions, each
                                                  task in its reduce tasks' order, a shard's
                                                  Produce batches to one task (dealt)
                  --mapInArrow(decode)-->         results        kwire.spark.spread, the undecoded exchanges
                  --merged, a tree of tasks-->    one result     kwire.spark.job.merged, at most FAN_IN
                                                  partials reach the driver: Aggregator.document()

Every step is a DataFrame -> DataFrame transform with an explicit schema, and every crossing between
the JVM and Python is Arrow. The map tasks do TCP for their file and finish the connections that
lie wholly inside it; only the payload runs of connections that touch a file's edge cross the
shuffle (ACKs, headers and retransmissions never do), and the reduce tasks stitch them. Why the
result equals `kwire stats` on the whole capture, key for key: each connection's bytes reach the
same stream layers (TLS, Kafka, decoding) in the same order with the same times (kwire.spark.pieces,
kwire.spark.stitch), and kwire.analytics merges exactly whatever the split.

`part`: a map task puts each flow key in the shuffle partition kwire.spark.placement chose for it
(the busiest connections of a sample of the files dealt out by weight, the others crc32(flow) % N),
before the map stage, by a small job that weighs the sample. Spark's repartition hashes the column,
so the column holds, for each N, a number Spark hashes to that very partition (`partition_keys`), and
every partition also gets every file's report (its result carries them only from partition 0).

Memory: map tasks hold a connection's events until it closes or its file ends (at most about a file);
reduce tasks stream connections in sorted order; the driver holds at most FAN_IN merged results.

The merge: every reduce and decode task hands back one pickled PartitionResult (its Aggregator, whose
tables the caps policy of kwire.native.caps bounds; partition 0's reduce task's also every file's
report, 2 MB for 10,000 files, where every reduce task's carried them until 2026-12-04). Collected, all of
them would sit on the driver at once (10 per core).
`merged` merges them on the executors instead: each partition's results into one, then levels of a
shuffle in which each task merges FAN_IN partials, until at most FAN_IN are left for the driver (a tree
of our own rather than RDD.treeReduce's, whose last level's width follows from a depth, not a bound).
Measured (200 rotated files of 24 interleaved copies of bulk-fetch.pcap, 64 reduce tasks: 66 results,
3.8 MB; local[2], load average 2-4, second and third rounds): the tree 12.8 and 12.1 s, collect() 12.7 and 13.4 s,
the results persisted and streamed to the driver by toLocalIterator (one Spark job per partition,
merged one at a time) 13.7 and 24.8 s; the driver's own CPU 0.10-0.18 s for each. Alike at this size:
the tree is chosen for what grows, the driver's memory and merging, bounded by FAN_IN whatever the
number of cores or files (scripts/spark_scale.py models them on 1,000 cores: docs/spark.md#at-scale).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from kwire.gc_policy import settle_gc
from kwire.pipeline import RunSummary
from kwire.spark.mapside import FileReport, read_file
from kwire.spark.placement import flow_weights, place, sample
from kwire.spark.results import DecodeOptions, PartitionResult
from kwire.spark.spread import decode_stage
from kwire.spark.stitch import Reducer
from kwire.spark.wire import OUT_DDL, PROWS, RESULT, ROUTED, SORT_COLUMNS, WIRE_DDL, XROWS, loads, table_of


ORDER = "reduce_order"  # the decode stage's shuffle: where a row left its reduce task (dealt)
FAN_IN = 8  # partial results merged into one by each task of the driver's merge, and at most left for the driver


@dataclass
class JobResult:
    document: dict
    summary: RunSummary
    files: list[FileReport]
    shuffle_bytes: int | None = None  # bytes the shuffle wrote, when Spark's status tracker said


def default_partitions(spark, files: int) -> int:
    """Reduce tasks: many more than cores, so that connections of very different sizes (a connection
    is decoded by one task) spread evenly over the cores as tasks finish."""
    return max(8, spark.sparkContext.defaultParallelism * 8)


def partition_keys(spark, n: int) -> list[int]:
    """For each partition p < n, an int that `repartition(n, col)` sends to partition p."""
    from pyspark.sql import functions as F

    found: dict[int, int] = {}
    span = 64 * n
    while len(found) < n:
        rows = (spark.range(0, span).select(F.col("id").cast("int").alias("k"))
                .select("k", F.expr(f"pmod(hash(k), {n})").alias("p")).collect())
        for k, p in rows:
            found.setdefault(p, k)
        span *= 4
    return [found[p] for p in range(n)]


def placed_flows(spark, paths: list[str], n: int) -> dict[bytes, int]:
    """The busiest connections' reduce partitions, from a sample of the files weighed by a small job
    (kwire.spark.placement)."""
    chosen = sample(len(paths))
    if not chosen or n == 1:  # nothing to weigh, or nowhere else to put it
        return {}

    def weigh(batches):
        import pyarrow as pa

        for batch in batches:
            for i in batch.column(0).to_pylist():
                weights = flow_weights(paths[chosen[i]])
                yield pa.RecordBatch.from_arrays([pa.array(list(weights), pa.binary()),
                                                  pa.array(list(weights.values()), pa.int64())],
                                                 names=["flow", "weight"])

    weights: dict[bytes, int] = {}
    rows = spark.range(0, len(chosen), 1, len(chosen)).mapInArrow(weigh, "flow binary, weight bigint").collect()
    for flow, weight in rows:
        flow = bytes(flow)
        weights[flow] = weights.get(flow, 0) + weight
    return place(weights, n)


def wire_rows(spark, paths: list[str], options: DecodeOptions, n: int, placed: dict | None = None):
    """The map stage: one task per file, rows of kwire.spark.wire, keyed for partition `part` (the
    flow keys in `placed` to the partition it gives, the others by hash)."""
    keys = partition_keys(spark, n)

    def map_files(batches):
        import pyarrow as pa

        settle_gc(collect=True)
        for batch in batches:
            for i in batch.column(0).to_pylist():
                for rows in read_file(i, paths[i], n, options, placed):
                    part = rows.column(0).to_pylist()
                    yield rows.set_column(0, "part", pa.array([keys[p] for p in part], pa.int32()))

    return spark.range(0, len(paths), 1, len(paths)).mapInArrow(map_files, WIRE_DDL)


def decode_partitions(spark) -> int:
    """Decode tasks: their batches are dealt round robin, so two per core balance them; few, since
    each task's Aggregator is merged on the driver (a full produce-batch table costs it 0.5 s)."""
    return max(2, 2 * spark.sparkContext.defaultParallelism)


def stitched(spark, paths: list[str], options: DecodeOptions, n: int, decoders: int = 0,
             placed: dict | None = None):
    """Map, shuffle, reduce: the DataFrame of reduce results (kwire.spark.wire.OUT_SCHEMA); with
    `decoders`, then the decode stage (kwire.spark.spread) over that many tasks, the batches dealt
    round robin; `placed`: flow keys placed by weight (kwire.spark.placement)."""
    spread = decoders > 0

    def reduce(batches):
        from pyspark import TaskContext

        settle_gc(collect=True)
        reducer = Reducer(options, spread=spread, keep_reports=TaskContext.get().partitionId() == 0)
        for batch in batches:
            yield from reducer.batch(batch)
        yield from reducer.end()

    rows = wire_rows(spark, paths, options, n, placed).repartition(n, "part").sortWithinPartitions(*SORT_COLUMNS)
    results = rows.mapInArrow(reduce, OUT_DDL)
    if spread:
        results = dealt(results, decoders, partition_keys(spark, decoders)).mapInArrow(decode_stage(options),
                                                                                       OUT_DDL)
    return results


def dealt(results, decoders: int, keys: list[int]):
    """The reduce tasks' rows dealt to `decoders` partitions (`keys`: partition_keys of that many), each
    partition in the order its rows left their reduce task (kwire.spark.spread: a connection's exchanges reach
    a decode task's Aggregator in capture order): the batches of a shard's Produce exchanges (kind ROUTED +
    shard) to partition shard % decoders, every other row by its number, round robin. The order is carried in
    a column, (reduce task, row) as monotonically_increasing_id numbers them, and put back."""
    from pyspark.sql import functions as F

    kind, order = F.col("kind"), F.col(ORDER)
    target = F.when(kind >= ROUTED, F.pmod(kind - ROUTED, F.lit(decoders))).otherwise(F.pmod(order, F.lit(decoders)))
    key = F.element_at(F.array(*[F.lit(k) for k in keys]), (target + 1).cast("int"))
    return (results.withColumn(ORDER, F.monotonically_increasing_id()).repartition(decoders, key)
            .sortWithinPartitions(ORDER).select("kind", "data"))


def combine(mine: PartitionResult, theirs: PartitionResult) -> PartitionResult:
    """Two PartitionResults as one (into `mine`), each table folded by the caps policy as it merges
    (kwire.analytics.aggregate); a file's report that both carry (kwire.spark.source's tasks, which see
    the files around their own) is kept once."""
    files = {f.index: f for f in mine.files}
    files.update((f.index, f) for f in theirs.files)
    mine.files, theirs.files = [], []
    mine.merge(theirs)
    mine.files = [files[i] for i in sorted(files)]
    return mine


def merge_results(blobs) -> PartitionResult:
    """Pickled PartitionResults as one, merged as they come (one blob unpickled at a time)."""
    total = _fold(loads(blob) for blob in blobs)
    total.files = sorted(total.files, key=lambda f: f.index)
    return total


def merged(results, fan_in: int = FAN_IN) -> PartitionResult:
    """The RESULT blobs of `results` as one PartitionResult, merged on the executors (module docstring):
    each partition's results into one, then levels of `fan_in` partials into one, until at most
    `fan_in` are left; those reach the driver, which never holds more."""
    partials = results.rdd.map(lambda row: loads(row[1])).mapPartitions(_merged_partition)
    n = partials.getNumPartitions()
    while n > fan_in:
        n = -(-n // fan_in)
        partials = partials.mapPartitionsWithIndex(_keyed(n)).reduceByKey(combine, n).values()
    return _fold(partials.collect())  # at most fan_in


def _fold(results) -> PartitionResult | None:
    """PartitionResults as one, merged as they come (None when there are none)."""
    total = None
    for result in results:
        total = result if total is None else combine(total, result)
    return total


def _merged_partition(results):
    """One partition's PartitionResults as one (none for an empty partition)."""
    total = _fold(results)
    if total is not None:
        yield total


def _keyed(n: int):
    """Partial i keyed i % n: each of the next level's n tasks merges about fan_in of them."""
    def key(i, partials):
        for partial in partials:
            yield i % n, partial

    return key


def run_job(spark, paths: list[str], options: DecodeOptions = DecodeOptions(), *, out: str | None = None,
            partitions: int | None = None) -> JobResult:
    """Run the job over `paths` (already expanded: files only) and return the summary."""
    from pyspark import StorageLevel

    if out is not None and not options.rows:
        options = replace(options, rows=True)
    n = partitions or default_partitions(spark, len(paths))
    options = _resolve_group(spark, paths, options, n)
    results = stitched(spark, paths, options, n, decode_partitions(spark), placed_flows(spark, paths, n))
    if out is None:
        result = merged(results)
    else:
        results.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            result = merged(results.where(f"kind = {RESULT}"))
            write_tables(results, out, result.aggregator.names)
        finally:
            results.unpersist()
    return JobResult(result.aggregator.document(), run_summary(result), result.files)


def _resolve_group(spark, paths: list[str], options: DecodeOptions, n: int) -> DecodeOptions:
    """--group: the members of the group read by a first job (kwire.spark.group_members)."""
    from kwire.group_filter import unresolved_group, with_members

    group = unresolved_group(options.keep)
    if group is None:
        return options
    from kwire.spark.group_members import group_members

    members = group_members(spark, paths, group, n, options)
    return replace(options, keep=with_members(options.keep, members))


def fact_rows(results, kind: int, schema, names: dict | None = None):
    """The Arrow IPC blobs of one kind of fact rows, as a DataFrame of rows (`names`: topic ids
    named in the `topic` column, as the document names them)."""
    def explode(batches):
        import pyarrow as pa

        for batch in batches:
            for blob in batch.column(1).to_pylist():
                table = table_of(blob)
                if names:
                    topics = table.column("topic").to_pylist()
                    table = table.set_column(table.schema.get_field_index("topic"), "topic",
                                             pa.array([names.get(t, t) for t in topics], pa.string()))
                yield from table.to_batches()

    return results.where(f"kind = {kind}").mapInArrow(explode, schema)


def write_tables(results, out: str, names: dict) -> None:
    """Parquet: OUT/exchanges and OUT/partitions (overwritten)."""
    from kwire.spark.schemas import EXCHANGE_SCHEMA, PARTITION_SCHEMA

    fact_rows(results, XROWS, EXCHANGE_SCHEMA).write.mode("overwrite").parquet(os.path.join(out, "exchanges"))
    fact_rows(results, PROWS, PARTITION_SCHEMA, names).write.mode("overwrite").parquet(
        os.path.join(out, "partitions"))


def run_summary(result: PartitionResult) -> RunSummary:
    """The counters of the whole run in the shape `kwire stats` reports them."""
    s = RunSummary()
    for f in result.files:
        s.capture.files += 1
        s.capture.add(f.packets, f.captured_bytes, f.wire_bytes, f.truncated)
        for lt in f.linktypes:
            s.capture.note_linktype(lt, os.path.basename(f.path))
        for key, value in f.net.items():
            s.net[key] = s.net.get(key, 0) + value
        if f.error:
            s.capture_errors.append(f.error)
        for lt in f.unknown_linktypes:
            s.unknown_linktypes.setdefault(lt, []).append(os.path.basename(f.path))
    s.connections = set(range(result.connections))
    s.exchanges, s.paired, s.no_response = result.exchanges, result.paired, result.no_response
    s.no_request, s.decode_errors = result.no_request, result.decode_errors
    s.tcp, s.kafka = dict(result.tcp), dict(result.kafka)
    s.tls = result.aggregator.tls
    return s
