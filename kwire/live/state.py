"""The dashboard's state: exchanges and packets in, Snapshots out.

`DashboardState` is fed by the feeder thread (`add_exchanges`, `add_packets`) and asked for a
`snapshot(now_ns, pipeline, health)` by that same thread (kwire.live.feeder hands it to the
screen), so it needs no lock. Figures come from
kwire.analytics (the row functions and the Aggregator `kwire stats` uses) through
kwire.live.window: the window gives rates, percentiles and the slowest exchanges; the window's
seconds plus the retired Aggregator give the totals since the start.

With a MetricsState (`kwire live --metrics`: kwire.live.metrics_state) each counted exchange's row
also goes to it; `metrics_view` gives the exporter what it shows (kwire.live.metric_families) and
`documents` the findings and groups documents (also the findings log's), both on the feeder thread; the
end-to-end panels read the `end_to_end` section of the same analysis, made at most once per second of
capture time as the findings and groups rows are, and at most a tenth of the feeder's time (the feeder's clock).

Definitions the dashboard adds:
- rate: exchanges of the window divided by the window's length, which is `window` seconds, or the
  time since the first exchange when that is shorter (at least one second).
- in flight: requests of confirmed Kafka connections still waiting for their response, read from
  the pipeline at snapshot time (kwire.live.report.requests_in_flight, also per broker); the oldest
  one's age is measured against the dashboard's clock.
- brokers: every broker an exchange went to since the start (or one with requests in flight), with
  the window's rate, latency percentiles, errors and bytes (kwire.analytics' per-broker figures of
  the window's seconds, merged at snapshot time, never per exchange) and its requests in flight.
"""

from __future__ import annotations

import time
from collections import deque

from kwire.analytics.read import read_exchange
from kwire.analytics.aggregate import Aggregator
from kwire.analytics.figures import Figures
from kwire.counts import count
from kwire.analytics.end_to_end import EndToEndState
from kwire.live.analysis_rows import analysis_rows, end_to_end_rows
from kwire.live.metric_families import MetricsView, epoch_seconds
from kwire.live.metrics_state import MetricsState
from kwire.live.report import requests_in_flight
from kwire.live.snapshot import ApiRow, BrokerRow, Health, LagRow, ShareRow, SlowExchange, Snapshot
from kwire.live.window import NS, Window, merged_names, per_broker, per_api

TOP = 10       # rows kept for the top-N panels
SLOWEST = 10
HISTORY = 60   # seconds of sparkline history
LOST_NAMED = 3  # connections named in the "bytes lost" note
E2E_SHARE = 10  # the end-to-end rows wait this many times what they took to make (kwire.live.state._end_to_end_rows)


