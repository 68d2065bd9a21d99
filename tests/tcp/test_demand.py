"""Connection.demand: in-order bytes held back until the consumer's demand is met, then delivered as
one StreamData at the completing segment's time; held bytes go out before any other event of their
direction. And FlowTable.feed_packet gives the same events as decode_segment + feed."""

from __future__ import annotations

import random
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.capture.packet import Packet
from kwire.net.decode import DecodeCounters, decode_segment
from kwire.net.segment import ACK, FIN, PSH, RST, SYN
from kwire.tcp.events import StreamClosed, StreamData, StreamGap
from kwire.tcp.flows import NOT_TAKEN, TAKEN, TAKEN_EVENTS, TAKEN_QUIETLY, FlowTable

from tests.tcp.build import CLIENT, SERVER, c2s, data_of, pieces, s2c

ISN = 1000
SISN = 50000


def opened(table: FlowTable):
    table.feed(c2s(ISN, flags=SYN, ts=1))
    table.feed(s2c(SISN, ack=ISN + 1, flags=SYN | ACK, ts=2))
    table.feed(c2s(ISN + 1, ack=SISN + 1, ts=3))
    return table._flows[1].conn


def test_held_until_demand_met_then_one_delivery_at_completing_time():
    t = FlowTable()
    conn = opened(t)
    conn.demand[1] = 25
    events = []
    for i in range(3):
        events += t.feed(s2c(SISN + 1 + 10 * i, bytes([i]) * 10, ack=ISN + 1, ts=10 + i))
    data = [e for e in events if isinstance(e, StreamData)]
    assert len(data) == 1 and data[0].ts_ns == 12
    assert bytes(data[0].data) == b"\x00" * 10 + b"\x01" * 10 + b"\x02" * 10
    assert conn.demand[1] == 0
    # demand met: the next segment is delivered at once
    assert bytes(t.feed(s2c(SISN + 31, b"x", ack=ISN + 1, ts=13))[0].data) == b"x"


def test_other_direction_is_not_held():
    t = FlowTable()
    conn = opened(t)
    conn.demand[1] = 1000
    assert t.feed(s2c(SISN + 1, b"a" * 10, ack=ISN + 1, ts=5)) == []
    ev = t.feed(c2s(ISN + 1, b"req", ack=SISN + 11, ts=6))
    assert [(e.direction, bytes(e.data)) for e in ev] == [(0, b"req")]


def test_gap_delivers_held_bytes_first():
    t = FlowTable()
    conn = opened(t)
    conn.demand[1] = 1000
    t.feed(s2c(SISN + 1, b"a" * 10, ack=ISN + 1, ts=5))
    t.feed(s2c(SISN + 21, b"c" * 10, ack=ISN + 1, ts=6))  # out of order: 10 bytes missing
    ev = t.flush(7)
    assert pieces(ev, 1) == [("data", b"a" * 10), ("gap", 10), ("data", b"c" * 10)]
    held = [e for e in ev if isinstance(e, StreamData) and e.direction == 1][0]
    assert held.ts_ns == 5  # the time its last byte was captured


def test_close_and_rst_deliver_held_bytes():
    for last in (s2c(SISN + 11, ack=ISN + 1, flags=RST, ts=9),
                 s2c(SISN + 11, ack=ISN + 1, flags=FIN | ACK, ts=9)):
        t = FlowTable()
        conn = opened(t)
        conn.demand[1] = 1000
        t.feed(s2c(SISN + 1, b"a" * 10, ack=ISN + 1, ts=5))
        ev = t.feed(last)
        ev += t.feed(c2s(ISN + 1, ack=SISN + 12, flags=FIN | ACK, ts=10))
        ev += t.flush(11)
        assert data_of(ev, 1) == b"a" * 10
        assert isinstance(ev[-1], StreamClosed)


def test_slow_path_delivery_resets_demand():
    t = FlowTable()
    conn = opened(t)
    conn.demand[1] = 15
    t.feed(s2c(SISN + 1, b"a" * 10, ack=ISN + 1, ts=5))
    t.feed(s2c(SISN + 21, b"c" * 10, ack=ISN + 1, ts=6))  # buffered out of order
    ev = t.feed(s2c(SISN + 11, b"b" * 10, ack=ISN + 1, ts=7))  # fills the hole: slow path
    assert data_of(ev, 1) == b"a" * 10 + b"b" * 10 + b"c" * 10
    assert conn.demand[1] == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=30), st.lists(st.integers(0, 2000), max_size=30),
       st.randoms(use_true_random=False))
