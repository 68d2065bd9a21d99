"""End-to-end latency and lag in time: the stats document's `end_to_end` section, made at its end.

From the writes and deliveries kwire.analytics.end_to_end kept (all of them, sorted), per partition:

- a write is the offsets [base offset, base offset + records - 1] of a Produce partition, at the
  Produce request's capture time (the first write of an offset counts);
- a delivery is an answer (its capture time) carrying whole batches [first, last] to a consumer (an answer
  seen on both legs of a relay, a TLS terminator or a proxy, counts once, at the leg nearer the consumer: _own).
  Per consumer and partition, in time order, with `high` the highest offset delivered so far: a
  write one of whose offsets above `high` the answer carries is delivered for the first time: its
  latency is the answer's time minus the write's; a write the answer carries but whose offsets are
  all at or below `high` is a redelivery (a consumer that went back, restarted, was handed the
  partition again), counted, never a latency. A share group's acquisitions count once per write
  (DeliveryCount 1); those with DeliveryCount > 1 are redeliveries. An answer walks at most as many
  writes as it carried batches (a hostile one claiming every offset costs no more than it carried).
  Offsets delivered that no write kept covers (written before the capture began, by a Produce not
  seen, or folded) are counted as `unmatched` answers.
- lag in time, at each answer to a Fetch (empty ones too): the consumer's position is its fetch
  offset, or past what the answer delivered; the lag is the answer's time minus the write time of
  first write at or past that position, 0 when none was written before the answer (caught up), not sampled when
  the offset is before every write kept. `last` is the latest sample, `max` the largest.
- lag in time of a group's commits, at each commit an answer accepted: the answer's time minus the write
  time of the first write at or past the committed offset (the oldest record the group has not yet
  committed past), 0 when none was written before the answer, not sampled when the offset is before
  every write kept; per (group, topic, partition), `last` and `max` as for fetches.
- the producer's clock offset: the Produce request's capture time minus its first batch's
  CreateTime (the producer's clock), per producer, over its writes to the partitions some consumer
  read: beside the latency, never in it.

Percentiles: nearest rank (kwire.native.distribution). Times in ms, rounded to the µs. The same figures
over the capture's time: kwire.analytics.end_to_end_timeline.
"""

from __future__ import annotations

from bisect import bisect_right

from kwire.native.distribution import nearest_rank
from kwire.analytics import end_to_end as caps
from kwire.analytics.end_to_end_timeline import timeline
from kwire.analytics.relay import RELAY_WINDOW_NS

ROWS_CAP = 4096  # consumer rows and partition rows in the document (the smallest keys; the rest counted)


def _ms(ns) -> float | None:
    return None if ns is None else round(ns / 1e6, 3)


def _spread(values: list) -> dict:
    values.sort()
    n = len(values)
    if not n:
        return {"p50": None, "p90": None, "p99": None, "max": None}
    return {f"p{p}": _ms(values[nearest_rank(p, n) - 1]) for p in (50, 90, 99)} | {"max": _ms(values[-1])}


def _written(state, names: dict, wanted: set) -> tuple[dict, dict]:
    """({(topic, partition): (bases, lasts, times)}, {producer: [clock offsets ns]}) of the partitions
    in `wanted`, those some consumer read (the rest is never looked at, nor unpacked)."""
    by_partition: dict[tuple, list] = {}
    clocks: dict[str, list] = {}
    topics = {topic for topic, _ in wanted}
    for topic, producer, (ts, base, records, create, partition) in state.write_items(topics, names):
        key = (names.get(topic, topic), partition)
        if key not in wanted:
            continue
        items = by_partition.get(key)
        if items is None:
            items = by_partition[key] = []
        items.append((base, ts, records))
        if create >= 0:
            sample = clocks.get(producer)
            if sample is None:
                sample = clocks[producer] = []
            sample.append(ts - create * 1_000_000)
    out = {}
    for key, items in by_partition.items():
        items.sort()
        bases, lasts, times = [], [], []
        for base, ts, records in items:
            if lasts and base <= lasts[-1]:  # an offset written twice (a hostile answer): the first write counts
                continue
            bases.append(base)
            lasts.append(base + records - 1)
            times.append(ts)
        out[key] = (bases, lasts, times)
    return out, clocks


