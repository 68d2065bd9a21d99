"""Building segments and reading event lists back, for the TCP tests."""

from __future__ import annotations

from kwire.net.segment import ACK, Segment
from kwire.tcp.events import StreamClosed, StreamData, StreamGap

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


def pieces(events, direction: int, conn_id: int | None = None) -> list:
    """The stream of one direction as [("data", bytes) | ("gap", size)]."""
    result = []
    for e in events:
        if isinstance(e, StreamClosed) or e.direction != direction:
            continue
        if conn_id is not None and e.conn.id != conn_id:
            continue
        if isinstance(e, StreamData):
            result.append(("data", bytes(e.data)))
        elif isinstance(e, StreamGap):
            result.append(("gap", e.size))
    return result


def data_of(events, direction: int) -> bytes:
    return b"".join(bytes(e.data) for e in events
                    if isinstance(e, StreamData) and e.direction == direction)


def closes(events) -> list[tuple[int, str]]:
    return [(e.conn.id, e.reason) for e in events if isinstance(e, StreamClosed)]
