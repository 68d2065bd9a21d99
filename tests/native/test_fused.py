"""kwire.native.fused.RecordFeed.record: the fast path gives exactly what the plain path (decode_record +
FlowTable.feed) gives, for random packets of every kind, with consumers asking TCP to hold bytes
at random; and it declines what it must leave to the plain path."""

from __future__ import annotations

import mmap
import random
import struct

import pytest

from kwire.capture.packet import Packet
from kwire.native.fused import RecordFeed
from kwire.native.net_decode import DecodeCounters, decode_segment
from kwire.net.segment import ACK, FIN, PSH, SYN
from kwire.native.tcp_flows import FlowTable
from kwire.tcp.recorder import StreamClosed, StreamData, StreamGap

CLIENT = (b"\x0a\x00\x00\x01", 40000)
SERVER = (b"\x0a\x00\x00\x02", 9092)
ISN = 1000
SISN = 50000


def ether_ipv4_tcp(src, dst, seq, ack, flags, payload, options=b"", ihl_options=b"", frag=0x4000):
    tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq, ack, (5 + len(options) // 4) << 4, flags, 65535, 0, 0)
    tcp += options + payload
    ihl = 5 + len(ihl_options) // 4
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(ihl_options) + len(tcp), 1, frag, 64, 6, 0,
                     src[0], dst[0]) + ihl_options
    return b"\x00" * 12 + b"\x08\x00" + ip + tcp


class ScriptedConsumers:
    """A stream factory whose consumers record what they get (as kwire.tcp.recorder events) and
    answer data() from one seeded random sequence: two paths that make the same calls in the same
    order get the same answers."""

    def __init__(self, seed: int, wants=(0, 1, 50, 500, 5000)):
        self.rng = random.Random(seed)
        self.wants = wants
        self.events: list = []

    def __call__(self, conn):
        return _Scripted(self, conn)


class _Scripted:
    def __init__(self, owner: ScriptedConsumers, conn):
        self.owner, self.conn = owner, conn

    def data(self, direction, ts_ns, data):
        self.owner.events.append(StreamData(self.conn, direction, ts_ns, data))
        return self.owner.rng.choice(self.owner.wants)

    def gap(self, direction, ts_ns, size):
        self.owner.events.append(StreamGap(self.conn, direction, ts_ns, size))

    def close(self, ts_ns, reason):
        self.owner.events.append(StreamClosed(self.conn, ts_ns, reason))


def describe(events):
    def data(e):
        return b"".join(map(bytes, e.data)) if type(e.data) is tuple else bytes(e.data)
    return [(type(e).__name__, getattr(e, "direction", None), e.ts_ns,
             data(e) if isinstance(e, StreamData) else getattr(e, "size", getattr(e, "reason", None)))
            for e in events]


def random_packets(rng: random.Random, n: int, tidy: bool = False) -> list[Packet]:
    """A connection's handshake, then n random packets: some out of order, cut, with FIN or options,
    of another link type (not when `tidy`: then in order, and mostly inside frames)."""
    out = [Packet(1, 1, ether_ipv4_tcp(CLIENT, SERVER, ISN, 0, SYN, b""), 0),
           Packet(2, 1, ether_ipv4_tcp(SERVER, CLIENT, SISN, ISN + 1, SYN | ACK, b""), 0)]
    seq = {0: ISN + 1, 1: SISN + 1}
    for i in range(n):
        d = rng.randrange(2)
        src, dst = (CLIENT, SERVER) if d == 0 else (SERVER, CLIENT)
        payload = bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 10, 100))))
        s = seq[d] + (0 if tidy else rng.choice((0, 0, 0, 0, 5, -5)))
        flags = rng.choice((ACK, ACK | PSH) if tidy else (ACK, ACK | PSH, ACK, ACK | FIN, 0))
        opts = rng.choice((b"", b"\x01\x01\x08\x0a" + b"\x00" * 8))
        frame = ether_ipv4_tcp(src, dst, s & 0xFFFFFFFF, seq[1 - d], flags, payload, options=opts,
                               ihl_options=rng.choice((b"", b"", b"\x01\x01\x01\x00")))
        if rng.random() < 0.05 and not tidy:
            frame = frame[:rng.randrange(len(frame))]
        linktype = 1 if tidy or rng.random() >= 0.9 else rng.choice((1, 1, 1, 101))
        out.append(Packet(10 + i, linktype, frame, len(frame)))
        seq[d] = (s + len(payload)) & 0xFFFFFFFF
    return out


