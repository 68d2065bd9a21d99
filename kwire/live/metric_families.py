"""kwire's Prometheus metric families, made from the figures `kwire stats` and the dashboard share.

`families(view)` turns a `MetricsView` - the MetricsState of every exchange since the start
(kwire.live.metrics_state), the Aggregators that hold partitions, share groups and topic names
(the live Window's retired one and its seconds, or `kwire stats`' one), the findings and groups
documents of kwire.analytics, and the capture's health - into prometheus_client metric families.
Names follow Prometheus' conventions: the `kwire_` prefix, base units (seconds, bytes), `_total` on
counters. Each family is declared once, in kwire.vocabulary.METRICS (its type, unit, labels and HELP text),
and listed from there in docs/vocabulary.md; docs/metrics.md says what each means to an operator.

Latency histograms use kwire's own latency buckets (kwire.native.distribution: 4 per doubling),
one edge in four: `le` from 45 us to 47 s doubling each time, so the histogram's buckets are
unions of the buckets `kwire stats` draws and a quantile of it falls in the bucket that holds the
exact figure of `stats`.

Labels from the wire are capped (kwire.live.labels): client ids, brokers, apis, versions and error
names as exchanges are counted; topics, partitions and groups here, when the families are made,
from the tables that hold them. Values over a cap are summed into `other` (lag: the largest). Every
label value is written as kwire.safe_text.label_safe makes it (no control or bidi character raw;
distinct values stay distinct).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.utils import floatToGoString

from kwire.native.distribution import bucket_bounds
from kwire.analytics.figures import PartitionFigures
from kwire.analytics.findings import seconds
from kwire.live.end_to_end_families import end_to_end_families
from kwire.live.labels import OTHER, LabelCaps
from kwire.live.metrics_state import MetricsState
from kwire.live.window import merged_names
from kwire.safe_text import label_safe
from kwire.vocabulary import ACK_TYPES as ACKNOWLEDGE_TYPES, METRICS

NS = 1_000_000_000
HISTOGRAM_BUCKETS = tuple(range(22, 103, 4))  # kwire bucket indexes whose upper edges are the `le`s
ACK_TYPES = tuple(name.lower() for name in ACKNOWLEDGE_TYPES.values())  # ack_<type> of the partition rows
FRAME_LABELS = ("topic", "partition", "group")


@dataclass
class MetricsView:
    metrics: MetricsState
    caps: LabelCaps
    parts: list = field(default_factory=list)        # Aggregators: partitions, share groups, names
    findings: list = field(default_factory=list)     # kwire.analytics.findings documents
    groups: dict = field(default_factory=dict)       # kwire.analytics.groups document
    health: dict = field(default_factory=dict)       # packets, bytes, drops ... (kwire.live feeders)
    report: dict = field(default_factory=dict)       # TCP, Kafka and TLS counters (kwire.live.report)
    timestamp: float | None = None                   # seconds: put on every sample (a capture's end)
    start_s: float | None = None                     # the traffic's first and last moments
    end_s: float | None = None
    end_to_end: object = None                        # the EndToEndState of every exchange, when not the parts'


class _Make:
    """Families with the view's timestamp on every sample, each as kwire.vocabulary declares it (its type, HELP
    text, labels and unit: the one table of every name kwire writes)."""

    def __init__(self, timestamp: float | None):
        self.timestamp = timestamp
        self.out: list = []

    def _family(self, name: str, kind: str, make):
        metric = METRICS[name]
        assert metric.type == kind, (name, kind)
        family = make(name, metric.help, labels=list(metric.labels), unit=metric.unit)
        self.out.append(family)
        return family

    def counter(self, name: str):
        family = self._family(name, "counter", CounterMetricFamily)
        return lambda values, value: family.add_metric([label_safe(v) for v in values], value,
                                                         timestamp=self.timestamp)

    def gauge(self, name: str):
        family = self._family(name, "gauge", GaugeMetricFamily)
        return lambda values, value: family.add_metric([label_safe(v) for v in values], value,
                                                         timestamp=self.timestamp)

    def histogram_family(self, name: str):
        """A histogram family's adder: (label values, kwire bucket counts, sum in seconds)."""
        family = self._family(name, "histogram", HistogramMetricFamily)
        return lambda values, counts, total: family.add_metric([label_safe(v) for v in values], _buckets(counts),
                                                               total, timestamp=self.timestamp)

    def histogram(self, name: str, cells: dict, at: int) -> None:
        family = self._family(name, "histogram", HistogramMetricFamily)
        for key, cell in _ordered(cells):
            counts = cell[at]
            if counts:
                family.add_metric([label_safe(v) for v in key], _buckets(counts), cell[at + 1] / NS,
                                  timestamp=self.timestamp)


