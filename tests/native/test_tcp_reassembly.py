"""One direction's reassembly, driven through FlowTable: order, copies, overlaps, holes, wraparound."""

from __future__ import annotations

import pytest

from kwire.net.segment import ACK, FIN, SYN
from kwire.tcp.recorder import StreamData, StreamGap

from kwire.native.tcp_outoforder import ACK_GRACE_SEGMENTS, count_differences, signed_delta

from tests.tcp.build import EventTable, c2s, data_of, feed_all, pieces, s2c

ISN = 1000
SISN = 50000


def grace(ts=100):
    """Pure ACKs from the client, enough for an acknowledged hole's grace to run out."""
    return [c2s(ISN + 1, ack=SISN + 1, ts=ts) for _ in range(ACK_GRACE_SEGMENTS)]


def handshake(isn=ISN, sisn=SISN):
    return [c2s(isn, flags=SYN), s2c(sisn, ack=isn + 1, flags=SYN | ACK), c2s(isn + 1, ack=sisn + 1)]


def test_signed_delta_wraps():
    assert signed_delta(5, 3) == 2
    assert signed_delta(3, 5) == -2
    assert signed_delta(2, 0xFFFFFFFE) == 4
    assert signed_delta(0xFFFFFFFE, 2) == -4
    assert signed_delta(0x80000000, 0) == -0x80000000


def test_count_differences():
    assert count_differences(b"abcd", b"abcd") == 0
    assert count_differences(b"abcd", b"xbcy") == 2
    assert count_differences(b"\x00\x00", b"\x00\x01") == 1
    assert count_differences(b"", b"") == 0


def test_in_order_each_segment_delivered_at_once():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"hello", ts=10),
        s2c(SISN + 1, b"hi", ack=ISN + 6, ts=11),
        c2s(ISN + 6, b" world", ack=SISN + 3, ts=12),
    ])
    assert [(type(e), e.direction, e.ts_ns, e.data) for e in ev] == [
        (StreamData, 0, 10, b"hello"), (StreamData, 1, 11, b"hi"), (StreamData, 0, 12, b" world")]
    conn = ev[0].conn
    assert conn.initiator == 0 and conn.a == ("\x0a\x00\x00\x01".encode("latin1"), 40000)
    c = t.counters()
    assert c["segments"] == 6 and c["bytes"] == 13 and c["gaps"] == 0 and c["connections"] == 1


def test_reordered_delivered_when_hole_fills_with_its_time():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 6, b"world", ts=10),
        c2s(ISN + 11, b"!", ts=11),
        c2s(ISN + 1, b"hello", ts=12),
    ])
    assert [(e.ts_ns, e.data) for e in ev] == [(12, b"helloworld!")]
    assert t.counters()["out_of_order_segments"] == 2


def test_duplicates_delivered_once():
    t = EventTable()
    s = c2s(ISN + 1, b"hello", ts=10)
    later = c2s(ISN + 6, b"world", ts=11)
    ev = feed_all(t, handshake() + [later, later, s, s, later])
    assert data_of(ev, 0) == b"helloworld"
    c = t.counters()
    assert c["retransmitted_bytes"] == 15 and c["conflicting_bytes"] == 0


def test_overlap_first_copy_wins_and_conflicts_counted():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 5, b"EFGH"),          # buffered first copy of bytes 4..7
        c2s(ISN + 3, b"cdXXgHij"),      # overlaps it: 'XXg' differs from 'EFG', 'H' agrees
        c2s(ISN + 1, b"ab"),            # fills the hole
    ])
    assert data_of(ev, 0) == b"abcdEFGHij"
    c = t.counters()
    assert c["retransmitted_bytes"] == 4 and c["conflicting_bytes"] == 3


def test_overlap_spanning_several_buffered_runs():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 3, b"CD"),
        c2s(ISN + 7, b"GH"),
        c2s(ISN + 11, b"KL"),
        c2s(ISN + 2, b"bxdefghijklmn"),  # covers all three runs and the holes between them
        c2s(ISN + 1, b"a"),
    ])
    assert data_of(ev, 0) == b"abCDefGHijKLmn"
    c = t.counters()
    assert c["retransmitted_bytes"] == 6 and c["conflicting_bytes"] == 6


