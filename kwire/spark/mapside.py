"""The map side of `kwire spark`: one capture file -> Arrow rows of kwire.spark.wire (runs on executors).

`read_file(index, path, parts, options)` reads the file with kwire's own readers through the fast
path (kwire.native.fused.RecordFeed) into a FlowTable whose consumer is a kwire.spark.pieces.Recorder, so TCP
(reordering, retransmissions, ACKs, holes) is done here, once. Each connection then goes one of two
ways:

- finished here (INTERIOR): its handshake is in this file and it closed in this file (FIN, RST,
  idle, a new SYN on its 4-tuple), more than LINGER_NS before the file's last packet (a closed
  4-tuple lingers in TCP: its next segments, possibly in the next file, are ignored). Its events are
  played through a Pipeline's stream layers (kwire.spark.pieces.Replayer) and its exchanges become
  facts here (kwire.spark.results.Facts); only a small meta row crosses the shuffle.
- shipped (PIECE): it touches an edge of the file (opened mid-stream: the file may start in its
  middle; or still open at the file's end: the next file may go on with it). Its meta and its events
  (payload runs and gaps, never packets) cross the shuffle to the reduce task of its flow key
  (kwire.spark.stitch), which stitches the pieces of all files.

A file that cannot be read, or is damaged part way, never raises: the good packets before the damage
are used, and the error rides in the file's FileReport, which goes to every reduce task.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from kwire.capture.files import CaptureReader
from kwire.capture.packet import Packet, RecordSink
from kwire.capture.stats import CaptureStats
from kwire.errors import KwireError
from kwire.native.fused import RecordFeed
from kwire.native.net_decode import SUPPORTED_LINKTYPES, DecodeCounters, decode_segment
from kwire.spark.pieces import OPEN, Piece, Recorder, Replayer, lead_bytes
from kwire.spark.placement import Placement
from kwire.spark.results import DecodeOptions, Facts, PartitionResult, add_counts
from kwire.spark.wire import (DATA, INTERIOR, PIECE, PROWS, REPORT, RESULT, XROWS, RowBuffer, dumps,
                              flow_bytes, table_bytes)
from kwire.native.tcp_flows import FlowTable

LINGER_NS = FlowTable().linger_ns          # a FIN/RST-closed 4-tuple ignores late segments this long
IDLE_NS = FlowTable().idle_timeout_ns      # a connection this long without a segment is evicted
BATCH_BYTES = 8 << 20                      # payload bytes per Arrow batch handed to Spark


@dataclass(slots=True)
class FileReport:
    index: int
    path: str
    packets: int = 0
    captured_bytes: int = 0
    wire_bytes: int = 0
    truncated: int = 0
    first_ts_ns: int | None = None  # the earliest and latest capture times in the file
    last_ts_ns: int | None = None
    linktypes: list[int] = field(default_factory=list)
    net: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def unknown_linktypes(self) -> list[int]:
        return [lt for lt in self.linktypes if lt not in SUPPORTED_LINKTYPES]


INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)


class _Times(RecordSink):
    """The RecordSink in front of the fast path: notes the earliest and latest capture times, and pins
    a time past signed 64-bit nanoseconds (a damaged pcapng: `kwire stats` shows it as it is, as epoch
    seconds) to the nearest one, so that one damaged packet does not fail the whole Spark job. (Runs
    are never offered: a Recorder never asks TCP to hold bytes back, so no record is held.)"""

    __slots__ = ("record_inner", "run", "first", "last")

    def __init__(self, feed: RecordFeed):
        self.record_inner = feed.record
        self.run = feed.run
        self.first = self.last = None

    def record(self, ts: int, linktype: int, buf, start: int, stop: int, wire_len: int) -> bool:
        if not INT64_MIN <= ts <= INT64_MAX:  # Spark's columns hold 64 bits: a time past them is pinned
            ts = INT64_MAX if ts > 0 else INT64_MIN
        if self.first is None or ts < self.first:
            self.first = ts
        if self.last is None or ts > self.last:
            self.last = ts
        return self.record_inner(ts, linktype, buf, start, stop, wire_len)


def read_file(index: int, path: str, parts: int, options: DecodeOptions, placed: dict | None = None):
    """The rows of one capture file, as Arrow RecordBatches (module docstring); each flow key in the
    partition `placed` gives it, or hashed (kwire.spark.placement)."""
    return FileSide(index, path, parts, options, placed).batches()


class FileSide:
    def __init__(self, index: int, path: str, parts: int, options: DecodeOptions, placed: dict | None = None):
        self.index, self.path, self.parts = index, path, parts
        self.placement = Placement(parts, placed)
        self.pipeline = options.pipeline()
        self.facts = Facts(options)
        self.net = DecodeCounters()
        self.table = FlowTable(self._open)
        self.sink = _Times(RecordFeed(self.table, self._plain))
        self.recorders: dict[int, Recorder] = {}
        self.lingering: deque = deque()  # (close ts, recorder, reason): finished once LINGER_NS is past
        self.rows = RowBuffer()
        self.pieces = self.n = 0
        self.flushing = False
        self.edges: dict[int, tuple] = {}  # conn id -> (nxt, clean, last_ts, tail, fins) at the file's end
        self.gaps = self.gap_bytes = 0

    # -- TCP -> recorders ----------------------------------------------------------------------

    def _plain(self, packet: Packet) -> None:
        seg = decode_segment(packet, self.net)
        if seg is not None:
            self.table.feed(seg)

    def _open(self, conn) -> Recorder:
        rec = self.recorders[conn.id] = Recorder(conn, self._closed)
        return rec

    def _closed(self, rec: Recorder, ts: int, reason: str) -> None:
        del self.recorders[rec.conn.id]
        conn = rec.conn
        if self.flushing:  # the file ended with it open: reason "end"
            self._ship(rec, OPEN, ts)
        elif conn.initiator is None:
            self._ship(rec, reason, ts)
        elif reason in ("fin", "rst"):
            self.lingering.append((ts, rec, reason))
        else:
            self._finish(rec, ts, reason)
        while self.lingering and self.lingering[0][0] < ts - LINGER_NS:
            done, old, why = self.lingering.popleft()
            self._finish(old, done, why)

    # -- the two ways --------------------------------------------------------------------------

    def _piece(self, rec: Recorder) -> Piece:
        if rec.piece is None:
            conn = rec.conn
            rec.piece = Piece(self.index, self.sink.first or 0, self.pieces, conn.a, conn.b, conn.initiator,
                              conn.first_ts_ns, list(conn.start_seq))
            self.pieces += 1
        return rec.piece

    def _finish(self, rec: Recorder, ts: int, reason: str) -> None:
        """A connection wholly inside this file: its exchanges, here."""
        replay = Replayer(self.pipeline.tls(rec.conn))
        replay.play(rec.events)
        replay.close(ts, reason)
        self.gaps += replay.gaps
        self.gap_bytes += replay.gap_bytes
        self.facts.add(self.pipeline.take())
        piece = self._piece(rec)
        piece.end, piece.close_ts, piece.last_ts, piece.interior = reason, ts, ts, True
        self._meta(piece, INTERIOR)

    def _ship(self, rec: Recorder, end: str, ts: int) -> None:
        piece = self._piece(rec)
        piece.end, piece.close_ts = end, ts
        piece.starts = list(rec.conn.start_seq)
        piece.closer = rec.conn.closer
        if end == OPEN:
            piece.nxt, piece.clean, piece.last_ts, piece.tail, piece.fins = self.edges[rec.conn.id]
        else:
            piece.last_ts = ts
            piece.tail = len(rec.events)
        piece.events = len(rec.events)
        if piece.mid:
            piece.lead = lead_bytes(rec.events, piece.tail)
        part, flow = self._meta(piece, PIECE)
        self._events(part, flow, rec.events)

    def _meta(self, piece: Piece, kind: int) -> tuple[int, bytes]:
        flow = flow_bytes(piece.a[0], piece.a[1], piece.b[0], piece.b[1])
        part = self.placement(flow)
        self.rows.add(part, flow, 0, piece.forder, self.index, piece.index, kind, data=dumps(piece))
        return part, flow

    def _events(self, part: int, flow: bytes, events: list) -> None:
        cols = self.rows.columns
        k = len(events)
        n = self.n
        for col, value in zip(cols[:5], (part, flow, 1, self.sink.first or 0, self.index)):
            col.extend([value] * k)
        cols[5].extend(range(n, n + k))
        self.n = n + k
        cols[6].extend([e[0] for e in events])
        cols[7].extend([e[1] for e in events])
        cols[8].extend([e[2] for e in events])
        cols[9].extend([len(e[3]) if e[0] == DATA else e[3] for e in events])
        cols[10].extend([e[3] if e[0] == DATA else None for e in events])
        self.rows.bytes += sum(len(e[3]) for e in events if e[0] == DATA)

    # -- the file ------------------------------------------------------------------------------

    def batches(self):
        stats = CaptureStats()
        report = FileReport(self.index, self.path)
        reader = None
        try:
            reader = CaptureReader(self.path, stats)
            for _ in reader.feed(self.sink):
                if self.rows.bytes >= BATCH_BYTES:
                    yield self.rows.take()
        except KwireError as exc:
            report.error = str(exc)
        except OSError as exc:  # pragma: no cover - the capture layer maps I/O errors to CaptureError
            report.error = f"{self.path}: {exc.strerror or exc}"
        finally:
            if reader is not None:
                reader.close()
        self._end()
        report.packets, report.captured_bytes = stats.packets, stats.captured_bytes
        report.wire_bytes, report.truncated = stats.wire_bytes, stats.truncated
        report.first_ts_ns, report.last_ts_ns = self.sink.first, self.sink.last
        report.linktypes = sorted(stats.linktypes)
        report.net = self.net.flat()
        self._results(report)
        yield self.rows.take()

    def _end(self) -> None:
        """The file's end: what each open connection's TCP state is there, then end it (the tail)."""
        end = self.sink.last or 0
        while self.lingering and self.lingering[0][0] < end - LINGER_NS:
            done, old, why = self.lingering.popleft()
            self._finish(old, done, why)
        for ts, rec, reason in self.lingering:  # closed near the end: the next file may matter
            self._ship(rec, reason, ts)
        self.lingering.clear()
        for conn, nxt, clean, last_ts, fins in self.table.edges():
            # (a connection whose first bytes only ending the file hands over has no Recorder yet)
            rec = self.recorders.get(conn.id)
            self.edges[conn.id] = (nxt, clean, last_ts, len(rec.events) if rec is not None else 0, fins)
            if rec is None and clean and (nxt[0] is not None or nxt[1] is not None):
                # No byte yet (nor will ending the file hand one over), but sequence numbers known (a
                # handshake): the next file goes on from them.
                self._ship(Recorder(conn, self._closed), OPEN, end)
        self.flushing = True
        self.table.flush(end)
        self._fin_markers(end)

    def _fin_markers(self, end: int) -> None:
        """FINs on 4-tuples with no connection in this file (a connection's last, payload-less
        segments, after an earlier file had its bytes): a piece of no events per 4-tuple, OPEN, its
        FINs marked, so that the reduce side closes the connection at "fin" as one pass would."""
        for fins in self.table.take_loose_fins().values():
            (a, (seq_a, ts_a, b)), *rest = fins.items()
            seq_b, ts_b = rest[0][1][:2] if rest else (None, ts_a)
            piece = Piece(self.index, self.sink.first or 0, self.pieces, a, b, None, min(ts_a, ts_b),
                          [seq_a, seq_b], OPEN, end, max(ts_a, ts_b), [seq_a, seq_b], True, 0, 0,
                          fins=[True, bool(rest)], closer=0)  # a: the first FIN's sender
            self.pieces += 1
            self._meta(piece, PIECE)

    def _results(self, report: FileReport) -> None:
        result = PartitionResult(self.facts.aggregator, members=self.facts.members)
        result.add_run(self.pipeline)
        tcp = self.table.counters()
        tcp["gaps"], tcp["gap_bytes"] = self.gaps, self.gap_bytes  # those of connections finished here
        add_counts(result.tcp, tcp)
        home = self.index % self.parts
        rows = self.rows
        rows.add(home, b"", 1, 0, self.index, 0, RESULT, data=dumps(result))
        exchanges, partitions = self.facts.take_tables()
        if exchanges is not None:
            rows.add(home, b"", 1, 0, self.index, 1, XROWS, data=table_bytes(exchanges))
        if partitions is not None:
            rows.add(home, b"", 1, 0, self.index, 2, PROWS, data=table_bytes(partitions))
        blob = dumps(report)
        for part in range(self.parts):
            rows.add(part, b"", 0, 0, self.index, 0, REPORT, data=blob)
