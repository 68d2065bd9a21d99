"""Holding bytes for the consumer: after a data() call that answers n, TCP holds that direction's
in-order bytes until n are in and hands them over at once (a tuple of the pieces) at the completing
segment's time; held bytes go out before anything else of their direction (a gap, the close)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.net.segment import ACK, FIN, RST, SYN
from kwire.tcp.recorder import StreamClosed, StreamData, StreamGap

from tests.tcp.build import EventTable, c2s, data_of, pieces, s2c

ISN = 1000
SISN = 50000


def opened(table: EventTable):
    table.feed(c2s(ISN, flags=SYN, ts=1))
    table.feed(s2c(SISN, ack=ISN + 1, flags=SYN | ACK, ts=2))
    table.feed(c2s(ISN + 1, ack=SISN + 1, ts=3))
    return table._flows[1].conn


def asking(table: EventTable, want: int, first: bytes = b"h"):
    """An open connection whose consumer answered `want` for the broker's direction, after `first`."""
    conn = opened(table)
    table.want(conn, 1, want)
    assert data_of(table.feed(s2c(SISN + 1, first, ack=ISN + 1, ts=4)), 1) == first
    return conn


def test_held_until_the_want_is_met_then_one_delivery_at_completing_time():
    t = EventTable()
    conn = asking(t, 25)
    t.want(conn, 1, 0)
    events = []
    for i in range(3):
        events += t.feed(s2c(SISN + 2 + 10 * i, bytes([i]) * 10, ack=ISN + 1, ts=10 + i))
    data = [e for e in events if isinstance(e, StreamData)]
    assert len(data) == 1 and data[0].ts_ns == 12
    assert type(data[0].data) is tuple and len(data[0].data) == 3  # the pieces, joined by the consumer
    assert b"".join(data[0].data) == b"\x00" * 10 + b"\x01" * 10 + b"\x02" * 10
    # the consumer answered 0: the next segment is handed over at once
    assert bytes(t.feed(s2c(SISN + 32, b"x", ack=ISN + 1, ts=13))[0].data) == b"x"


def test_a_consumer_that_never_asks_gets_every_segment_as_it_comes():
    t = EventTable()
    opened(t)
    events = []
    for i in range(3):
        events += t.feed(s2c(SISN + 1 + 10 * i, bytes([i]) * 10, ack=ISN + 1, ts=10 + i))
    assert [(e.ts_ns, e.data) for e in events] == [(10, b"\x00" * 10), (11, b"\x01" * 10), (12, b"\x02" * 10)]


def test_other_direction_is_not_held():
    t = EventTable()
    asking(t, 1000)
    assert t.feed(s2c(SISN + 2, b"a" * 10, ack=ISN + 1, ts=5)) == []
    ev = t.feed(c2s(ISN + 1, b"req", ack=SISN + 12, ts=6))
    assert [(e.direction, bytes(e.data)) for e in ev] == [(0, b"req")]


def test_gap_delivers_held_bytes_first():
    t = EventTable()
    asking(t, 1000)
    t.feed(s2c(SISN + 2, b"a" * 10, ack=ISN + 1, ts=5))
    t.feed(s2c(SISN + 22, b"c" * 10, ack=ISN + 1, ts=6))  # out of order: 10 bytes missing
    ev = t.flush(7)
    assert pieces(ev, 1) == [("data", b"a" * 10), ("gap", 10), ("data", b"c" * 10)]
    held = [e for e in ev if isinstance(e, StreamData) and e.direction == 1][0]
    assert held.ts_ns == 5  # the time its last byte was captured


def test_close_and_rst_deliver_held_bytes():
    for last in (s2c(SISN + 12, ack=ISN + 1, flags=RST, ts=9),
                 s2c(SISN + 12, ack=ISN + 1, flags=FIN | ACK, ts=9)):
        t = EventTable()
        asking(t, 1000)
        t.feed(s2c(SISN + 2, b"a" * 10, ack=ISN + 1, ts=5))
        ev = t.feed(last)
        ev += t.feed(c2s(ISN + 1, ack=SISN + 13, flags=FIN | ACK, ts=10))
        ev += t.flush(11)
        assert data_of(ev, 1) == b"a" * 10
        assert isinstance(ev[-1], StreamClosed)


def test_slow_path_delivery_asks_the_consumer_again():
    t = EventTable()
    conn = asking(t, 15)
    t.feed(s2c(SISN + 2, b"a" * 10, ack=ISN + 1, ts=5))
    t.feed(s2c(SISN + 22, b"c" * 10, ack=ISN + 1, ts=6))  # buffered out of order
    t.want(conn, 1, 7)
    ev = t.feed(s2c(SISN + 12, b"b" * 10, ack=ISN + 1, ts=7))  # fills the hole: slow path
    assert data_of(ev, 1) == b"a" * 10 + b"b" * 10 + b"c" * 10
    assert t._flows[1].halves[1].want == 7  # what the consumer answered last


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=30), st.lists(st.integers(0, 2000), max_size=30),
       st.randoms(use_true_random=False))
def test_any_wants_give_the_same_bytes(sizes, wants, rnd):
    stream = bytes(rnd.getrandbits(8) for _ in range(sum(sizes)))
    segs = []
    pos = 0
    for i, n in enumerate(sizes):
        segs.append(s2c(SISN + 1 + pos, stream[pos:pos + n], ack=ISN + 1, ts=10 + i))
        pos += n
    if len(segs) > 3 and rnd.random() < 0.5:  # some reordering
        i = rnd.randrange(len(segs) - 1)
        segs[i], segs[i + 1] = segs[i + 1], segs[i]
    t = EventTable()
    conn = opened(t)
    ev = []
    for i, s in enumerate(segs):
        if i < len(wants):
            t.want(conn, 1, wants[i])
        ev += t.feed(s)
    ev += t.flush(100)
    assert data_of(ev, 1) == stream
    assert not [e for e in ev if isinstance(e, StreamGap)]