def test_retransmission_of_delivered_bytes_compared_with_last_run():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"hello"),
        c2s(ISN + 3, b"LLOwor"),  # 'llo' already delivered (differs), 'wor' new
        c2s(ISN + 1, b"hello"),   # older than the last run: counted, compared where it overlaps
    ])
    assert data_of(ev, 0) == b"hellowor"
    c = t.counters()
    assert c["retransmitted_bytes"] == 3 + 5
    assert c["conflicting_bytes"] == 3


@pytest.mark.parametrize("isn", [0xFFFFFFFF - 3, 0xFFFFFFFF, 0xFFFFFFFE])
def test_wraparound_in_order_and_reordered(isn):
    t = EventTable()
    base = isn + 1
    ev = feed_all(t, handshake(isn=isn) + [
        c2s(base, b"0123"),
        c2s(base + 8, b"89ab"),
        c2s(base + 4, b"4567"),
        c2s(base + 12, b"cdef"),
        c2s(base + 2, b"23"),  # an old copy across the wrap
    ])
    assert data_of(ev, 0) == b"0123456789abcdef"
    assert t.counters()["retransmitted_bytes"] == 2
    assert t.counters()["gaps"] == 0


def test_wraparound_gap_by_ack():
    t = EventTable()
    isn = 0xFFFFFFF0
    ev = feed_all(t, handshake(isn=isn) + [
        c2s(isn + 1, b"x" * 10),
        c2s(isn + 31, b"y" * 10),       # 20 bytes missing across the wrap
        s2c(SISN + 1, ack=isn + 41),
    ] + grace())
    assert pieces(ev, 0) == [("data", b"x" * 10), ("gap", 20), ("data", b"y" * 10)]


def test_gap_by_ack_then_buffered_data_follows():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"aaaa", ts=1),
        c2s(ISN + 9, b"cccc", ts=2),         # bytes 4..7 were never captured
        s2c(SISN + 1, ack=ISN + 5, ts=3),    # ack at the hole: nothing to say yet
        s2c(SISN + 1, ack=ISN + 13, ts=4),   # the server got them: lost, once the grace runs out
    ] + grace(ts=5))
    assert pieces(ev, 0) == [("data", b"aaaa"), ("gap", 4), ("data", b"cccc")]
    gap = [e for e in ev if isinstance(e, StreamGap)][0]
    assert gap.ts_ns == 5 and gap.size == 4
    assert [e.ts_ns for e in ev if isinstance(e, StreamData)] == [1, 5]
    # the late copy of the lost bytes is old news now
    ev = t.feed(c2s(ISN + 5, b"bbbb"))
    assert ev == [] and t.counters()["retransmitted_bytes"] == 4


def test_ack_seen_before_the_data_it_acknowledges_is_no_gap():
    # Capture order is not wire order: the server's ACK may be captured before the data it acks.
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"aaaa", ts=1),
        s2c(SISN + 1, ack=ISN + 13, ts=2),
        c2s(ISN + 9, b"cccc", ts=3),
        c2s(ISN + 5, b"bbbb", ts=4),
    ] + grace())
    assert pieces(ev, 0) == [("data", b"aaaa"), ("data", b"bbbbcccc")]
    assert t.counters()["gaps"] == 0


def test_gap_by_ack_with_nothing_buffered_and_several_holes():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"a"),
        c2s(ISN + 3, b"c"),
        c2s(ISN + 5, b"e"),
        s2c(SISN + 1, b"data", ack=ISN + 9),  # acks three bytes past everything we saw
    ] + grace())
    assert pieces(ev, 0) == [("data", b"a"), ("gap", 1), ("data", b"c"), ("gap", 1),
                             ("data", b"e"), ("gap", 3)]
    assert pieces(ev, 1) == [("data", b"data")]
    c = t.counters()
    assert c["gaps"] == 3 and c["gap_bytes"] == 5