def test_any_demands_give_the_same_bytes(sizes, demands, rnd):
    stream = bytes(rnd.getrandbits(8) for _ in range(sum(sizes)))
    segs = []
    pos = 0
    for i, n in enumerate(sizes):
        segs.append(s2c(SISN + 1 + pos, stream[pos:pos + n], ack=ISN + 1, ts=10 + i))
        pos += n
    if len(segs) > 3 and rnd.random() < 0.5:  # some reordering
        i = rnd.randrange(len(segs) - 1)
        segs[i], segs[i + 1] = segs[i + 1], segs[i]
    t = FlowTable()
    conn = opened(t)
    ev = []
    for i, s in enumerate(segs):
        if i < len(demands):
            conn.demand[1] = demands[i]
        ev += t.feed(s)
    ev += t.flush(100)
    assert data_of(ev, 1) == stream
    assert not [e for e in ev if isinstance(e, StreamGap)]


# ---- feed_packet == decode_segment + feed --------------------------------------------------------


def ether_ipv4_tcp(src, dst, seq, ack, flags, payload, options=b"", ihl_options=b"", frag=0x4000):
    tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq, ack, (5 + len(options) // 4) << 4, flags, 65535, 0, 0)
    tcp += options + payload
    ihl = 5 + len(ihl_options) // 4
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(ihl_options) + len(tcp), 1, frag, 64, 6, 0,
                     src[0], dst[0]) + ihl_options
    return b"\x00" * 12 + b"\x08\x00" + ip + tcp


def random_packets(rng: random.Random, n: int) -> list[Packet]:
    out = []
    seq = {0: ISN, 1: SISN}
    out.append(Packet(1, 1, ether_ipv4_tcp(CLIENT, SERVER, ISN, 0, SYN, b""), 0))
    out.append(Packet(2, 1, ether_ipv4_tcp(SERVER, CLIENT, SISN, ISN + 1, SYN | ACK, b""), 0))
    seq = {0: ISN + 1, 1: SISN + 1}
    for i in range(n):
        d = rng.randrange(2)
        src, dst = (CLIENT, SERVER) if d == 0 else (SERVER, CLIENT)
        payload = bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 10, 100))))
        s = seq[d] + rng.choice((0, 0, 0, 0, 5, -5))
        flags = rng.choice((ACK, ACK | PSH, ACK, ACK | FIN, 0))
        opts = rng.choice((b"", b"\x01\x01\x08\x0a" + b"\x00" * 8))
        frame = ether_ipv4_tcp(src, dst, s & 0xFFFFFFFF, seq[1 - d], flags, payload, options=opts,
                               ihl_options=rng.choice((b"", b"", b"\x01\x01\x01\x00")))
        if rng.random() < 0.05:
            frame = frame[:rng.randrange(len(frame))]
        out.append(Packet(10 + i, rng.choice((1, 1, 1, 101)) if rng.random() < 0.9 else 1, frame, len(frame)))
        seq[d] = (s + len(payload)) & 0xFFFFFFFF
    return out


def describe(events):
    return [(type(e).__name__, getattr(e, "direction", None), e.ts_ns,
             bytes(e.data) if isinstance(e, StreamData) else getattr(e, "size", getattr(e, "reason", None)))
            for e in events]


def against_decode_then_feed(seed: int, rounds: int, wants: tuple, fast) -> None:
    """Random packets and consumer demands through decode_segment + feed (the reference) and through
    `fast(table, packet, counters) -> events`: the same events, counters and state."""
    rng = random.Random(seed)
    for _ in range(rounds):
        packets = random_packets(rng, 80)
        a, b = FlowTable(), FlowTable()
        ca, cb = DecodeCounters(), DecodeCounters()
        ea, eb = [], []
        for p in packets:
            if rng.random() < 0.4:  # the same demand on both tables
                want = rng.choice(wants)
                d = rng.randrange(2)
                for table in (a, b):
                    for flow in table._flows.values():
                        flow.conn.demand[d] = want
            seg = decode_segment(p, ca)
            if seg is not None:
                ea += a.feed(seg)
            eb += fast(b, p, cb)
        ea += a.flush(1000)
        eb += b.flush(1000)
        assert describe(ea) == describe(eb)
        assert ca == cb
        assert a.counters() == b.counters()


