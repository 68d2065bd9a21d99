"""`kwire spark --group G`: the members of G, read from the archive by a Spark job of their own.

The filter of a group (kwire.group_filter) needs to know which clients are its members before any
exchange is counted, and members show up on their own connections (JoinGroup, heartbeats, commits)
while their fetches go over others. So, before the job that counts, `group_members(spark, paths,
group, ...)` runs the same extract, shuffle and per-connection pipeline (kwire.spark.extract,
kwire.spark.transform's ordering), decoding only the group apis, and collects the members' (host,
client id) on the driver: a small set. The archive is thus read twice.
"""

from __future__ import annotations

from kwire.capture.packet import Packet
from kwire.group_filter import _undecoded, members_of
from kwire.pipeline import Pipeline, RunSummary
from kwire.spark.extract import REPORT_FLOW, file_records


def partition_members(records, group: str, port_hints, keys=None) -> list[tuple]:
    """The members of `group` seen in one sorted shuffle partition (one Pipeline per connection)."""
    found: set[tuple] = set()
    flow = pipeline = None
    for key, value in records:
        if key[1] == REPORT_FLOW:
            continue
        if key[1] != flow:
            if pipeline is not None:
                found |= members_of(pipeline.finish(), group)
            flow = key[1]
            pipeline = Pipeline(port_hints=port_hints, summary=RunSummary(), offload=_undecoded, keys=keys)
        found |= members_of(pipeline.feed(Packet(key[2], value[0], value[1], value[2])), group)
    if pipeline is not None:
        found |= members_of(pipeline.finish(), group)
    return sorted(found, key=str)


def group_members(spark, paths: list[str], group: str, partitions: int, port_hints=(), keys=None) -> set[tuple]:
    sc = spark.sparkContext
    files = sc.parallelize(list(enumerate(paths)), max(len(paths), 1))
    packets = files.flatMap(lambda item: file_records(item[0], item[1], partitions))
    ordered = packets.repartitionAndSortWithinPartitions(partitions, partitionFunc=lambda key: key[0])
    found = ordered.mapPartitions(lambda records: partition_members(records, group, tuple(port_hints), keys))
    return {tuple(member) for member in found.collect()}
