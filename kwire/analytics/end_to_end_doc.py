"""End-to-end latency and lag in time: the stats document's `end_to_end` section, made at its end.

From the writes and deliveries kwire.analytics.end_to_end kept (all of them, sorted), per partition:

- a write is the offsets [base offset, base offset + records - 1] of a Produce partition, at the
  Produce request's capture time (the first write of an offset counts);
- a delivery is an answer (its capture time) carrying whole batches [first, last] to a consumer.
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
- the producer's clock offset: the Produce request's capture time minus its first batch's
  CreateTime (the producer's clock), per producer, over its writes to the partitions some consumer
  read: beside the latency, never in it.

Percentiles: nearest rank (kwire.analytics.distribution). Times in ms, rounded to the µs.
"""

from __future__ import annotations

from bisect import bisect_right

from kwire.analytics.distribution import nearest_rank
from kwire.analytics import end_to_end as caps

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
                elif lasts[i] <= high:
                    found["redeliveries"] += 1
                elif bases[i] > high:  # a write delivered on in a later answer counts at its first
                    found["latencies"].append(ts - times[i])
                    found["bases"].append(bases[i])
                i += 1
            if not matched and last > high:
                found["unmatched"] += 1
            if kind != "share" and last > high:
                high = last
        if kind == "share":
            continue
        position = max(offset, high + 1)
        j = bisect_right(lasts, position - 1)  # the first write whose last offset is at or past position
        if bases and position >= bases[0]:
            lag = ts - times[j] if j < len(bases) and times[j] < ts else 0
            found["lag"].append((ts, lag))


def deliveries(state, names: dict):
    """Per (kind, consumer, topic, partition), in order, what its answers did: {"latencies": ns of each
    first delivery, "bases": the base offset of each such write, "redeliveries", "unmatched", "lag":
    [(ts, lag ns)]}; and the producers' clock offsets, last, as (None, {producer: [ns]})."""
    idle = state.settled()
    streams: dict[tuple, list] = {}
    for kind, consumer, topic, (ts, partition, offset, first, last, batches, redelivered) in state.read_rows():
        streams.setdefault((kind, consumer, names.get(topic, topic), partition), []).append(
            (ts, offset, first, last, batches, redelivered))
    for (kind, consumer, topic, partition, offset), (first_ts, last_ts) in idle.items():
        events = streams.setdefault((kind, consumer, names.get(topic, topic), partition), [])
        events.append((first_ts, offset, -1, -1, 0, False))
        if last_ts != first_ts:
            events.append((last_ts, offset, -1, -1, 0, False))
    wanted = {(topic, partition) for _, _, topic, partition in streams}
    partitions, clocks = _written(state, names, wanted)
    for key in sorted(streams):
        events = streams[key]
        events.sort()
        found = {"latencies": [], "bases": [], "redeliveries": 0, "unmatched": 0, "lag": []}
        written = partitions.get((key[2], key[3]))
        if written is not None:
            _deliver(written, events, key[0], found)
        else:
            found["unmatched"] = sum(1 for e in events if e[4])
        yield key, found
    yield None, clocks


def document(state, names: dict) -> dict:
    clocks: dict = {}
    consumers: dict[tuple, dict] = {}
    rows = []
    for key, found in deliveries(state, names):
        if key is None:
            clocks = found
            continue
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
    return {
        "consumers": table[:ROWS_CAP],
        "partitions": rows[:ROWS_CAP],
        "producers": dict(list(producers.items())[:ROWS_CAP]),
        "bounds": {"writes": {"seen": state.writes_seen, "kept": state.write_count, "cap": caps.WRITES_CAP},
                   "reads": {"seen": state.reads_seen, "kept": state.reads.count, "cap": caps.READS_CAP},
                   "idle": {"kept": len(state.idle), "cap": caps.IDLE_CAP, "folded": state.idle_folded},
                   "rows": {"cap": ROWS_CAP, "consumers": len(table), "partitions": len(rows),
                            "producers": len(producers)}},
    }