def epoch_seconds(ns: int | None) -> float | None:
    """Epoch seconds of a capture time in ns, as the stats document's `span` gives them."""
    return None if ns is None else round(ns / 1e9, 9)


def _buckets(counts: dict[int, int]) -> list[tuple[str, float]]:
    """Cumulative (le, count) pairs of kwire bucket counts, at HISTOGRAM_BUCKETS' edges and +Inf."""
    out, seen = [], 0
    ordered = sorted(counts.items())
    i = 0
    for k in HISTOGRAM_BUCKETS:
        while i < len(ordered) and ordered[i][0] <= k:
            seen += ordered[i][1]
            i += 1
        out.append((floatToGoString(bucket_bounds(k)[1] / NS), seen))
    out.append(("+Inf", sum(counts.values())))
    return out


def families(view: MetricsView) -> list:
    make = _Make(view.timestamp)
    _exchanges(make, view.metrics)
    _latency(make, view.metrics)
    names = merged_names(view.parts)
    folded = {}
    folded.update(_partitions(make, view, names))
    folded.update(_groups(make, view))
    end_to_end_families(make, view, names)
    _findings(make, view.findings)
    _health(make, view)
    _labels(make, view.caps, folded)
    return make.out


def _ordered(table: dict) -> list:
    """A table's items in the order of their keys as text (versions are ints, `other` is not)."""
    return sorted(table.items(), key=lambda kv: tuple(map(str, kv[0])))


def _sum_by(cells: dict, labels: tuple, keep: tuple, column: int) -> dict:
    index = [labels.index(name) for name in keep]
    out: dict[tuple, int] = {}
    for key, cell in cells.items():
        k = tuple(key[i] for i in index)
        out[k] = out.get(k, 0) + cell[column]
    return out


def _exchanges(make: _Make, state: MetricsState) -> None:
    labels = METRICS["kwire_exchanges"].labels  # the order of MetricsState.exchanges' keys
    for column, name in ((0, "kwire_exchanges"), (5, "kwire_request_bytes"), (6, "kwire_response_bytes")):
        add = make.counter(name)
        for key, cell in _ordered(state.exchanges):
            add(key, cell[column])
    for column, name in ((1, "kwire_failed_exchanges"), (2, "kwire_unanswered_requests"),
                         (3, "kwire_orphan_responses"), (4, "kwire_decode_errors")):
        add = make.counter(name)
        for key, n in _ordered(_sum_by(state.exchanges, labels, METRICS[name].labels, column)):
            add(key, n)
    add = make.counter("kwire_errors")
    for key, n in _ordered(state.errors):
        add(key, n)


def _latency(make: _Make, state: MetricsState) -> None:
    make.histogram("kwire_request_latency_seconds", state.latency, 0)
    make.histogram("kwire_long_poll_wait_seconds", state.latency, 2)
    throttle = make.counter("kwire_throttle_time_seconds")
    throttled = make.counter("kwire_throttled_responses")
    for key, cell in _ordered(state.latency):
        if cell[5]:
            throttle(key, cell[4] / 1000)
            throttled(key, cell[5])


