"""One TCP connection as one capture file saw it (a Piece), and how its bytes are played back.

A map task's FlowTable hands each connection's stream (kwire.tcp.stream) to a `Recorder`, which
writes the calls down as events: (DATA, direction, ts, bytes) and (GAP, direction, ts, size). The
Recorder always answers data() with 0, so TCP hands every in-order run over as it completes: the
events are what TCP would give any consumer, at the times it would give them.

`Piece` is what the map task knows of the connection beside its events: endpoints, who opened it
(a SYN in this file or not), where each direction's sequence numbers started (conn.start_seq), and how
it ended: closed in the file (reason, time, which direction closed first: `closer`), or still open at the file's
end, with each direction's
next sequence number, whether TCP's state there was clean (nothing buffered out of order, no hole
waiting for an acknowledged byte, no FIN), and `tail`: the events from that point on are what ending
the capture there made (holes declared, buffered bytes handed over): they are played only when the
connection really ends with this file, at the time it really ends.

`Replayer` plays events back into a real consumer (kwire.tls.TlsDetector -> kwire.kafka) exactly as
TCP would: it keeps what the consumer's data() asks for (the bytes it still needs of a direction)
and holds in-order bytes back until they are in, the rule of kwire.native.tcp_reassembly.HalfStream.hold,
so the consumer sees the calls and times it sees in `kwire stats`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kwire.spark.wire import DATA, GAP
from kwire.tcp.stream import Connection, StreamConsumer

OPEN = "open"  # Piece.end of a connection still open when its file ended


@dataclass(slots=True)
class Piece:
    file: int
    forder: int          # the file's first capture time: files are stitched in this order
    index: int           # the piece's rank among its file's pieces
    a: tuple             # (ip bytes, port): conn.a
    b: tuple
    initiator: int | None  # 0: the SYN (or SYN-ACK) was in this file; None: the file starts mid-stream
    first_ts: int        # conn.first_ts_ns
    starts: list         # conn.start_seq: each direction's first sequence number in this file (or None)
    end: str = OPEN      # OPEN, or the close reason ("fin", "rst", "idle", "reused")
    close_ts: int = 0    # when it closed (the file's end for OPEN)
    last_ts: int = 0     # its last segment, either way
    nxt: list = field(default_factory=lambda: [None, None])  # OPEN: each direction's next sequence number
    clean: bool = True   # OPEN: TCP's state at the file's end holds nothing but nxt (module docstring)
    events: int = 0      # how many events follow in the shuffle
    tail: int = 0        # events[tail:] were made by ending the file (OPEN only; == events otherwise)
    interior: bool = False  # finished in its map task: no events follow
    lead: list = field(default_factory=lambda: [0, 0])  # mid: each direction's DATA bytes before its first GAP
    fins: list = field(default_factory=lambda: [False, False])  # OPEN: each direction's FIN was in (with
                         # every byte before it) by the file's end: a chain whose both directions' were
                         # closed at "fin" (kwire.spark.stitch), as one pass over the capture closes it
    closer: int | None = None  # the direction whose FIN or RST came first in this file (conn.closer), or None

    @property
    def marker(self) -> bool:
        """A FIN marker: no events, only FINs seen on a 4-tuple with no connection in its file
        (kwire.spark.mapside)."""
        return self.events == 0 and self.initiator is None and self.end == OPEN and (self.fins[0] or self.fins[1])

    @property
    def mid(self) -> bool:
        """Opened without a handshake in its file: possibly the continuation of an earlier piece."""
        return self.initiator is None

    def flipped(self, a: tuple) -> bool:
        """Whether this piece's direction 0 is direction 1 of a connection whose `a` is given."""
        return self.a != a


MAX_SKIP = 1 << 20  # bytes a piece may repeat of the one before it (a retransmission across the edge)


def lead_bytes(events, upto: int) -> list:
    """Each direction's DATA bytes before its first GAP among events[:upto], counted up to MAX_SKIP:
    how much of its start a piece can drop as bytes TCP already had (kwire.spark.stitch)."""
    lead = [0, 0]
    open_ = [True, True]
    for i in range(upto):
        kind, direction, _, value = events[i]
        if not open_[direction]:
            continue
        if kind == DATA:
            lead[direction] += len(value)
            if lead[direction] >= MAX_SKIP:
                open_[direction] = False
        else:
            open_[direction] = False
        if not (open_[0] or open_[1]):
            break
    return lead


class Recorder:
    """The StreamConsumer of one connection in a map task: writes the calls down (module docstring)."""

    __slots__ = ("conn", "events", "closed", "piece")

    def __init__(self, conn: Connection, closed):
        self.conn = conn
        self.events: list[tuple] = []
        self.closed = closed  # closed(recorder, ts, reason): the owner's
        self.piece: Piece | None = None

    def data(self, direction: int, ts_ns: int, data) -> int:
        if type(data) is tuple:
            data = b"".join(data)
        self.events.append((DATA, direction, ts_ns, data))
        return 0

    def gap(self, direction: int, ts_ns: int, size: int) -> None:
        self.events.append((GAP, direction, ts_ns, size))

    def close(self, ts_ns: int, reason: str) -> None:
        self.closed(self, ts_ns, reason)


class Replayer:
    """Events -> a consumer, holding bytes back as TCP would (module docstring). `gaps` counts the
    gaps handed over (the run's TCP gap count)."""

    __slots__ = ("consumer", "want", "held", "held_ts", "gaps", "gap_bytes", "conn")

    def __init__(self, consumer: StreamConsumer, conn: Connection | None = None):
        self.consumer = consumer
        self.conn = conn  # the connection the consumer reads, when the replay made it (its closer is set at close)
        self.want = [0, 0]
        self.held: list[list] = [[], []]
        self.held_ts = [0, 0]
        self.gaps = self.gap_bytes = 0

    def data(self, direction: int, ts_ns: int, data) -> None:
        want = self.want[direction]
        n = len(data)
        if want > n:
            self.want[direction] = want - n
            self.held[direction].append(data)
            self.held_ts[direction] = ts_ns
            return
        held = self.held[direction]
        if held:
            held.append(data)
            data = tuple(held)
            self.held[direction] = []
        self.want[direction] = self.consumer.data(direction, ts_ns, data)

    def flush(self, direction: int) -> None:
        held = self.held[direction]
        if held:
            self.held[direction] = []
            data = held[0] if len(held) == 1 else tuple(held)
            self.want[direction] = self.consumer.data(direction, self.held_ts[direction], data)

    def gap(self, direction: int, ts_ns: int, size: int) -> None:
        self.flush(direction)
        self.want[direction] = 0
        self.gaps += 1
        self.gap_bytes += size
        self.consumer.gap(direction, ts_ns, size)

    def close(self, ts_ns: int, reason: str, closer: int | None = None) -> None:
        """Close, `closer` the direction whose FIN or RST came first (set on the connection first, as TCP sets it
        before it closes: kwire.native.tcp_flows)."""
        self.flush(0)
        self.flush(1)
        conn = self.conn
        if closer is not None and conn is not None and conn.closer is None:
            conn.closer = closer
        self.consumer.close(ts_ns, reason)

    def play(self, events, flip: bool = False, ts_ns: int | None = None) -> None:
        """Events as the Recorder wrote them (directions swapped with `flip`; every time replaced by
        `ts_ns` when given: a tail played at the time the connection really ends)."""
        for kind, direction, ts, value in events:
            if flip:
                direction = 1 - direction
            if ts_ns is not None:
                ts = ts_ns
            if kind == DATA:
                self.data(direction, ts, value)
            else:
                self.gap(direction, ts, value)