class DashboardState:
    def __init__(self, kind: str, where: str, *, window: int = 10, history: int = HISTORY, keep=None,
                 metrics: MetricsState | None = None):
        self.keep = keep  # a filter (kwire.query.ExchangeFilter): the others only lend their topic names
        self.kind = kind
        self.where = where
        self.window = Window(window, history)
        self.finished = False
        self.error: str | None = None
        self.exchanges = 0
        self.first_ns: int | None = None     # first exchange's time
        self.first_packet_ns: int | None = None
        self.last_packet_ns: int | None = None
        self._packet_seconds: deque[list[int]] = deque()  # [second, packets] for the last window
        self._analysis_key = None  # (second, exchanges) the findings and groups rows were made at
        self._analysis_rows: tuple[list, list] = ([], [])
        self._e2e_key = None  # (second, exchanges) the end-to-end rows were made at
        self._e2e_next = 0.0  # the feeder's clock (perf_counter) before which they are not made again
        self._e2e_rows: tuple[list, list] = ([], [])
        self.metrics = metrics  # the exporter's counts (kwire.live.metrics_state), when one is wanted
        self._documents_key = None  # exchanges counted when the findings and groups documents were made
        self._brokers_key = None  # (second, exchanges) the brokers' window figures were made at
        self._brokers: dict[str, tuple] = {}
        self._documents: tuple[list, dict] = ([], {})

    # -- feeding

    def add_exchanges(self, exchanges) -> None:
        window = self.window
        if self.keep is not None:
            kept = [ex for ex in exchanges if self.keep(ex)]
            for ex in exchanges if len(kept) < len(exchanges) else ():
                window.retired.learn_names(ex)
            exchanges = kept
        metrics = self.metrics
        for ex in exchanges:
            row, parts, names, observed = read_exchange(ex, window.analysis.watch)
            window.add(row, parts, names, observed)
            if metrics is not None:
                metrics.add(row, observed)
            if self.first_ns is None or row["ts_ns"] < self.first_ns:
                self.first_ns = row["ts_ns"]
        self.exchanges += len(exchanges)

    def add_packets(self, packets) -> None:
        if not packets:
            return
        counts: dict[int, int] = {}
        for packet in packets:
            second = packet.ts_ns // NS
            counts[second] = counts.get(second, 0) + 1
        self.count_packets(counts.items(), packets[0].ts_ns, packets[-1].ts_ns)

    def count_packets(self, counts, first_ns: int | None, last_ns: int | None) -> None:
        """Packets counted elsewhere: (capture second, packets) pairs, and the times of the first and
        last packet among them (the ring capture counts them per block, in its own process)."""
        if first_ns is not None and self.first_packet_ns is None:
            self.first_packet_ns = first_ns
        if last_ns is not None:
            self.last_packet_ns = last_ns
        seconds = self._packet_seconds
        for second, n in counts:
            if seconds and second <= seconds[-1][0]:
                seconds[-1][1] += n  # this second, or out of order in time: counted with the latest
            else:
                seconds.append([second, n])
                while seconds[0][0] <= second - self.window.seconds:
                    seconds.popleft()

    # -- reading

    def snapshot(self, now_ns: int, pipeline=None, health: dict | None = None) -> Snapshot:
        now_s = now_ns // NS
        window = self.window
        recent = window.parts(now_s)  # the window's seconds; merged below only where a view needs it
        span = self._span(now_ns)
        snap = Snapshot(kind=self.kind, where=self.where, now_ns=now_ns,
                        elapsed_s=(now_ns - self.first_packet_ns) / 1e9 if self.first_packet_ns else 0.0,
                        window_s=float(window.seconds), exchanges=self.exchanges, finished=self.finished)
        snap.rate = sum(part.total.exchanges for part in recent) / span
        parts = [window.retired, *recent]
        snap.apis = self._api_rows(recent, now_s, span)
        self._totals(snap, parts)
        slowest = sorted((item for part in recent for item in part.slowest), key=lambda item: item[0])
        snap.slowest = [_slow(brief) for _, brief in slowest[:SLOWEST]]
        snap.health = self._health(now_ns, pipeline, health or {}, parts)
        snap.findings, snap.groups = self._analysis(now_s)
        snap.end_to_end, snap.time_lag = self._end_to_end_rows(now_s)
        waiting: dict[str, int] = {}
        if pipeline is not None:
            snap.in_flight, oldest, waiting = requests_in_flight(pipeline)
            if oldest is not None:
                snap.oldest_in_flight_ms = max(0.0, (now_ns - oldest) / 1e6)
        snap.brokers = self._broker_rows(recent, now_s, span, waiting)
        snap.notes = self._notes(snap, health or {})
        return snap

    def documents(self) -> tuple[list[dict], dict]:
        """The findings and groups documents `kwire stats` would print for what was counted so far
        (made again only when something was counted since)."""
        key = (self.exchanges, self.finished)
        if key != self._documents_key:
            parts = [self.window.retired, *self.window.live_parts()]
            names = merged_names(parts)
            first = min((a.first_ns for a in parts if a.first_ns is not None), default=None)
            last = max((a.last_ns for a in parts if a.last_ns is not None), default=None)
            analysis = self.window.analysis
            self._documents = (analysis.findings(names, first, last), analysis.groups_document(names))
            self._documents_key = key
        return self._documents

    def last_exchange_ns(self) -> int | None:
        """The latest request or response time counted (epoch ns), None before any."""
        return max((a.last_ns for a in [self.window.retired, *self.window.live_parts()] if a.last_ns is not None),
                   default=None)

    def metrics_view(self, health: dict, report: dict) -> MetricsView:
        """What the exporter shows now (kwire.live.metric_families), made on the feeder's thread."""
        parts = [self.window.retired, *self.window.live_parts()]
        findings, groups = self.documents()
        first = min((a.first_ns for a in parts if a.first_ns is not None), default=None)
        last = max((a.last_ns for a in parts if a.last_ns is not None), default=None)
        return MetricsView(self.metrics, self.metrics.caps, parts, findings, groups, health, report,
                           start_s=epoch_seconds(first), end_s=epoch_seconds(last),
                           end_to_end=self.window.analysis.end_to_end)

    def _end_to_end(self) -> dict:
        """The stats document's `end_to_end` section of every exchange since the start, made from a copy of the
        analysis' state (matching sorts what it reads, and the exporter may be reading the state meanwhile)."""
        state = EndToEndState()
        state.merge(self.window.analysis.end_to_end)
        return state.document(merged_names([self.window.retired, *self.window.live_parts()]))

    def _end_to_end_rows(self, now_s: int) -> tuple[list, list]:
        """The end-to-end panels' rows, made again at most once per second of capture time and, as matching
        costs with what is kept (some 10 µs a delivery), once the time they last took has been spent E2E_SHARE
        times over on other work (a replay at full speed, a busy link): at most a tenth of the feeder's time."""
        key = (now_s, self.exchanges)
        now = time.perf_counter()
        if key != self._e2e_key and (self._e2e_key is None or self.finished or (now_s != self._e2e_key[0]
                                                                                and now >= self._e2e_next)):
            self._e2e_rows = end_to_end_rows(self._end_to_end())
            self._e2e_next = now + (time.perf_counter() - now) * E2E_SHARE
            self._e2e_key = key
        return self._e2e_rows

    def _analysis(self, now_s: int) -> tuple[list, list]:
        """Findings and groups rows, made again at most once per second of capture time."""
        key = (now_s, self.exchanges)
        if key != self._analysis_key and (self._analysis_key is None or now_s != self._analysis_key[0]
                                          or self.finished):
            self._analysis_rows = analysis_rows(*self.documents())
            self._analysis_key = key
        return self._analysis_rows

    def _span(self, now_ns: int) -> float:
        start = (now_ns // NS - self.window.seconds + 1) * NS
        if self.first_ns is not None and self.first_ns > start:
            start = self.first_ns
        return max(1.0, (now_ns - start) / 1e9)

    def _api_rows(self, recent: list[Aggregator], now_s: int, span: float) -> list[ApiRow]:
        window_apis = per_api(*recent)
        totals: dict[str, int] = {api: figures.exchanges for api, figures in window_apis.items()}
        for (api, _version), figures in self.window.retired.by_api_version.items():
            totals[api] = totals.get(api, 0) + figures.exchanges
        seconds, series = self.window.series(now_s, self.window.history)
        # Seconds before the first packet draw nothing; seconds without this api draw zero.
        start = self.first_packet_ns // NS if self.first_packet_ns is not None else now_s
        blank = sum(1 for s in seconds if s < start)
        rows = []
        for api, total in totals.items():
            figures = window_apis.get(api) or Figures()
            doc = figures.document(span)
            latency = doc["latency_ms"]
            cells = series.get(api) or [(0, None)] * len(seconds)
            history: list = [float(n) for n, _ in cells]
            history[:blank] = [None] * blank
            rows.append(ApiRow(
                api=api, requests=total, rate=figures.exchanges / span,
                p50_ms=latency["p50"], p99_ms=latency["p99"], max_ms=latency["max"],
                errors=figures.failed, bytes=figures.request_bytes + figures.response_bytes,
                history=history,
                p99_history=[None if p is None else p / 1e6 for _, p in cells]))
        rows.sort(key=lambda r: (-r.rate, -r.requests, r.api))
        return rows

    def _broker_rows(self, recent: list[Aggregator], now_s: int, span: float,
                     waiting: dict[str, int]) -> list[BrokerRow]:
        """One row per broker seen since the start or with requests in flight now: the window's figures
        (made again at most once per second of capture time, as the analysis rows: merging the window's
        latencies per broker costs as much as the api table's), and the requests in flight now."""
        key = (now_s, self.exchanges)
        if key != self._brokers_key and (self._brokers_key is None or now_s != self._brokers_key[0]
                                         or self.finished):
            figures = per_broker(*recent)
            seen = {broker for broker, _ in self.window.retired.by_broker.items()} | set(figures)
            self._brokers = {broker: _broker_figures(figures.get(broker), span) for broker in seen}
            self._brokers_key = key
        rows = [BrokerRow(broker, *self._brokers.get(broker, _NO_TRAFFIC), in_flight=waiting.get(broker, 0))
                for broker in set(self._brokers) | set(waiting)]
        rows.sort(key=lambda r: (-r.rate, -r.in_flight, r.broker))
        return rows

    def _totals(self, snap: Snapshot, parts: list[Aggregator]) -> None:
        errors: dict[str, int] = {}
        clients: dict[str, int] = {}
        names: dict[str, str] = {}
        unanswered = orphans = 0
        for agg in parts:
            for name, n in agg.total.errors.items():
                errors[name] = errors.get(name, 0) + n
            for client, figures in agg.by_client_id.items():
                clients[client] = clients.get(client, 0) + figures.request_bytes + figures.response_bytes
            for tid, name in agg.names.items():
                if tid not in names or name < names[tid]:
                    names[tid] = name
            unanswered += agg.total.no_response
            orphans += agg.total.no_request
        topics: dict[str, int] = {}
        lag: dict[tuple[str, int], list] = {}  # (topic, partition) -> [(ts, lag) last, max]
        for agg in parts:
            for (topic, partition), figures in agg.partitions.items():
                topic = names.get(topic, topic)
                topics[topic] = topics.get(topic, 0) + figures.fetch_bytes + figures.produce_bytes + figures.share_bytes
                if figures.lag_last is None:
                    continue
                have = lag.get((topic, partition))
                if have is None:
                    lag[(topic, partition)] = [figures.lag_last, figures.lag_max]
                else:
                    have[0] = max(have[0], figures.lag_last)
                    have[1] = max(have[1], figures.lag_max)
        share: dict[str, list[int]] = {}
        for agg in parts:
            for group, figures in agg.share_groups.items():
                cell = share.setdefault(group, [0, 0, 0, 0])
                cell[0] += figures.fetches
                cell[1] += figures.acquired
                cell[2] += figures.redelivered
                cell[3] += sum(figures.acks.values())
        snap.errors = sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))
        snap.clients = sorted(clients.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
        snap.topics = sorted(((t, n) for t, n in topics.items() if n), key=lambda kv: (-kv[1], kv[0]))[:TOP]
        snap.lag = sorted((LagRow(t, p, last[1], top) for (t, p), (last, top) in lag.items()),
                          key=lambda r: (-r.lag, r.topic, r.partition))
        snap.share = sorted((ShareRow(g, *cell) for g, cell in share.items()), key=lambda r: (-r.acquired, r.group))
        snap.unanswered = unanswered
        snap.orphans = orphans

    def _health(self, now_ns: int, pipeline, source: dict, parts: list[Aggregator]) -> Health:
        h = Health(packets=source.get("packets", 0), bytes=source.get("bytes", 0),
                   kernel_drops=source.get("kernel_drops"), queue_drops=source.get("queue_drops", 0),
                   queue=source.get("queue", 0), truncated=source.get("truncated", 0))
        seconds = self._packet_seconds
        if seconds:
            start = (now_ns // NS - self.window.seconds + 1) * NS
            if self.first_packet_ns is not None and self.first_packet_ns > start:
                start = self.first_packet_ns
            span = max(1.0, (now_ns - start) / 1e9)
            h.packets_per_s = sum(n for s, n in seconds if s * NS >= start - NS) / span
        h.decode_errors = sum(part.total.decode_errors for part in parts)
        if pipeline is not None:
            tcp = pipeline.flows.counters()
            h.gaps = tcp.get("gaps", 0)
            h.gap_bytes = tcp.get("gap_bytes", 0)
            h.connections = tcp.get("open_connections", 0)
            h.kafka_connections = pipeline.kafka.counters.kafka_connections
            h.non_tcp = pipeline.net.total
        return h

    def _notes(self, snap: Snapshot, source: dict) -> list[str]:
        """The notes, and which are alarms (Snapshot.alarms: the error, first) and which the end of a
        replay (Snapshot.done), as data: the dashboard styles them by these, never by their text."""
        notes = []
        if self.error:  # what stopped the capture, as the closing `kwire: error:` line says it
            notes.append(self.error)
            snap.alarms = 1
        h = snap.health
        dropped = h.queue_drops + (h.kernel_drops or 0)
        if dropped and source.get("queue_holds", "packets") != "packets" and h.queue_drops:
            notes.append(f"dropping: {count(h.kernel_drops or 0, 'packet')}, {count(h.queue_drops, 'exchange')} so "
                         "far - kwire cannot keep up, figures undercount")
        elif dropped:
            notes.append(f"dropping packets: {dropped:,} so far - kwire cannot keep up, figures undercount")
        lost = source.get("lost")
        if lost:
            notes.append("bytes lost (pairing resynced): " + ", ".join(
                f"{label} {_size(size)}" for label, _gaps, size in lost[:LOST_NAMED]))
        if self.finished and self.kind == "replay":
            traffic = (self.last_packet_ns - self.first_packet_ns) / 1e9 if self.first_packet_ns else 0.0
            notes.append(f"replay finished: {count(h.packets, 'packet')}, {count(self.exchanges, 'exchange')}, "
                         f"{traffic:.1f} s of traffic (q quits)")
            snap.done = len(notes) - 1
        if not self.exchanges:
            if self.finished:
                notes.append("no Kafka exchanges found in this capture")
            elif not h.packets:
                notes.append(f"waiting for packets on {self.where}...")
            else:
                notes.append(f"no Kafka seen yet: {count(h.packets, 'packet')}, "
                             f"{count(h.connections, 'TCP connection')} open")
                notes.append("(Kafka is recognised on any port once a request is answered; --port marks a broker)")
        return notes


def _size(n: int) -> str:
    if n < 1000:
        return f"{n} B"
    return f"{n / 1e3:.1f} KB" if n < 1_000_000 else f"{n / 1e6:.1f} MB"


_NO_TRAFFIC = (0.0, None, None, 0, 0)  # a broker's window figures without exchanges in the window


def _broker_figures(figures: Figures | None, span: float) -> tuple:
    """(rate, p50 ms, p99 ms, errors, bytes) of a broker's window figures, as BrokerRow holds them."""
    if figures is None:
        return _NO_TRAFFIC
    latency = figures.document(span)["latency_ms"]
    return (figures.exchanges / span, latency["p50"], latency["p99"], figures.failed,
            figures.request_bytes + figures.response_bytes)


def _slow(brief: dict) -> SlowExchange:
    return SlowExchange(ts_ns=brief["ts_ns"], api=brief["api"] or "?", latency_ms=brief["latency_ms"] or 0.0,
                        client=brief["client"], broker=brief["broker"], client_id=brief["client_id"],
                        correlation_id=brief["correlation_id"])
