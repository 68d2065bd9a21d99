"""The end-to-end families of the metrics (issue 47): latency as a histogram, lag in time as a gauge.

From the EndToEndState of every Aggregator of the view, or the view's own (kwire live's Analysis since the
start; kwire.analytics.end_to_end), merged into a fresh one (what it is read from stays untouched), matched as the stats document matches them (kwire.analytics.end_to_end_doc),
so a quantile of `kwire_end_to_end_latency_seconds` falls in the bucket that holds the exact figure of
`kwire stats`:

- kwire_end_to_end_latency_seconds{topic, client_id}: every first delivery of a write to the consumer
  (client id; a share group's under its group name), kwire's latency buckets at the edges the other
  latency histograms use;
- kwire_consumer_time_lag_seconds{topic, partition, client_id}: its latest lag in time;
- kwire_group_committed_time_lag_seconds{group, topic, partition}: the lag in time of the group's latest
  commit of the partition (how old the record at the committed offset was when the answer accepted it).

Labels within the caps (kwire.live.labels): topic and client_id ranked by deliveries, partition by
(topic, partition) pairs (a partition a group committed weighs one); the rest is `other` (the histogram's
counts summed, a lag: the largest). A group keeps the label the group families gave it
(kwire.live.metric_families._groups admits the groups first), else `other`.
"""

from __future__ import annotations

from kwire.native.distribution import bucket_of
from kwire.analytics.end_to_end import EndToEndState
from kwire.analytics.end_to_end_doc import deliveries
from kwire.live.labels import OTHER

NS = 1_000_000_000


def _state(view) -> EndToEndState | None:
    if view.end_to_end is not None:  # kwire live: one Analysis since the start, beside the parts
        states = [view.end_to_end]
    else:
        states = [agg.analysis.end_to_end for agg in view.parts
                  if getattr(getattr(agg, "analysis", None), "end_to_end", None) is not None]
    if not states:
        return None
    merged = EndToEndState()
    for state in states:
        merged.merge(state)
    return merged


def end_to_end_families(make, view, names: dict) -> None:
    """Adds both families to `make` (kwire.live.metric_families._Make)."""
    latency = make.histogram_family("kwire_end_to_end_latency_seconds")
    lag = make.gauge("kwire_consumer_time_lag_seconds")
    state = _state(view)
    if state is None:
        make.gauge("kwire_group_committed_time_lag_seconds")
        return
    rows, commits = [], {}
    for key, found in deliveries(state, names):
        if key is None:
            commits = found["commits"]
        else:
            rows.append((key, found))
    weights_topic: dict = {}
    weights_client: dict = {}
    weights_pair: dict = {}
    for (_, consumer, topic, partition), found in rows:
        weight = len(found["latencies"]) + 1
        weights_topic[topic] = weights_topic.get(topic, 0) + weight
        weights_client[consumer] = weights_client.get(consumer, 0) + weight
        weights_pair[(topic, str(partition))] = weights_pair.get((topic, str(partition)), 0) + weight
    for _, topic, partition in commits:
        weights_topic[topic] = weights_topic.get(topic, 0) + 1
        weights_pair[(topic, str(partition))] = weights_pair.get((topic, str(partition)), 0) + 1
    topics = view.caps.admit("topic", weights_topic)
    clients = view.caps.admit("client_id", weights_client)
    pairs = view.caps.admit("partition", weights_pair)
    _committed(make.gauge("kwire_group_committed_time_lag_seconds"), commits, pairs, view.caps.kept.get("group", ()))
    cells: dict[tuple, list] = {}
    lags: dict[tuple, int] = {}
    for (_, consumer, topic, partition), found in rows:
        t = topic if topic in topics else OTHER
        c = consumer if consumer in clients else OTHER
        cell = cells.setdefault((t, c), [{}, 0])
        for value in found["latencies"]:
            k = bucket_of(value)
            cell[0][k] = cell[0].get(k, 0) + 1
            cell[1] += value
        if found["lag"]:
            pair = (topic, str(partition))
            key = (pair if pair in pairs else (OTHER, OTHER)) + (c,)
            lags[key] = max(lags.get(key, 0), max(found["lag"])[1])
    for key, (counts, total) in sorted(cells.items()):
        if counts:
            latency(key, counts, total / NS)
    for key, value in sorted(lags.items()):
        lag(key, value / NS)


def _committed(gauge, commits: dict, pairs: set, groups) -> None:
    """The latest sampled lag of each (group, topic, partition)'s commits (kwire.analytics.end_to_end_doc's
    _commit_lags), folded into `other` past the caps (the largest)."""
    lags: dict[tuple, int] = {}
    for (group, topic, partition), samples in commits.items():
        sampled = [lag for _, _, lag in samples if lag is not None]
        if not sampled:
            continue
        pair = (topic, str(partition))
        key = (group if group in groups else OTHER,) + (pair if pair in pairs else (OTHER, OTHER))
        lags[key] = max(lags.get(key, 0), sampled[-1])
    for key, value in sorted(lags.items()):
        gauge(key, value / NS)