def _deliver(partition: tuple, events: list, kind: str, found: dict) -> None:
    """Walks one consumer's answers for one partition, in time order, into `found`: latencies (ns),
    redeliveries, unmatched answers, lag samples (ts, ns)."""
    bases, lasts, times = partition
    high = -1
    share_seen: set = set()
    for ts, offset, first, last, batches, redelivered in events:
        if batches:
            i = bisect_right(bases, first) - 1
            if i < 0 or lasts[i] < first:
                i += 1
            matched = 0
            while i < len(bases) and bases[i] <= last and matched < batches:
                matched += 1
                if kind == "share":
                    if redelivered or i in share_seen:
                        found["redeliveries"] += 1
                    else:
                        share_seen.add(i)
                        found["latencies"].append(ts - times[i])
                        found["bases"].append(bases[i])
                        found["delivered_at"].append(ts)
                elif lasts[i] <= high:
                    found["redeliveries"] += 1
                elif bases[i] > high:  # a write delivered on in a later answer counts at its first
                    found["latencies"].append(ts - times[i])
                    found["bases"].append(bases[i])
                    found["delivered_at"].append(ts)
                i += 1
            if not matched and last > high:
                found["unmatched"] += 1
            if kind != "share" and last > high:
                high = last
        if kind == "share":
            continue
        position = max(offset, high + 1)  # _lag, inline: once per answer
        if bases and position >= bases[0]:
            j = bisect_right(lasts, position - 1)
            found["lag"].append((ts, ts - times[j] if j < len(bases) and times[j] < ts else 0))


def _own(events: list) -> list:
    """The events of one consumer and partition, in time order, as (ts, offset, first, last, batches, redelivered),
    relayed copies left out: an answer that delivered records with the correlation id, fetch offset and offsets of
    another within RELAY_WINDOW_NS of it, seen at another broker address, is one answer seen on both legs of a relay
    (a TLS terminator or a proxy, both legs in the capture: the broker's leg first); the later, the leg nearer the
    consumer, is kept."""
    events.sort()
    drop = set()
    seen: dict[tuple, tuple] = {}
    for i, (ts, offset, first, last, batches, _, corr, leg) in enumerate(events):
        if not batches or corr < 0:
            continue
        key = (corr, offset, first, last)
        was = seen.get(key)
        if was is not None and was[2] != leg and ts - was[1] <= RELAY_WINDOW_NS:
            drop.add(was[0])
        seen[key] = (i, ts, leg)
    return [e[:6] for i, e in enumerate(events) if i not in drop]


def _lag(partition: tuple, position: int, ts: int) -> int | None:
    """How old at `ts` the oldest record at or past `position` is: `ts` minus the time of the first write
    whose last offset is at or past it, 0 when none was written before `ts`, None when `position` is
    before every write kept."""
    bases, lasts, times = partition
    if not bases or position < bases[0]:
        return None
    j = bisect_right(lasts, position - 1)
    return ts - times[j] if j < len(bases) and times[j] < ts else 0


def _commit_lags(commits: list, partitions: dict, names: dict) -> dict:
    """{(group, topic, partition): [(ts, offset, lag ns or None)]} of the commits, in time order."""
    out: dict[tuple, list] = {}
    for _, ts, group, topic, partition, offset in commits:
        name = names.get(topic, topic)
        written = partitions.get((name, partition))
        lag = _lag(written, offset, ts) if written is not None else None
        out.setdefault((group, name, partition), []).append((ts, offset, lag))
    return out


