"""Recent traffic in one-second Aggregators, and everything older folded into one without latencies.

Built on kwire.analytics.Aggregator, so every figure the dashboard shows has the definition
`kwire stats` gives it. The dashboard needs two views that a single Aggregator cannot give:
- the last `seconds` seconds (rates, p50/p99 latency, slowest exchanges): one Aggregator per
  second of capture time, merged on demand (`recent()`);
- since the start (counts, errors, bytes, lag, share groups): `retired`, where each second is
  merged once it leaves the window, latency distributions dropped.
The group and finding analysis (kwire.analytics.analysis) is only ever read since the start, so it
is one Analysis fed every exchange (`analysis`), not one per second merged again at every look:
merging is exact, so that gives the state the seconds' Analyses would merge to, without the
merges (a second's batches alone are tens of thousands of entries at production rates). The
seconds' Aggregators carry an empty one.

Memory stays bounded in a long live session: latency distributions (one entry per distinct latency,
so about one per exchange with nanosecond timestamps) exist only for the window; `retired` keeps
only what grows with distinct keys (apis, clients, partitions); the sparkline history is per second
per api (exchanges, p99) for `history` seconds.

An exchange belongs to the second it completed in (its response's capture time, else its
request's): responses come late, the window only moves forward. One that completed before the
window's first second (unanswered requests reported when their connection closes) is counted in
that first second instead.
"""

from __future__ import annotations

from collections import deque

from kwire.analytics import Aggregator
from kwire.analytics.analysis import Analysis
from kwire.analytics.figures import Figures
from kwire.native.distribution import percentiles

NS = 1_000_000_000


def drop_latencies(agg: Aggregator) -> None:
    """Empty every latency distribution of `agg` (its counts, bytes, errors... stay)."""
    agg.total.latency.clear()
    for table in (agg.by_api_version, agg.by_client_id, agg.by_broker):
        for figures in table.values():
            figures.latency.clear()


def per_api(*aggs: Aggregator) -> dict[str, Figures]:
    """The api-version figures of `aggs` merged per api (as kwire stats reports apis)."""
    out: dict[str, Figures] = {}
    for agg in aggs:
        for (api, _version), figures in agg.by_api_version.items():
            merged = out.get(api)
            if merged is None:
                merged = out[api] = Figures()
            merged.merge(figures)
    return out


def per_broker(*aggs: Aggregator) -> dict[str, Figures]:
    """The broker figures of `aggs` merged per broker (the folded row under its "(others)" key)."""
    out: dict[str, Figures] = {}
    for agg in aggs:
        for broker, figures in agg.by_broker.items():
            merged = out.get(broker)
            if merged is None:
                merged = out[broker] = Figures()
            merged.merge(figures)
    return out


def merged_names(parts) -> dict[str, str]:
    """Topic id -> name over Aggregators (the smallest name when several name an id)."""
    names: dict[str, str] = {}
    for agg in parts:
        for tid, name in agg.names.items():
            if tid not in names or name < names[tid]:
                names[tid] = name
    return names


class _Second:
    __slots__ = ("agg", "adds", "summary", "summary_adds")

    def __init__(self) -> None:
        self.agg = Aggregator()
        self.adds = 0
        self.summary: dict[str, tuple[int, int | None]] = {}
        self.summary_adds = -1

    def per_api_summary(self) -> dict[str, tuple[int, int | None]]:
        """api -> (exchanges, p99 latency ns or None); cached until the next add."""
        if self.summary_adds != self.adds:
            summary = {}
            for api, figures in per_api(self.agg).items():
                _, ps, _ = percentiles(figures.latency, (99,))
                summary[api] = (figures.exchanges, ps.get(99))
            self.summary = summary
            self.summary_adds = self.adds
        return self.summary


class Window:
    def __init__(self, seconds: int = 10, history: int = 60):
        self.seconds = max(1, int(seconds))
        self.history = max(self.seconds, int(history))
        self.live: dict[int, _Second] = {}   # second -> its Aggregator, for the last `seconds`
        self.retired = Aggregator()          # everything older, latencies dropped
        self.analysis = Analysis()           # groups and findings of every exchange since the start
        self.past: deque[tuple[int, dict]] = deque()  # (second, per-api summary) of retired seconds
        self.newest = None                   # the latest second anything completed in

    def add(self, row: dict, partitions=(), names=(), observed=()) -> None:
        """One exchange's facts (kwire.native.exchange_facts rows, kwire.analytics.observe observations)."""
        done = row["response_ts_ns"] or row["ts_ns"]
        second = done // NS
        newest = self.newest
        if newest is None or second > newest:
            self.newest = newest = second
            self.advance(second)
        oldest = newest - self.seconds + 1
        if second < oldest:
            second = oldest
        bucket = self.live.get(second)
        if bucket is None:
            bucket = self.live[second] = _Second()
        bucket.agg.add_figures(row, partitions, names)
        self.analysis.add(row, observed)
        bucket.adds += 1

    def advance(self, now_second: int) -> None:
        """Retire the seconds that have left the window ending at `now_second`."""
        oldest = now_second - self.seconds + 1
        for second in sorted(s for s in self.live if s < oldest):
            bucket = self.live.pop(second)
            self.past.append((second, bucket.per_api_summary()))
            drop_latencies(bucket.agg)  # before the merge: the retired keeps none, why merge them
            self.retired.merge(bucket.agg)
        while self.past and self.past[0][0] <= now_second - self.history:
            self.past.popleft()

    def parts(self, now_second: int) -> list[Aggregator]:
        """The per-second Aggregators of the window ending at `now_second`, oldest first (shared,
        not copies: read them, do not change them). Merging only what a view needs is cheaper than
        `recent()` when the window holds many exchanges."""
        self.advance(now_second)
        return [self.live[s].agg for s in sorted(self.live) if s <= now_second]

    def live_parts(self) -> list[Aggregator]:
        """Every second's Aggregator still in the window, oldest first (shared: read only)."""
        return [self.live[s].agg for s in sorted(self.live)]

    def recent(self, now_second: int) -> Aggregator:
        """A new Aggregator of the window ending at `now_second`."""
        agg = Aggregator()
        for part in self.parts(now_second):
            agg.merge(part)
        return agg

    def series(self, now_second: int, length: int) -> tuple[list[int], dict[str, list]]:
        """The last `length` seconds up to `now_second` (the current one, partial, last):
        (seconds, api -> [(exchanges, p99 ns or None)] per second)."""
        first = now_second - length + 1
        seconds = list(range(first, now_second + 1))
        index = {s: i for i, s in enumerate(seconds)}
        out: dict[str, list] = {}
        sources = [(s, summary) for s, summary in self.past if s in index]
        sources += [(s, b.per_api_summary()) for s, b in self.live.items() if s in index]
        for second, summary in sources:
            i = index[second]
            for api, value in summary.items():
                cells = out.get(api)
                if cells is None:
                    cells = out[api] = [(0, None)] * length
                cells[i] = value
        return seconds, out
