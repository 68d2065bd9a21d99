"""The whole path from packets to Exchanges, and the counters a run reports.

`Pipeline` is sans-IO: `feed(packet)` -> Exchanges completed by that packet, `finish()` -> the rest
(requests never answered, connections still open at the end). `analyze_files(paths)` drives it over
capture files (the only function here that opens anything). inspect, stats, live and the Spark
executors all run this same code, so they cannot disagree on what an exchange is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Iterable, Iterator

from kwire.capture.files import read_captures
from kwire.capture.packet import Packet
from kwire.capture.stats import CaptureStats
from kwire.enrich import Enricher
from kwire.errors import CaptureError
from kwire.exchanges import build_exchange
from kwire.kafka.pairing import KafkaTracker, RawExchange
from kwire.model import NO_REQUEST, NO_RESPONSE, PAIRED, Exchange
from kwire.net.decode import SUPPORTED_LINKTYPES, DecodeCounters
from kwire.tcp.flows import FlowTable


@dataclass(slots=True)
class RunSummary:
    """What one run saw, for the closing summary line and `stats`."""

    capture: CaptureStats = field(default_factory=CaptureStats)
    net: dict[str, int] = field(default_factory=dict)
    tcp: dict[str, int] = field(default_factory=dict)
    kafka: dict[str, int] = field(default_factory=dict)
    connections: set[int] = field(default_factory=set)  # connections that carried Kafka
    exchanges: int = 0
    paired: int = 0
    no_response: int = 0
    no_request: int = 0
    decode_errors: int = 0
    capture_errors: list[str] = field(default_factory=list)
    unknown_linktypes: dict[int, list[str]] = field(default_factory=dict)

    def count(self, ex: Exchange) -> None:
        self.count_status(ex.status, ex.connection_id)
        if ex.request_error or ex.response_error:
            self.decode_errors += 1

    def count_status(self, status: str, connection_id: int) -> None:
        """An exchange whose bodies are decoded elsewhere (its decode errors are added there)."""
        self.exchanges += 1
        self.connections.add(connection_id)
        if status == PAIRED:
            self.paired += 1
        elif status == NO_RESPONSE:
            self.no_response += 1
        elif status == NO_REQUEST:
            self.no_request += 1

    @property
    def gaps(self) -> int:
        return self.tcp.get("gaps", 0)

    def line(self) -> str:
        parts = [
            f"{self.capture.packets} packets",
            f"{len(self.connections)} Kafka connections",
            f"{self.exchanges} exchanges ({self.paired} paired, {self.no_response} no_response, "
            f"{self.no_request} no_request)",
            f"{self.gaps} gaps",
        ]
        if self.decode_errors:
            parts.append(f"{self.decode_errors} decode errors")
        if self.capture.truncated:
            parts.append(f"{self.capture.truncated} packets cut by snap length")
        return ", ".join(parts)


class Pipeline:
    """`offload(raw) -> bool`, when given, picks RawExchanges that are not decoded here: they come
    out of feed/finish as they are, in their place among the Exchanges, counted by status only
    (whoever decodes them adds their decode errors to the summary). kwire.parallel uses this."""

    def __init__(self, *, port_hints: Iterable[int] = (), decode: bool = True,
                 summary: RunSummary | None = None,
                 offload: Callable[[RawExchange], bool] | None = None):
        self.offload = offload
        self.summary = summary or RunSummary()
        self.net = DecodeCounters()
        self.flows = FlowTable()
        self.kafka = KafkaTracker(port_hints=frozenset(port_hints))
        self.enricher = Enricher()
        self.decode = decode
        self.last_ts_ns = 0

    def feed(self, packet: Packet) -> list[Exchange]:
        self.last_ts_ns = packet.ts_ns
        events = self.flows.feed_packet(packet, self.net)
        if not events and not self.kafka.ready:
            return []
        return self._on_events(events)

    def _on_events(self, events) -> list[Exchange]:
        """Exchanges of the Kafka connections' sinks for the last packet, then of its events."""
        out: list[Exchange] = []
        kafka = self.kafka
        ready = kafka.ready  # one list for the whole run: the connections hold it too
        if ready:
            made = ready.copy()
            ready.clear()
            self._build(made, out)
        for event in events:
            raws = kafka.on_event(event)
            if raws:
                self._build(raws, out)
        return out

    def _build(self, raws, out: list) -> None:
        offload = self.offload
        for raw in raws:
            if offload is not None and offload(raw):
                self.summary.count_status(raw.status, raw.conn.id)
                out.append(raw)
                continue
            ex = build_exchange(raw, decode=self.decode)
            if self.decode:
                self.enricher.enrich(ex)
            self.summary.count(ex)
            out.append(ex)

    def finish(self) -> list[Exchange]:
        out = self._on_events(self.flows.flush(self.last_ts_ns))
        self._build(self.kafka.finish(), out)
        self.summary.net = {k: v for k, v in asdict(self.net).items() if isinstance(v, int)}
        self.summary.tcp = dict(self.flows.counters())
        self.summary.kafka = dict(self.kafka.closed_counters)
        return out


def analyze_files(paths: list[str], *, port_hints: Iterable[int] = (), decode: bool = True,
                  summary: RunSummary | None = None,
                  progress: Callable[[CaptureStats], None] | None = None,
                  offload: Callable[[RawExchange], bool] | None = None) -> Iterator[Exchange]:
    """Exchanges of the capture files, merged in time order (and the RawExchanges `offload` picks,
    see Pipeline). Capture errors end up in summary.capture_errors (the good packets before a
    damaged spot are still analysed) and are re-raised as one CaptureError after the last exchange
    when nothing at all could be read."""
    pipeline = Pipeline(port_hints=port_hints, decode=decode, summary=summary, offload=offload)
    summary = pipeline.summary
    stats = summary.capture
    # TCP takes the packets that need only bookkeeping straight from the read buffer.
    packets = read_captures(paths, stats, take=pipeline.flows.take_ethernet,
                            take_run=pipeline.flows.take_pcap_run)
    for linktype, names in stats.linktypes.items():
        if linktype not in SUPPORTED_LINKTYPES:
            summary.unknown_linktypes[linktype] = sorted(names)
    feed = pipeline.flows.feed_packet  # decode_segment + FlowTable.feed in one call
    net = pipeline.net
    on_events = pipeline._on_events
    last = None
    try:
        # None in place of a packet: TCP took it straight from the read buffer and has events of it.
        # Progress follows the readers' counts, which move a chunk at a time (packets TCP takes in
        # place are counted there but never come through this loop).
        flows = pipeline.flows
        shown = 0
        ready = pipeline.kafka.ready  # what the connections' sinks made straight from TCP
        for packet in packets:
            if packet is None:
                events = flows.taken
            else:
                last = packet
                events = feed(packet, net)
            if events or ready:
                yield from on_events(events)
            if progress is not None and stats.packets != shown:
                shown = stats.packets
                progress(stats)
    except CaptureError as exc:
        summary.capture_errors.append(str(exc))
    pipeline.last_ts_ns = max(last.ts_ns if last is not None else 0, pipeline.flows.latest_ts())
    yield from pipeline.finish()
