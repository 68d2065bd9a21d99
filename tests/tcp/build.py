"""Building segments and reading event lists back, for the TCP tests."""

from __future__ import annotations

from kwire.net.segment import ACK, Segment
from kwire.native.tcp_flows import FlowTable
from kwire.tcp.recorder import StreamClosed, StreamData, StreamGap, StreamRecorder


class EventTable(FlowTable):
    """A FlowTable whose connections' consumers write down what they are handed: feed() and flush()
    return the events (kwire.tcp.recorder) each call caused. `want(conn, d, n)` makes the consumer of
    `conn` answer n to every data() of direction d from now on (TCP learns it at the next one)."""

    def __init__(self, **kw):
        self.recorder = StreamRecorder()
        super().__init__(self.recorder, **kw)

    def feed(self, seg) -> list:
        super().feed(seg)
        return self.recorder.take()

    def flush(self, ts_ns: int) -> list:
        super().flush(ts_ns)
        return self.recorder.take()

    def run(self, segments) -> list:
        """Feed every segment, then flush at the last capture time seen: every event."""
        events, last = [], 0
        for seg in segments:
            last = seg.ts_ns
            events += self.feed(seg)
        return events + self.flush(last)

    def want(self, conn, direction: int, n: int) -> None:
        self.recorder.wants.setdefault(conn.id, [0, 0])[direction] = n

CLIENT = (b"\x0a\x00\x00\x01", 40000)
SERVER = (b"\x0a\x00\x00\x02", 9092)
MASK = 0xFFFFFFFF


def seg(src, dst, seq, ack=0, flags=ACK, payload=b"", ts=0, truncated=False) -> Segment:
    return Segment(ts, src[0], src[1], dst[0], dst[1], seq & MASK, ack & MASK, flags, payload,
                   truncated)


def c2s(seq, payload=b"", ack=0, flags=ACK, ts=0, truncated=False) -> Segment:
    return seg(CLIENT, SERVER, seq, ack, flags, payload, ts, truncated)


def s2c(seq, payload=b"", ack=0, flags=ACK, ts=0, truncated=False) -> Segment:
    return seg(SERVER, CLIENT, seq, ack, flags, payload, ts, truncated)


def feed_all(table, segments) -> list:
    out = []
    for s in segments:
        out.extend(table.feed(s))
    return out


def joined(data) -> bytes:
    """StreamData.data as bytes (TCP hands held pieces over as a tuple)."""
    return b"".join(map(bytes, data)) if type(data) is tuple else bytes(data)


def pieces(events, direction: int, conn_id: int | None = None) -> list:
    """The stream of one direction as [("data", bytes) | ("gap", size)]."""
    result = []
    for e in events:
        if isinstance(e, StreamClosed) or e.direction != direction:
            continue
        if conn_id is not None and e.conn.id != conn_id:
            continue
        if isinstance(e, StreamData):
            result.append(("data", joined(e.data)))
        elif isinstance(e, StreamGap):
            result.append(("gap", e.size))
    return result


def data_of(events, direction: int) -> bytes:
    return b"".join(joined(e.data) for e in events
                    if isinstance(e, StreamData) and e.direction == direction)


def closes(events) -> list[tuple[int, str]]:
    return [(e.conn.id, e.reason) for e in events if isinstance(e, StreamClosed)]