def test_gap_by_buffer_limit():
    t = EventTable(max_buffer_per_direction=8)
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"aa"),
        c2s(ISN + 5, b"cccc"),   # 4 buffered
        c2s(ISN + 9, b"dddd"),   # 8 buffered: still within the bound
    ])
    assert pieces(ev, 0) == [("data", b"aa")]
    ev = t.feed(c2s(ISN + 13, b"e", ts=7))  # 9 > 8: the hole is given up
    assert pieces(ev, 0) == [("gap", 2), ("data", b"ccccdddde")]
    assert all(e.ts_ns == 7 for e in ev)
    c = t.counters()
    assert c["buffer_limit_hits"] == 1 and c["gap_bytes"] == 2


def test_buffer_limit_gives_up_only_as_many_holes_as_needed():
    t = EventTable(max_buffer_per_direction=4)
    ev = feed_all(t, handshake() + [
        c2s(ISN + 3, b"cc"),
        c2s(ISN + 7, b"ee"),
        c2s(ISN + 11, b"g"),  # 5 buffered: dropping the first hole frees 2, enough
    ])
    assert pieces(ev, 0) == [("gap", 2), ("data", b"cc")]
    ev = t.feed(c2s(ISN + 5, b"dd"))
    assert pieces(ev, 0) == [("data", b"ddee")]


def test_handshake_not_seen_first_segment_sender_is_a():
    t = EventTable()
    ev = feed_all(t, [
        s2c(7000, b"response", ack=123, ts=5),
        c2s(123, b"request", ack=7008, ts=6),
    ])
    conn = ev[0].conn
    assert conn.initiator is None
    assert conn.a[1] == 9092 and conn.b[1] == 40000
    assert pieces(ev, 0) == [("data", b"response")]
    assert pieces(ev, 1) == [("data", b"request")]


def test_pure_ack_on_unknown_tuple_opens_nothing():
    t = EventTable()
    assert t.feed(c2s(5, ack=9)) == []
    assert len(t) == 0 and t.counters()["untracked_segments"] == 1
    assert t.counters()["segments"] == 1


def test_mid_stream_pure_ack_does_not_start_direction():
    t = EventTable()
    ev = feed_all(t, [
        s2c(7000, b"x", ack=500),
        c2s(499, ack=7001),           # a keepalive: one below the real sequence number
        c2s(500, b"req", ack=7001),
    ])
    assert pieces(ev, 1) == [("data", b"req")]


def test_synack_only_receiver_is_client():
    t = EventTable()
    ev = feed_all(t, [
        s2c(SISN, ack=ISN + 1, flags=SYN | ACK, ts=1),
        c2s(ISN + 5, b"efgh", ack=SISN + 1, ts=2),   # bytes 0..3 of the client are missing
        s2c(SISN + 1, b"resp", ack=ISN + 9, ts=3),
    ] + grace())
    conn = ev[0].conn
    assert conn.initiator == 0
    assert conn.a[1] == 40000
    assert pieces(ev, 0) == [("gap", 4), ("data", b"efgh")]
    assert pieces(ev, 1) == [("data", b"resp")]
    # the SYN turning up late is recognised as this connection's own
    ev = t.feed(c2s(ISN, flags=SYN, ts=4))
    assert ev == [] and len(t) == 1


def test_syn_retransmitted_is_ignored():
    t = EventTable()
    ev = feed_all(t, handshake() + [c2s(ISN, flags=SYN), c2s(ISN + 1, b"x")])
    assert data_of(ev, 0) == b"x" and t.counters()["connections"] == 1


def test_syn_with_payload():
    t = EventTable()
    ev = feed_all(t, [c2s(ISN, b"fast", flags=SYN), s2c(SISN, ack=ISN + 5, flags=SYN | ACK),
                      c2s(ISN + 5, b"open", ack=SISN + 1)])
    assert data_of(ev, 0) == b"fastopen" and t.counters()["gaps"] == 0


