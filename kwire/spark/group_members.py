"""`kwire spark --group G`: the members of G, read from the archive by a Spark job of their own.

The filter of a group (kwire.group_filter) needs to know which clients are its members before any
exchange is counted, and members show up on their own connections (JoinGroup, heartbeats, commits)
while their fetches go over others. So, before the job that counts, `group_members` runs the same
map, shuffle and stitch as the counting job (kwire.spark.job.stitched) with DecodeOptions.members_of
set: only the group apis are decoded, nothing is counted, and each task's members of G (host,
client id) are merged as the counting job's results are (kwire.spark.job.merged): a small set. The
archive is thus read twice.
"""

from __future__ import annotations

from dataclasses import replace

from kwire.query import ExchangeFilter
from kwire.spark.results import DecodeOptions


def group_members(spark, paths: list[str], group: str, partitions: int, options: DecodeOptions) -> set[tuple]:
    from kwire.spark.job import merged, stitched
    from kwire.spark.wire import RESULT

    gather = replace(options, keep=ExchangeFilter(), rows=False, members_of=group)
    results = stitched(spark, paths, gather, partitions).where(f"kind = {RESULT}")
    return {tuple(member) for member in merged(results).members}