def _partitions(make: _Make, view: MetricsView, names: dict) -> dict[str, int]:
    merged: dict[tuple, PartitionFigures] = {}
    for agg in view.parts:
        for (topic, partition), figures in agg.partitions.items():
            key = (names.get(topic, topic), str(partition))
            have = merged.get(key)
            if have is None:
                have = merged[key] = PartitionFigures()
            have.merge(figures)
    topic_weights: dict[str, int] = {}
    for (topic, _), f in merged.items():
        topic_weights[topic] = topic_weights.get(topic, 0) + f.fetches + f.produces + 1
    topics = view.caps.admit("topic", topic_weights)
    pairs = view.caps.admit("partition", {key: f.fetches + f.produces + 1 for key, f in merged.items()})
    lag: dict[tuple, list] = {}
    by_topic: dict[str, list[int]] = {}
    for key, f in merged.items():
        topic = key[0] if key[0] in topics else OTHER
        cell = by_topic.setdefault(topic, [0, 0, 0, 0])
        cell[0] += f.fetch_bytes
        cell[1] += f.fetch_records
        cell[2] += f.produce_bytes
        cell[3] += f.produce_records
        if f.lag_last is not None:
            pkey = key if key in pairs else (OTHER, OTHER)
            have = lag.setdefault(pkey, [f.lag_last[1], f.lag_max])
            have[0], have[1] = max(have[0], f.lag_last[1]), max(have[1], f.lag_max)
    for i, name in enumerate(("kwire_fetched_bytes", "kwire_fetched_records", "kwire_produced_bytes",
                              "kwire_produced_records")):
        add = make.counter(name)
        for topic, cell in sorted(by_topic.items()):
            add((topic,), cell[i])
    last = make.gauge("kwire_consumer_lag")
    top = make.gauge("kwire_consumer_lag_max")
    for key, (value, largest) in sorted(lag.items()):
        last(key, value)
        top(key, largest)
    return {"topic": len(topic_weights.keys() - topics), "partition": len(merged.keys() - pairs)}


def _groups(make: _Make, view: MetricsView) -> dict[str, int]:
    share: dict[str, list[int]] = {}
    for agg in view.parts:
        for group, f in agg.share_groups.items():
            cell = share.setdefault(group, [0, 0, 0, 0, 0, 0, 0])
            cell[0] += f.acquired
            cell[1] += f.redelivered
            for i, ack in enumerate(ACK_TYPES):
                cell[2 + i] += f.acks["ack_" + ack]
    expiries: dict[str, int] = {}
    for finding in view.findings:
        if finding["kind"] == "share_redelivery":
            group = finding.get("group_id")
            expiries[group] = expiries.get(group, 0) + (finding.get("lock_expired") or 0)
    weights = dict.fromkeys(view.groups, 1)
    for group, cell in share.items():
        weights[group] = weights.get(group, 0) + cell[0] + 1
    for group in expiries:
        weights.setdefault(group, 1)
    kept = view.caps.admit("group", weights)

    def label(group) -> str:
        return group if group in kept else OTHER

    _share(make, share, expiries, label)
    _group_state(make, view.groups, label)
    return {"group": len(weights.keys() - kept)}


def _share(make: _Make, share: dict, expiries: dict, label) -> None:
    folded: dict[str, list[int]] = {}
    for group, cell in share.items():
        into = folded.setdefault(label(group), [0] * len(cell))
        for i, n in enumerate(cell):
            into[i] += n
    acquired = make.counter("kwire_share_acquired_records")
    redelivered = make.counter("kwire_share_redelivered_records")
    acks = make.counter("kwire_share_acknowledged_records")
    for group, cell in sorted(folded.items()):
        acquired((group,), cell[0])
        redelivered((group,), cell[1])
        for i, ack in enumerate(ACK_TYPES):
            acks((group, ack.upper()), cell[2 + i])
    expired = make.gauge("kwire_share_lock_expiries")
    by_label: dict[str, int] = {}
    for group, n in expiries.items():
        by_label[label(group)] = by_label.get(label(group), 0) + n
    for group, n in sorted(by_label.items()):
        expired((group,), n)


