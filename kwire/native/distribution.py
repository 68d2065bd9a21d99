"""Exact latency distributions: value -> count maps, percentiles by nearest rank, log histograms.

Native code (compiled whole: distribution.pxd beside this file), a kernel the analytics (kwire.analytics.figures,
aggregate, end_to_end_doc) and the live metrics call through these few functions: it knows of latencies only that
they are integer nanoseconds, and imports nothing of kwire.

A distribution is a dict {latency in integer ns: number of exchanges}. It merges by adding counts,
so partial results (Spark partitions, live snapshots) combine to exactly the whole. Latencies come
from capture timestamps (micro- or nanosecond resolution), so the number of distinct values stays far
below the number of exchanges in practice.

Percentile method (the only one kwire uses): nearest rank. For n values sorted ascending and a
percentile p in (0, 100], the p-th percentile is the value at 1-based rank ceil(p * n / 100),
computed in integers. p50 of [1, 2] is 1; p90 of ten values is the 9th; "max" is rank n. Always a
value that was observed, never an interpolation.

Histogram buckets: 4 per doubling, upper edges round(1000 * 2 ** (k / 4)) ns for k = 0, 1, ...
(1 us, 1.19 us, 1.41 us, 1.68 us, 2 us, ...); bucket k holds the latencies in (edge k-1, edge k],
bucket 0 everything up to 1 us (zero and negative latencies too).
"""

from __future__ import annotations

from bisect import bisect_left

PERCENTILES = (50, 90, 99)
_EDGES = [round(1000 * 2 ** (k / 4)) for k in range(160)]  # up to 2**39.75 us: about 10 days


def nearest_rank(p: int, n: int) -> int:
    """1-based rank of the p-th percentile (integer p in 1..100) of n values."""
    if n <= 0:
        raise ValueError("no values")
    return max(1, -(-p * n // 100))


def add_value(dist: dict[int, int], value: int, count: int = 1) -> None:
    dist[value] = dist.get(value, 0) + count


def merge_into(dist: dict[int, int], other: dict[int, int]) -> None:
    if not dist:  # the first merge into a table's row (kwire.analytics.aggregate's cells): a copy, in C
        dist.update(other)
        return
    for value, count in other.items():
        dist[value] = dist.get(value, 0) + count


def percentiles(dist: dict[int, int], ps=PERCENTILES) -> tuple[int, dict[int, int], int | None]:
    """(count, {p: value}, max) of a distribution; the dict is empty and max None when it is."""
    n = sum(dist.values())
    if not n:
        return 0, {}, None
    wanted = sorted((nearest_rank(p, n), p) for p in ps)
    out: dict[int, int] = {}
    seen = 0
    i = 0
    values = sorted(dist)
    for value in values:
        seen += dist[value]
        while i < len(wanted) and wanted[i][0] <= seen:
            out[wanted[i][1]] = value
            i += 1
        if i == len(wanted):
            break
    return n, out, values[-1]


def bucket_of(value_ns: int) -> int:
    return min(bisect_left(_EDGES, value_ns), len(_EDGES) - 1)


def bucket_bounds(k: int) -> tuple[int, int]:
    """(lower, upper) edge of bucket k in ns; bucket 0's lower edge is 0."""
    return (_EDGES[k - 1] if k else 0), _EDGES[k]


def histogram(dist: dict[int, int]) -> dict[int, int]:
    """Bucket index -> count."""
    out: dict[int, int] = {}
    for value, count in dist.items():
        k = bucket_of(value)
        out[k] = out.get(k, 0) + count
    return out
