"""The Spark job of `kwire spark`: capture files -> the stats document (and Parquet tables).

    files --extract--> (part, flow, ts, file, n) -> packet    kwire.spark.extract, one task per file
          --shuffle--> partition `part`, sorted by key         repartitionAndSortWithinPartitions
          --decode---> facts, one Aggregator per partition     kwire.spark.transform
          --merge----> Aggregator.document()                    treeReduce, then on the driver

Stitching: every packet of a connection, from whichever rotated file (tcpdump -C / -G), lands in the
same partition under the same flow key, sorted by capture time, and one Pipeline reassembles it. So
the document equals `kwire stats` over the same traffic, key for key (kwire.analytics guarantees the
aggregation does not depend on how exchanges were split). Known limits of that equality: a
connection idle for longer than the flow table's idle timeout (300 s) with other traffic around it,
and capture files whose timestamps go backwards, may be cut or ordered differently.

Why an RDD for the shuffle: the partition of a packet is chosen explicitly (`part`, so every
partition also receives every file's report), and PySpark sorts it with its spilling external
sorter; decoding is Python either way. The results become DataFrames with explicit schemas
(kwire.spark.schemas) where they leave Python: the Parquet tables.

Memory: executors stream files and connections (bounded by kwire's own buffers); the shuffle spills
to disk; the driver only ever holds merged Aggregators, whose size depends on the number of distinct
apis, clients, brokers, partitions and latency values, not on the number of packets.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from kwire.pipeline import RunSummary
from kwire.spark.extract import FileReport, file_records
from kwire.spark.transform import DecodeOptions, PartitionResult, decode_partition


@dataclass
class JobResult:
    document: dict
    summary: RunSummary
    files: list[FileReport]


def default_partitions(spark, files: int) -> int:
    return max(4, spark.sparkContext.defaultParallelism * 4)


def _partition_of(key) -> int:
    return key[0]


def _merge(a: PartitionResult, b: PartitionResult) -> PartitionResult:
    return a.merge(b)


def run_job(spark, paths: list[str], options: DecodeOptions = DecodeOptions(), *, out: str | None = None,
            partitions: int | None = None) -> JobResult:
    """Run the job over `paths` (already expanded: files only) and return the summary."""
    from pyspark import StorageLevel

    sc = spark.sparkContext
    if out is not None and not options.rows:
        options = replace(options, rows=True)
    n = partitions or default_partitions(spark, len(paths))
    options = _resolve_group(spark, paths, options, n)
    files = sc.parallelize(list(enumerate(paths)), max(len(paths), 1))
    packets = files.flatMap(lambda item: file_records(item[0], item[1], n))
    ordered = packets.repartitionAndSortWithinPartitions(n, partitionFunc=_partition_of)
    decoded = ordered.mapPartitionsWithIndex(lambda i, records: decode_partition(i, records, options))
    if out is None:
        result = decoded.map(lambda item: item[1]).treeReduce(_merge)
    else:
        decoded.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            write_tables(spark, decoded, out)
            result = decoded.filter(lambda item: item[0] == "a").map(lambda item: item[1]).treeReduce(_merge)
        finally:
            decoded.unpersist()
    return JobResult(result.aggregator.document(), run_summary(result), result.files)


def _resolve_group(spark, paths: list[str], options: DecodeOptions, n: int) -> DecodeOptions:
    """--group: the members of the group read by a first job (kwire.spark.group_members)."""
    from kwire.group_filter import unresolved_group, with_members

    group = unresolved_group(options.keep)
    if group is None:
        return options
    from kwire.spark.group_members import group_members

    members = group_members(spark, paths, group, n, options.port_hints, options.keylog)
    return replace(options, keep=with_members(options.keep, members))


def write_tables(spark, decoded, out: str) -> None:
    """Parquet: OUT/exchanges and OUT/partitions (overwritten)."""
    from kwire.spark.schemas import EXCHANGE_SCHEMA, PARTITION_SCHEMA, exchange_tuple, partition_tuple

    exchanges = decoded.filter(lambda item: item[0] == "x").map(lambda item: exchange_tuple(item[1]))
    spark.createDataFrame(exchanges, EXCHANGE_SCHEMA).write.mode("overwrite").parquet(os.path.join(out, "exchanges"))
    parts = decoded.filter(lambda item: item[0] == "p").map(lambda item: partition_tuple(item[1]))
    spark.createDataFrame(parts, PARTITION_SCHEMA).write.mode("overwrite").parquet(os.path.join(out, "partitions"))


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