def _group_state(make: _Make, groups: dict, label) -> None:
    generation = make.gauge("kwire_group_generation")
    members = make.gauge("kwire_group_members")
    generations = make.gauge("kwire_group_generations")
    expired = make.gauge("kwire_group_members_expired")
    rows: dict[tuple, list] = {}
    for group_id, doc in groups.items():
        key = (label(group_id), doc.get("protocol") or "unknown")
        gens = doc.get("generations") or []
        latest = gens[-1] if gens else None
        row = rows.setdefault(key, [None, 0, 0, 0])
        if latest is not None and latest.get("generation") is not None:
            row[0] = latest["generation"] if row[0] is None else max(row[0], latest["generation"])
        row[1] += len(latest["members"]) if latest else 0
        row[2] += len(gens)
        row[3] += sum(1 for m in (doc.get("members") or {}).values() if m.get("left") == "expired")
    for key, (gen, n, count, gone) in sorted(rows.items()):
        if gen is not None:
            generation(key, gen)
        members(key, n)
        generations(key, count)
        expired(key, gone)


def _findings(make: _Make, findings: list) -> None:
    count = make.gauge("kwire_findings")
    latest = make.gauge("kwire_findings_last_timestamp_seconds")
    rows: dict[tuple, list] = {}
    for f in findings:
        row = rows.setdefault((f["kind"], f["severity"]), [0, None])
        row[0] += 1
        at = seconds(f["end_ts_ns"] if f.get("end_ts_ns") is not None else f.get("start_ts_ns"))
        if at is not None:
            row[1] = at if row[1] is None else max(row[1], at)
    for key, (n, at) in sorted(rows.items()):
        count(key, n)
        if at is not None:
            latest(key, at)


def _health(make: _Make, view: MetricsView) -> None:
    h, r = view.health, view.report
    counters = [
        ("kwire_packets", h.get("packets", 0)),
        ("kwire_captured_bytes", h.get("bytes", 0)),
        ("kwire_truncated_packets", h.get("truncated", 0)),
        ("kwire_tcp_gaps", r.get("gaps", 0)),
        ("kwire_tcp_gap_bytes", r.get("gap_bytes", 0)),
        ("kwire_kafka_connections", r.get("kafka_connections", 0)),
        ("kwire_tls_connections", r.get("tls_connections", 0)),
        ("kwire_tls_decrypted_connections", r.get("tls_decrypted", 0)),
    ]
    if h.get("kernel_drops") is not None:
        counters.append(("kwire_kernel_drops", h["kernel_drops"]))
    if "queue_drops" in h:
        unit = "exchanges" if h.get("queue_holds") == "exchanges" else "packets"
        counters.append((f"kwire_queue_dropped_{unit}", h["queue_drops"]))
    for name, value in counters:
        make.counter(name)((), value)
    gauges = [("kwire_tcp_connections_open", r.get("connections")),
              ("kwire_requests_in_flight", r.get("in_flight")),
              ("kwire_figures_lag_max_seconds", h.get("figures_lag_max_s")),
              ("kwire_capture_start_timestamp_seconds", view.start_s),
              ("kwire_capture_end_timestamp_seconds", view.end_s)]
    for name, value in gauges:
        if value is not None:
            make.gauge(name)((), value)


def _labels(make: _Make, caps: LabelCaps, folded: dict[str, int]) -> None:
    kept, folds = caps.copy_counts()
    values = make.gauge("kwire_label_values")
    limit = make.gauge("kwire_label_cap")
    counted = make.counter("kwire_label_folds")
    distinct = make.gauge("kwire_label_values_folded")
    for label in sorted(caps.caps):
        values((label,), kept[label])
        limit((label,), caps.caps[label])
        if label in FRAME_LABELS:
            distinct((label,), folded.get(label, 0))
        else:
            counted((label,), folds[label])


def service_families(counts: dict[str, int], open_now: int, cap: int) -> list:
    """The metrics service's own families: its connections by how they ended, those it holds, its bound."""
    make = _Make(None)
    ended = make.counter("kwire_exporter_connections")
    for outcome, n in counts.items():
        ended((outcome,), n)
    make.gauge("kwire_exporter_connections_open")((), open_now)
    make.gauge("kwire_exporter_connections_cap")((), cap)
    return make.out