def test_pre_start_segment_dropped_and_counted():
    t = EventTable()
    ev = feed_all(t, [
        c2s(1000, b"BBBB"),      # first seen: the direction starts at 1000
        c2s(996, b"AAAA"),       # arrived late, wholly before the start
        c2s(998, b"aaBBBBCC"),   # straddles the start
    ])
    assert data_of(ev, 0) == b"BBBBCC"
    c = t.counters()
    assert c["pre_start_segments"] == 2 and c["pre_start_bytes"] == 6
    assert c["retransmitted_bytes"] == 4 and c["conflicting_bytes"] == 0


def test_truncated_payload_tail_is_a_gap():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"x" * 100, truncated=True, ts=1),    # 1000 bytes on the wire
        c2s(ISN + 1001, b"y" * 100, truncated=True, ts=2),
        c2s(ISN + 2001, b"z" * 10, ts=3),
    ])
    assert pieces(ev, 0) == [("data", b"x" * 100), ("gap", 900), ("data", b"y" * 100),
                             ("gap", 900), ("data", b"z" * 10)]
    c = t.counters()
    assert c["truncated_segments"] == 2 and c["gap_bytes"] == 1800


def test_fin_before_last_data_waits_for_it():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"ab"),
        c2s(ISN + 5, flags=FIN | ACK),   # FIN after bytes 2..3, which come late
        c2s(ISN + 3, b"cd"),
        s2c(SISN + 1, ack=ISN + 6, flags=FIN | ACK),
    ])
    assert pieces(ev, 0) == [("data", b"ab"), ("data", b"cd")]
    assert ev[-1].reason == "fin"
    assert t.counters()["gaps"] == 0


def test_data_past_fin_is_taken_and_counted():
    """A sender that goes on after its FIN (TCP forbids it; a hostile or broken one does it): the bytes
    are what it sent, so they are handed over (their answer then has its request), and counted."""
    t = EventTable()
    ev = feed_all(t, handshake() + [c2s(ISN + 1, b"ab", flags=FIN | ACK), c2s(ISN + 4, b"zz")])
    assert data_of(ev, 0) == b"abzz"
    assert t.counters()["after_fin_segments"] == 1
    # the same bytes reusing the FIN's own sequence number
    t = EventTable()
    ev = feed_all(t, handshake() + [c2s(ISN + 1, b"ab", flags=FIN | ACK), c2s(ISN + 3, b"zz")])
    assert data_of(ev, 0) == b"abzz"


def test_a_fin_behind_bytes_already_buffered_is_not_the_end():
    t = EventTable()
    ev = feed_all(t, handshake() + [c2s(ISN + 1, b"ab"), c2s(ISN + 5, b"ef"),  # 2 bytes missing
                                     c2s(ISN + 3, flags=FIN | ACK), c2s(ISN + 3, b"cd")])
    ev += t.flush(100)
    assert data_of(ev, 0) == b"abcdef"
    assert t.counters()["after_fin_segments"] == 1


def test_ack_of_the_fin_does_not_count_the_fin_as_a_missing_byte():
    t = EventTable()
    ev = feed_all(t, handshake() + [
        c2s(ISN + 1, b"ab"),
        c2s(ISN + 7, flags=FIN | ACK),     # 4 bytes missing before the FIN
        s2c(SISN + 1, ack=ISN + 8),        # the server acks the FIN
    ] + grace())
    assert pieces(ev, 0) == [("data", b"ab"), ("gap", 4)]
    assert t.counters()["gap_bytes"] == 4


def test_one_byte_segments_in_reverse_order():
    stream = bytes(range(256)) * 4
    t = EventTable()
    segs = [c2s(ISN + 1 + i, stream[i:i + 1], ts=i) for i in range(len(stream))]
    ev = feed_all(t, handshake() + segs[::-1])
    assert [e.data for e in ev] == [stream]  # one run, delivered by the first byte's arrival
    assert ev[0].ts_ns == 0
    assert t.counters()["out_of_order_segments"] == len(stream) - 1
