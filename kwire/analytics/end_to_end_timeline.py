"""End-to-end latency and lag in time over the capture's time: the `timeline` of the `end_to_end` section.

Made with the rest of the section (kwire.analytics.end_to_end_doc), from what its matching found, so any
split of the traffic gives the same series:

- `latency`: per consumer (all its topics and partitions), the largest end-to-end latency of the writes
  first delivered to it in each bucket (by the time of the answer that delivered them);
- `time_lag`: per consumer, the largest lag-in-time sample of its Fetch answers in each bucket; per group
  (kind "commits"), the largest of its commits'.

Buckets: a power of two seconds wide, at least one second, at most BUCKETS of them over the samples'
times (as the stats document's own timeline); a bucket without a sample is null. At most SERIES series of
each (the largest maxima first, then by name); the document says how many there were. Values in ms,
rounded to the µs.
"""

from __future__ import annotations

NS = 1_000_000_000
BUCKETS = 120
SERIES = 10


def _frame(times: list[int]) -> tuple[int, int, int]:
    """(width s, first bucket index, buckets) over `times` (ns)."""
    start_s, end_s = min(times) // NS, max(times) // NS
    width = 1
    while end_s // width - start_s // width + 1 > BUCKETS:
        width *= 2
    return width, start_s // width, end_s // width - start_s // width + 1


def _binned(samples: list[tuple[int, int]], width: int, first: int, count: int) -> list:
    """The largest value (ns -> ms) per bucket of (ts ns, value ns) samples, None where none fell."""
    cells: list = [None] * count
    for ts, value in samples:
        i = ts // NS // width - first
        if 0 <= i < count and (cells[i] is None or value > cells[i]):
            cells[i] = value
    return [None if v is None else round(v / 1e6, 3) for v in cells]


def _ranked(series: dict[tuple, list], width: int, first: int, count: int) -> list[dict]:
    ordered = sorted((-max(samples, key=lambda s: s[1])[1], key) for key, samples in series.items())
    return [{"kind": kind, "name": name, "values_ms": _binned(series[(kind, name)], width, first, count)}
            for _, (kind, name) in ordered[:SERIES]]


def timeline(found: list[tuple[tuple, dict]], commits: dict) -> dict:
    """found: [((kind, consumer, topic, partition), its matching)] (kwire.analytics.end_to_end_doc.deliveries);
    commits: {(group, topic, partition): [(ts, offset, lag or None)]}."""
    latency: dict[tuple, list] = {}
    lag: dict[tuple, list] = {}
    for (kind, consumer, _, _), one in found:
        if one["latencies"]:
            latency.setdefault((kind, consumer), []).extend(zip(one["delivered_at"], one["latencies"]))
        if one["lag"]:
            lag.setdefault((kind, consumer), []).extend(one["lag"])
    for (group, _, _), samples in commits.items():
        sampled = [(ts, value) for ts, _, value in samples if value is not None]
        if sampled:
            lag.setdefault(("commits", group), []).extend(sampled)
    times = [ts for samples in (*latency.values(), *lag.values()) for ts, _ in samples]
    if not times:
        return {"start_ts_ns": None, "bucket_ms": 1000, "latency": [], "time_lag": [],
                "series": {"cap": SERIES, "latency": 0, "time_lag": 0}, "bucket_s": 1, "start": None}
    width, first, count = _frame(times)
    return {"start_ts_ns": first * width * NS, "bucket_ms": width * 1000,
            "latency": _ranked(latency, width, first, count), "time_lag": _ranked(lag, width, first, count),
            "series": {"cap": SERIES, "latency": len(latency), "time_lag": len(lag)},
            "bucket_s": width, "start": first * width}  # (the last two deprecated: s, epoch s)