class PlainBeside:
    """A RecordFeed and, beside it, a FlowTable fed the same packets through the plain path (decode, then
    feed), each with its scripted consumers; check() requires the same events and counters of both."""

    WANTS = (0, 50, 500, 5000, 5000, 5000)

    def __init__(self, round_: int):
        self.ref_consumers = ScriptedConsumers(round_, self.WANTS)
        self.fast_consumers = ScriptedConsumers(round_, self.WANTS)
        self.a, self.b = FlowTable(self.ref_consumers), FlowTable(self.fast_consumers)
        self.ca, self.cb = DecodeCounters(), DecodeCounters()
        self.plain: list = []
        self.feed = RecordFeed(self.b, self._fallback)

    def _fallback(self, packet) -> None:
        self.plain.append(packet)
        seg = decode_segment(packet, self.cb)
        if seg is not None:
            self.b.feed(seg)

    def plain_path(self, packet) -> int:
        """Feed `packet` to the reference table; how many packets the feed had left to the plain path."""
        seg = decode_segment(packet, self.ca)
        if seg is not None:
            self.a.feed(seg)
        return len(self.plain)

    def check(self) -> None:
        self.a.flush(1000)
        self.b.flush(1000)
        assert describe(self.ref_consumers.events) == describe(self.fast_consumers.events)
        assert self.ca == self.cb
        assert self.a.counters() == self.b.counters()


def buffer_of(kind: str, data: bytes):
    """`data` in the kind of buffer a reader hands record(): a file's chunk (bytes), a view of one, a live
    capture's ring (an mmap), a bytearray."""
    if kind == "mmap":
        ring = mmap.mmap(-1, len(data))
        ring.write(data)
        return ring
    return {"bytes": bytes, "memoryview": memoryview, "bytearray": bytearray}[kind](data)


BUFFERS = ["bytes", "memoryview", "mmap", "bytearray"]


@pytest.mark.parametrize("kind", BUFFERS)
def test_record_does_what_decode_then_feed_does(kind):
    outcomes = {"held": 0, "plain": 0, "fast": 0}
    rng = random.Random(11)
    for round_ in range(60):
        packets = random_packets(rng, 80, tidy=round_ % 2 == 1)
        side = PlainBeside(round_)
        for p in packets:
            before = side.plain_path(p)
            padded = buffer_of(kind, b"pad" + p.data + b"pad")  # the record sits inside a bigger read buffer
            if side.feed.record(p.ts_ns, p.linktype, padded, 3, 3 + len(p.data), p.wire_len):
                outcomes["held"] += 1
            else:
                outcomes["plain" if len(side.plain) > before else "fast"] += 1
        side.check()
    assert min(outcomes.values()) > 10, outcomes  # every path was exercised


def test_record_declines_what_needs_the_plain_path():
    table = FlowTable(ScriptedConsumers(0, wants=(100,)))
    plain = []
    feed = RecordFeed(table, lambda p: plain.append(p) or (table.feed(seg) if (seg := decode_segment(p)) else None))

    def offer(ts, frame):
        before = len(plain)
        held = feed.record(ts, 1, frame, 0, len(frame), len(frame))
        return "held" if held else ("plain" if len(plain) > before else "fast")

    assert offer(1, ether_ipv4_tcp(CLIENT, SERVER, ISN, 0, SYN, b"")) == "plain"  # unknown 4-tuple, SYN
    assert offer(2, ether_ipv4_tcp(SERVER, CLIENT, SISN, ISN + 1, SYN | ACK, b"")) == "plain"
    assert offer(3, ether_ipv4_tcp(CLIENT, SERVER, ISN + 1, SISN + 1, ACK, b"x" * 10)) == "fast"  # opens the consumer
    assert offer(4, ether_ipv4_tcp(CLIENT, SERVER, ISN + 11, SISN + 1, ACK, b"y" * 10)) == "held"  # it wants 100
    assert offer(5, ether_ipv4_tcp(CLIENT, SERVER, ISN + 21, SISN + 1, ACK | FIN, b"")) == "plain"
    assert offer(7, ether_ipv4_tcp(CLIENT, SERVER, ISN + 22, SISN + 1, ACK, b"z", frag=0x2000)) == "plain"
    assert offer(8, ether_ipv4_tcp(CLIENT, SERVER, ISN + 22, SISN + 1, ACK, b"z",
                                   ihl_options=b"\x01\x01\x01\x00")) == "plain"
    assert offer(9, b"\x00" * 12 + b"\x86\xdd" + b"\x00" * 60) == "plain"


@pytest.mark.parametrize("kind", BUFFERS)
def test_raw_ip_records_do_what_decode_then_feed_does(kind):
    """Packets without a link header (live capture on every interface hands them over so): the raw
    IPv4 branch of record() against the plain path, and it never asks for a run."""
    outcomes = {"plain": 0, "fast": 0}
    rng = random.Random(12)
    for round_ in range(40):
        packets = [Packet(p.ts_ns, 101, p.data[14:], max(0, p.wire_len - 14))
                   for p in random_packets(rng, 80, tidy=round_ % 2 == 1)]
        side = PlainBeside(round_)
        for p in packets:
            before = side.plain_path(p)
            padded = buffer_of(kind, b"pad" + p.data + b"pad")
            assert side.feed.record(p.ts_ns, 101, padded, 3, 3 + len(p.data), p.wire_len) is False
            outcomes["plain" if len(side.plain) > before else "fast"] += 1
        side.check()
    assert min(outcomes.values()) > 100, outcomes