def deliveries(state, names: dict):
    """Per (kind, consumer, topic, partition), in order, what its answers did: {"latencies": ns of each
    first delivery, "bases": the base offset of each such write, "delivered_at": the time of the answer that
    delivered it, "redeliveries", "unmatched", "lag":
    [(ts, lag ns)]}; last, (None, {"clocks": the producers' clock offsets {producer: [ns]}, "commits":
    the groups' commits (_commit_lags)})."""
    idle, commits = state.settled()
    streams: dict[tuple, list] = {}
    for kind, consumer, topic, (ts, partition, offset, first, last, batches, redelivered, corr, leg) in state.read_rows():
        streams.setdefault((kind, consumer, names.get(topic, topic), partition), []).append(
            (ts, offset, first, last, batches, redelivered, corr, leg))
    for (kind, consumer, topic, partition, offset), (first_ts, last_ts) in idle.items():
        events = streams.setdefault((kind, consumer, names.get(topic, topic), partition), [])
        events.append((first_ts, offset, -1, -1, 0, False, -1, 0))
        if last_ts != first_ts:
            events.append((last_ts, offset, -1, -1, 0, False, -1, 0))
    wanted = {(topic, partition) for _, _, topic, partition in streams}
    wanted.update((names.get(c[3], c[3]), c[4]) for c in commits)
    partitions, clocks = _written(state, names, wanted)
    for key in sorted(streams):
        events = _own(streams[key])
        found = {"latencies": [], "bases": [], "delivered_at": [], "redeliveries": 0, "unmatched": 0, "lag": []}
        written = partitions.get((key[2], key[3]))
        if written is not None:
            _deliver(written, events, key[0], found)
        else:
            found["unmatched"] = sum(1 for e in events if e[4])
        yield key, found
    yield None, {"clocks": clocks, "commits": _commit_lags(commits, partitions, names)}


def document(state, names: dict) -> dict:
    clocks: dict = {}
    consumers: dict[tuple, dict] = {}
    rows = []
    commits: dict = {}
    matched = []
    for key, found in deliveries(state, names):
        if key is None:
            clocks, commits = found["clocks"], found["commits"]
            continue
        matched.append((key, found))
        kind, consumer, topic, partition = key
        group = consumers.setdefault((topic, kind, consumer), {"latencies": [], "redeliveries": 0, "unmatched": 0,
                                                               "partitions": 0, "lag_max": None, "deliveries": 0})
        group["latencies"] += found["latencies"]
        group["redeliveries"] += found["redeliveries"]
        group["unmatched"] += found["unmatched"]
        group["partitions"] += 1
        lag = found["lag"]
        lag_max = max(v for _, v in lag) if lag else None
        if lag_max is not None and (group["lag_max"] is None or lag_max > group["lag_max"]):
            group["lag_max"] = lag_max
        rows.append({"topic": topic, "partition": partition, "kind": kind, "consumer": consumer,
                     "deliveries": len(found["latencies"]), "redeliveries": found["redeliveries"],
                     "latency_ms": _spread(list(found["latencies"])),
                     "time_lag_ms": {"last": _ms(max(lag)[1]) if lag else None, "max": _ms(lag_max),
                                     "samples": len(lag)}})
    table = []
    for (topic, kind, consumer), group in sorted(consumers.items()):
        table.append({"topic": topic, "kind": kind, "consumer": consumer, "partitions": group["partitions"],
                      "deliveries": len(group["latencies"]), "redeliveries": group["redeliveries"],
                      "unmatched": group["unmatched"], "latency_ms": _spread(group["latencies"]),
                      "time_lag_max_ms": _ms(group["lag_max"])})
    producers = {producer: {"writes": len(values)} | {"clock_offset_ms": _spread(values)}
                 for producer, values in sorted(clocks.items()) if values}
    committed = [_commit_row(key, samples) for key, samples in sorted(commits.items())]
    return {
        "consumers": table[:ROWS_CAP],
        "partitions": rows[:ROWS_CAP],
        "commits": committed[:ROWS_CAP],
        "timeline": timeline(matched, commits),
        "producers": dict(list(producers.items())[:ROWS_CAP]),
        "bounds": {"writes": {"seen": state.writes_seen, "kept": state.write_count, "cap": caps.WRITES_CAP},
                   "reads": {"seen": state.reads_seen, "kept": state.reads.count, "cap": caps.READS_CAP},
                   "idle": {"kept": len(state.idle), "cap": caps.IDLE_CAP, "folded": state.idle_folded},
                   "commits": {"seen": state.commits_seen, "kept": len(state.commits), "cap": caps.COMMITS_CAP},
                   "rows": {"cap": ROWS_CAP, "consumers": len(table), "partitions": len(rows),
                            "commits": len(committed), "producers": len(producers)}},
    }


def _commit_row(key: tuple, samples: list) -> dict:
    group, topic, partition = key
    lags = [lag for _, _, lag in samples if lag is not None]
    return {"group": group, "topic": topic, "partition": partition, "commits": len(samples),
            "offset_last": samples[-1][1],
            "time_lag_ms": {"last": _ms(lags[-1]) if lags else None, "max": _ms(max(lags)) if lags else None,
                            "samples": len(lags)}}
