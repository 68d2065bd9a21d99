"""The whole path from capture records to Exchanges, and the counters a run reports.

`Pipeline` is sans-IO. It wires the layers through their contracts: capture records go to a RecordSink
(kwire.native.fused.RecordFeed: the fast path, or PlainFeed), which feeds TCP
(kwire.native.tcp_flows.FlowTable); TCP hands each connection's bytes to its stream consumer:
kwire.tls.TlsDetector looks at the first bytes and puts a TlsStream (decrypting with the key log, when
one is given) in front of the Kafka consumer, or steps aside for plaintext
(kwire.native.kafka_connection.KafkaStream, made by KafkaLayer.open); every TLS connection is noted in
the summary when it closes (`tls_row`: what it showed, and why it was not decrypted). Kafka hands
completed RawExchanges to the pipeline's sink (kwire.native.exchange_sink.ExchangeSink), which decodes them
(kwire.native.exchange_build), enriches them (kwire.native.exchange_enrich) and counts them into the RunSummary.
`feed(packet)` and `feed_capture(source)` return the Exchanges completed so far, in order; `finish()` the rest (requests never answered, connections still open at the end).
`analyze_files(paths)` drives it over capture files (the only function here that opens anything).
inspect, stats, live and the Spark executors all run this same code, so they cannot disagree on what an
exchange is.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from kwire.capture.files import open_captures
from kwire.capture.packet import Packet
from kwire.capture.stats import CaptureStats
from kwire.counts import count as counted
from kwire.native.exchange_enrich import Enricher
from kwire.native.exchange_sink import ExchangeCounts, ExchangeSink
from kwire.errors import CaptureError
from kwire.native.fused import PlainFeed, RecordFeed
from kwire.native.kafka_connection import DEFAULT_MAX_FRAME, KafkaLayer
from kwire.native.kafka_pairing import RawExchange
from kwire.native.kafka_resync import request_chain
from kwire.model import Exchange
from kwire.native.net_decode import SUPPORTED_LINKTYPES, TUNNEL, UNOPENED, DecodeCounters, decode_empty, decode_segment
from kwire.net.drops import DROPS, FRAGMENTS, MALFORMED, SHORT, TOO_DEEP
from kwire.native.tcp_flows import FlowTable
from kwire.tcp.stream import Connection
from kwire.tls import KeyLog, KeySource, TlsDetector, TlsInfo
from kwire.tls.info import TlsNotes, tls_row


def plain_kafka(buf, scan: dict) -> tuple[bool, int]:
    """For kwire.tls.detect: does a plaintext Kafka request frame chain parse in these bytes?"""
    return request_chain(buf, scan, DEFAULT_MAX_FRAME)


class RunSummary(ExchangeCounts):
    """What one run saw, for the closing summary line and `stats`: the exchanges it counted (ExchangeCounts: by
    status, their connections, the decode errors; counted by the native sink, kwire.native.exchange_sink) and the
    counters of every layer."""

    def __init__(self) -> None:
        super().__init__()
        self.capture = CaptureStats()
        self.net: dict[str, int] = {}
        self.tcp: dict[str, int] = {}
        self.kafka: dict[str, int] = {}
        self.capture_errors: list[str] = []
        self.unknown_linktypes: dict[int, list[str]] = {}
        self.tls = TlsNotes()  # the TLS connections (kwire.tls.info.tls_row)
        self.keylog_given = False

    @property
    def gaps(self) -> int:
        return self.tcp.get("gaps", 0)

    def line(self) -> str:
        parts = [
            counted(self.capture.packets, "packet"),
            counted(len(self.connections), "Kafka connection"),
            f"{counted(self.exchanges, 'exchange')} ({self.paired:,} paired, {self.no_response:,} no_response, "
            f"{self.no_request:,} no_request)",
            counted(self.gaps, "gap"),
        ]
        if self.decode_errors:
            parts.append(counted(self.decode_errors, "decode error"))
        if self.tls.connections:
            partly = f", {self.tls.partly:,} partly" if self.tls.partly else ""
            parts.append(f"{counted(self.tls.connections, 'TLS connection')} "
                         f"({self.tls.decrypted:,} decrypted{partly})")
        if self.capture.truncated:
            parts.append(f"{counted(self.capture.truncated, 'packet')} cut by snap length")
        parts += self.snap_notes()
        parts += [f"{name[len(TUNNEL):]}: {counted(count, 'packet')}" for name, count in self.net.items()
                  if name.startswith(TUNNEL)]
        if not self.connections:
            parts += self.nothing_kafka()
        tcp, kafka = self.tcp, self.kafka
        if tcp.get("conflicting_bytes"):  # retransmissions that disagree: which copy was sent?
            parts.append(f"{counted(tcp['conflicting_bytes'], 'retransmitted byte')} differed from the first copy "
                         "(kept)")
        if tcp.get("after_fin_segments"):
            parts.append(f"{counted(tcp['after_fin_segments'], 'segment')} after a FIN")
        if kafka.get("duplicate_correlation_ids"):
            parts.append(counted(kafka["duplicate_correlation_ids"], "reused correlation id"))
        if kafka.get("dropped_bodies"):
            parts.append(f"{counted(kafka['dropped_bodies'], 'unanswered request body')} not kept")
        if kafka.get("ignored_kafka_like"):  # given up on: never confirmed within the detection window
            parts.append(f"{counted(kafka['ignored_kafka_like'], 'connection')} with Kafka-like frames not read as "
                         f"Kafka ({counted(kafka.get('ignored_exchanges', 0), 'exchange')} held, dropped)")
        return ", ".join(parts)


    def snap_notes(self) -> list[str]:
        """What the snap length did to the Kafka frames: bodies cut, or every payload cut away."""
        notes = []
        cut = self.kafka.get("cut_frames", 0)
        if cut:
            notes.append(f"{counted(cut, 'Kafka frame')} cut by snap length (their headers kept)")
        if self.capture.truncated and not self.tcp.get("bytes") and self.tcp.get("truncated_segments"):
            notes.append("the snap length cut every packet before its TCP payload: no Kafka byte was captured")
        return notes

    def nothing_kafka(self) -> list[str]:
        """No Kafka: what the packets were instead (never a silent zero)."""
        notes = sorted(((count, name[len(UNOPENED):]) for name, count in self.net.items()
                        if name.startswith(UNOPENED)), reverse=True)
        said = [f"{count:,} {what} not opened" for count, what in notes[:3]]
        for reason in (SHORT, MALFORMED, FRAGMENTS, TOO_DEEP):  # (non_ip and non_tcp: what they were, above)
            if self.net.get(reason):
                said.append(f"{self.net[reason]:,} {DROPS[reason].say()}")
        connections = self.tcp.get("connections", 0)
        if connections:
            said.append(f"{counted(connections, 'TCP connection')}, none seen to be Kafka")
        return [f"no Kafka: {'; '.join(said)}"] if said else []


class Pipeline:
    """`offload(raw) -> bool`, when given, picks RawExchanges that are not decoded here: they come
    out of feed/finish as they are, in their place among the Exchanges, counted by status only
    (whoever decodes them adds their decode errors to the summary). kwire.parallel uses this.
    `fast=False` takes the plain path for every record (the fast path's differential tests). `keys`:
    where TLS secrets come from (a kwire.tls.KeyLog, or a FollowedKeyLog); `key_wait_bytes`: how much
    of a TLS connection may wait for its keys to appear in a key log being written (live capture).
    `track_spans`: exchanges say where their frames lie on the wire (Exchange.wire; kwire.excerpt)."""

    def __init__(self, *, port_hints: Iterable[int] = (), decode: bool = True,
                 summary: RunSummary | None = None,
                 offload: Callable[[RawExchange], bool] | None = None, fast: bool = True,
                 keys: KeySource | None = None, key_wait_bytes: int = 0, track_spans: bool = False):
        self.net = DecodeCounters()
        self.last_ts_ns = 0
        self.sink = ExchangeSink(offload, decode, Enricher(), summary or RunSummary())  # offload and decode: its own
        self.kafka = KafkaLayer(self.sink.on_raw, port_hints=frozenset(port_hints), track_spans=track_spans)
        self.tls = TlsDetector(self.kafka.open, keys, self._on_tls, key_wait_bytes=key_wait_bytes,
                               plain=plain_kafka)
        self.summary.keylog_given = keys is not None
        self.flows = FlowTable(self.tls)
        self.records = (RecordFeed(self.flows, self._feed_packet, self._feed_empty) if fast
                        else PlainFeed(self._feed_packet, self._feed_empty))

    @property
    def summary(self) -> RunSummary:
        return self.sink.summary

    @summary.setter
    def summary(self, summary: RunSummary) -> None:
        self.sink.summary = summary

    @property
    def enricher(self):
        """What enriches each decoded exchange (kwire.native.exchange_enrich.Enricher; kwire.spark.results puts its own)."""
        return self.sink.enricher

    @enricher.setter
    def enricher(self, enricher) -> None:
        self.sink.enricher = enricher

    def feed(self, packet: Packet) -> list[Exchange]:
        """The Exchanges completed by one packet (fed in capture order)."""
        self.last_ts_ns = packet.ts_ns
        data = packet.data
        self.records.record(packet.ts_ns, packet.linktype, data, 0, len(data), packet.wire_len)
        return self.take()

    def feed_capture(self, source) -> Iterator[list[Exchange]]:
        """The records of a capture source (kwire.capture.files.open_captures) through the fast path;
        after each window of it (kwire.capture.packet.HANDOFF), the Exchanges completed meanwhile."""
        for _ in source.feed(self.records):
            yield self.take()

    def take(self) -> list:
        """The Exchanges (and offloaded RawExchanges) completed since the last take, in order."""
        sink = self.sink
        out = sink.out
        if out:
            sink.out = []
        return out

    def settled(self, seen_ns: int = 0) -> tuple[int, int]:
        """(ns, cost): every exchange still to come was requested at or after capture time ns, as far as the
        pipeline knows: the oldest request waiting for its answer, else the latest record read (or `seen_ns`,
        a time the caller has seen in an exchange, if later: records a fused run took are not counted here).
        A request whose bytes come later than newer ones' is not known before it comes. cost: the
        connections looked at to say so (kwire.time_order asks less often where there are many)."""
        oldest, cost = self.kafka.oldest_pending()
        latest = max(self.last_ts_ns, self.records.last_ts, seen_ns)
        return (latest if oldest is None or oldest > latest else oldest), cost

    def _feed_packet(self, packet: Packet) -> None:
        """The plain path of one record: net -> tcp."""
        self.last_ts_ns = packet.ts_ns
        seg = decode_segment(packet, self.net)
        if seg is not None:
            self.flows.feed(seg)

    def _feed_empty(self, ts_ns: int, linktype: int, wire_len: int, count: int) -> None:
        """`count` records alike that captured no bytes: what the plain path makes of each, at once."""
        self.last_ts_ns = ts_ns
        decode_empty(linktype, count, self.net)

    def add_secrets(self, secrets_type: int, data: bytes) -> None:
        """Decryption secrets found in a capture (pcapng Decryption Secrets Blocks): TLS key log text
        goes to the key log (a new one when none was given), for the connections that follow."""
        keys = self.tls.keys
        if keys is None:
            keys = self.tls.keys = KeyLog()
        if isinstance(keys, KeyLog) and keys.add_secrets(secrets_type, data):
            self.summary.keylog_given = True

    def _on_tls(self, conn: Connection, info: TlsInfo) -> None:
        self.summary.tls.add(tls_row(conn, info))

    def finish(self) -> list[Exchange]:
        """End of input: every connection closes; the Exchanges that completes, and the counters."""
        # The capture's end: its latest record (records a fused run took belong to connections still
        # open, whose latest times latest_ts() has).
        self.last_ts_ns = max(self.last_ts_ns, self.records.last_ts, self.flows.latest_ts())
        self.flows.flush(self.last_ts_ns)
        self.summary.net = self.net.flat()
        self.summary.tcp = dict(self.flows.counters())
        self.summary.kafka = dict(self.kafka.counters.closed)
        return self.take()


def analyze_files(paths: list[str], *, port_hints: Iterable[int] = (), decode: bool = True,
                  summary: RunSummary | None = None,
                  progress: Callable[[CaptureStats], None] | None = None,
                  offload: Callable[[RawExchange], bool] | None = None, fast: bool = True,
                  keys: KeySource | None = None, track_spans: bool = False,
                  on_pipeline: Callable[[Pipeline], None] | None = None, windows: bool = False) -> Iterator:
    """Exchanges of the capture files, merged in time order (and the RawExchanges `offload` picks,
    see Pipeline), as they complete; with `windows`, in lists: those each window of records completed
    (kwire.capture.packet.HANDOFF), after which Pipeline.settled holds for all that follow (kwire.time_order
    asks it; `on_pipeline` is handed the Pipeline before the first record is read). Capture errors end up in summary.capture_errors (the good packets before a
    damaged spot are still analysed), and so do files that cannot be opened as captures when others
    can; when none can, CaptureError is raised before anything is read."""
    pipeline = Pipeline(port_hints=port_hints, decode=decode, summary=summary, offload=offload, fast=fast,
                        keys=keys, track_spans=track_spans)
    if on_pipeline is not None:
        on_pipeline(pipeline)
    summary = pipeline.summary
    stats = summary.capture
    source = open_captures(paths, stats, on_secrets=pipeline.add_secrets,
                           on_error=lambda exc: summary.capture_errors.append(str(exc)))
    for linktype, names in stats.linktypes.items():
        if linktype not in SUPPORTED_LINKTYPES:
            summary.unknown_linktypes[linktype] = sorted(names)
    shown = 0
    try:
        for exchanges in pipeline.feed_capture(source):
            if windows:
                yield exchanges
            else:
                yield from exchanges
            if progress is not None and stats.packets != shown:
                shown = stats.packets
                progress(stats)
    except CaptureError as exc:
        summary.capture_errors.append(str(exc))
    if windows:
        yield pipeline.finish()
    else:
        yield from pipeline.finish()