def test_feed_packet_matches_decode_then_feed():
    against_decode_then_feed(5, 40, (0, 1, 50, 500), lambda table, p, counters: table.feed_packet(p, counters))


def test_take_ethernet_does_what_decode_then_feed_does():
    """What the readers do: offer the packet to take_ethernet, feed it the normal way when not taken."""
    results = {NOT_TAKEN: 0, TAKEN: 0, TAKEN_EVENTS: 0, TAKEN_QUIETLY: 0}

    def fast(table, p, counters):
        taken = NOT_TAKEN
        if p.linktype == 1 and len(p.data) >= p.wire_len:
            taken = table.take_ethernet(p.ts_ns, b"pad" + p.data + b"pad", 3, 3 + len(p.data))
        results[taken] += 1
        if taken == TAKEN_EVENTS:
            return table.taken
        if taken in (TAKEN, TAKEN_QUIETLY):
            return []
        return table.feed(seg) if (seg := decode_segment(p, counters)) is not None else []

    against_decode_then_feed(11, 60, (0, 1, 50, 500, 5000), fast)
    assert min(results.values()) > 10, results  # every outcome was exercised


# ---- take_ethernet ------------------------------------------------------------------------------


def test_pieces_delivered_as_a_tuple_to_a_consumer_that_asks():
    for pieces in (False, True):
        t = FlowTable()
        conn = opened(t)
        conn.pieces = pieces
        conn.demand[1] = 25
        events = []
        for i in range(3):
            events += t.feed(s2c(SISN + 1 + 10 * i, bytes([i]) * 10, ack=ISN + 1, ts=10 + i))
        (data,) = [e.data for e in events if isinstance(e, StreamData)]
        assert (type(data) is tuple) == pieces
        joined = b"".join(data) if pieces else data
        assert joined == b"\x00" * 10 + b"\x01" * 10 + b"\x02" * 10


def test_take_ethernet_declines_what_needs_the_full_path():
    t = FlowTable()
    syn = ether_ipv4_tcp(CLIENT, SERVER, ISN, 0, SYN, b"")
    assert t.take_ethernet(1, syn, 0, len(syn)) == NOT_TAKEN  # unknown 4-tuple, SYN
    t.feed_packet(Packet(1, 1, syn, len(syn)))
    t.feed_packet(Packet(2, 1, ether_ipv4_tcp(SERVER, CLIENT, SISN, ISN + 1, SYN | ACK, b""), 0))
    conn = t._flows[1].conn
    data = ether_ipv4_tcp(CLIENT, SERVER, ISN + 1, SISN + 1, ACK, b"x" * 10)
    assert t.take_ethernet(3, data, 0, len(data)) == TAKEN_EVENTS  # no demand: delivered
    assert [type(e) for e in t.taken] == [StreamData] and bytes(t.taken[0].data) == b"x" * 10
    conn.demand[0] = 100
    more = ether_ipv4_tcp(CLIENT, SERVER, ISN + 11, SISN + 1, ACK, b"y" * 10)
    assert t.take_ethernet(4, more, 0, len(more)) == TAKEN_QUIETLY  # inside a frame the consumer waits for
    fin = ether_ipv4_tcp(CLIENT, SERVER, ISN + 21, SISN + 1, ACK | FIN, b"")
    assert t.take_ethernet(5, fin, 0, len(fin)) == NOT_TAKEN
    fragment = ether_ipv4_tcp(CLIENT, SERVER, ISN + 21, SISN + 1, ACK, b"z", frag=0x2000)
    assert t.take_ethernet(7, fragment, 0, len(fragment)) == NOT_TAKEN
    options = ether_ipv4_tcp(CLIENT, SERVER, ISN + 21, SISN + 1, ACK, b"z", ihl_options=b"\x01\x01\x01\x00")
    assert t.take_ethernet(8, options, 0, len(options)) == NOT_TAKEN
    v6 = b"\x00" * 12 + b"\x86\xdd" + b"\x00" * 60
    assert t.take_ethernet(9, v6, 0, len(v6)) == NOT_TAKEN
