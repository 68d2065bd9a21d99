"""kwire.native.fused.RecordFeed.run: a run of classic pcap records held in one loop gives exactly what the
record-by-record path gives (events, counters, state, capture statistics), whatever the records
are: bulk transfers with interleaved ACKs, two connections taking turns, holes, retransmissions,
cut and damaged records, sweeps falling inside a run, chunk boundaries inside a run."""

from __future__ import annotations

import io
import random
import struct

import pytest

import kwire.capture.source as source
from kwire.capture.packet import Packet, RecordLayout
from kwire.capture.pcap import PcapReader
from kwire.capture.source import open_source
from kwire.capture.stats import CaptureStats
from kwire.native.fused import RecordFeed
from kwire.native.net_decode import DecodeCounters, decode_segment
from kwire.net.segment import ACK, FIN, PSH, RST
from kwire.native.tcp_flows import FlowTable

from tests.native.test_fused import ISN, SISN, ScriptedConsumers, describe, ether_ipv4_tcp

DEMANDS = (0, 1, 40, 700, 5000, 5000, 100_000, 100_000)
OTHER_CLIENT = (b"\x0a\x00\x00\x03", 40001)
SERVER = (b"\x0a\x00\x00\x02", 9092)
CLIENT = (b"\x0a\x00\x00\x01", 40000)


def pcap_bytes(records, nanosecond: bool = False, modified: bool = False) -> bytes:
    """A little-endian classic pcap file of (ts_ns, frame, wire_len) records."""
    magic = 0xA1B2CD34 if modified else (0xA1B23C4D if nanosecond else 0xA1B2C3D4)
    out = [struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 262144, 1)]
    for ts, frame, wire in records:
        frac = ts % 1_000_000_000 if nanosecond else ts % 1_000_000_000 // 1000
        out.append(struct.pack("<IIII", ts // 1_000_000_000, frac, len(frame), wire))
        if modified:
            out.append(b"\x00" * 8)
        out.append(frame)
    return b"".join(out)


def bulk_records(rng: random.Random, n: int) -> list:
    """Two connections (already open when the capture starts: mid-stream) taking turns: requests
    from the clients, bursts of response segments with ACKs between, and some disorder and
    damage inside the bursts."""
    # the brokers' sequence numbers pass 2**32 within the capture for some seeds
    server_isn = rng.choice((SISN, 2**32 - 20_000))
    conns = [{"c": client, "cseq": ISN + 1, "sseq": server_isn + 1} for client in (CLIENT, OTHER_CLIENT)]
    out = []

    def tcp_frame(src, dst, seq, ack, flags, payload, options=b""):
        return ether_ipv4_tcp(src, dst, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, flags, payload, options=options)
    ts = 1_700_000_000_000_000_000 + rng.randrange(10**9)
    c = conns[0]

    def add(frame, wire=None):
        nonlocal ts
        ts += rng.choice((1000,) * 30 + (50_000, 10_000_000, 400_000_000))  # sweeps fall inside runs
        wire = len(frame) if wire is None else wire
        damage = rng.random()
        if damage < 0.003:
            frame = frame[:rng.randrange(14, len(frame))]  # cut by the snap length
        elif damage < 0.005:
            wire = len(frame) - 3  # a record longer than on the wire
        elif damage < 0.008:
            frame = frame[:30] + b"\xff" * 4 + frame[34:]  # a damaged IP header
        elif damage < 0.01:
            frame = b"\x00" * 12 + b"\x86\xdd" + frame[14:]  # not IPv4
        elif damage < 0.012:
            frame = frame[:46] + bytes([0x40 | frame[46] & 0x0F]) + frame[47:]  # TCP data offset under 5
        elif damage < 0.016:
            frame += b"\xde\xad\xbe\xef"  # an Ethernet trailer (a captured FCS) after the IP packet
            wire = len(frame)
        elif damage < 0.022:
            frame = frame[:20] + b"\x20\x00" + frame[22:]  # a fragment (more fragments)
        elif damage < 0.024:
            frame = frame[:23] + b"\x11" + frame[24:]  # not TCP
        elif damage < 0.03:
            frame = frame[:47] + bytes([frame[47] | rng.choice((0x01, 0x02, 0x04))]) + frame[48:]  # FIN, SYN or RST
        out.append((ts, frame, wire))

    while len(out) < n:
        if rng.random() < 0.3:
            c = rng.choice(conns)
        payload = bytes(rng.randrange(256) for _ in range(rng.choice((1, 30))))
        add(tcp_frame(c["c"], SERVER, c["cseq"], c["sseq"], ACK | PSH, payload))
        c["cseq"] += len(payload)
        if rng.random() < 0.2:  # a one-shot connection, evicted by a sweep once idle
            add(tcp_frame((b"\x0a\x00\x01\x01", 30000 + len(out)), SERVER, 7, 9, ACK | PSH, b"q"))
        for _ in range(rng.randrange(1, 40)):  # a burst of the response
            if rng.random() < 0.1:  # a client ACK, sometimes acknowledging more than was seen
                ack = c["sseq"] + rng.choice((0, 0, 0, -100, 300))
                add(tcp_frame(c["c"], SERVER, c["cseq"], ack & 0xFFFFFFFF, ACK, b""))
            if rng.random() < 0.03:  # the other client's ACK
                o = conns[0] if c is conns[1] else conns[1]
                add(tcp_frame(o["c"], SERVER, o["cseq"], o["sseq"], ACK, b""))
            if rng.random() < 0.1:  # the other connection's turn for a segment
                o = conns[0] if c is conns[1] else conns[1]
                if o.get("ahead"):  # the segment before the one sent ahead: in order, not clean
                    add(tcp_frame(SERVER, o["c"], o["sseq"], o["cseq"], ACK, b"o" * 50))
                    o["sseq"] += 100
                    o["ahead"] = False
                elif rng.random() < 0.3:  # ahead of its time: held out of order
                    add(tcp_frame(SERVER, o["c"], o["sseq"] + 50, o["cseq"], ACK, b"O" * 50))
                    o["ahead"] = True
                else:
                    add(tcp_frame(SERVER, o["c"], o["sseq"], o["cseq"], ACK, b"o" * 50))
                    o["sseq"] += 50
            size = rng.choice((100, 100, 100, 37))
            seq = c["sseq"]
            shift = rng.choice((0,) * 80 + (-100, 100, 5))
            if shift > 0:  # a segment overtaken by the next one: it comes a little later
                missing = bytes(rng.randrange(256) for _ in range(shift))
                c.setdefault("late", []).append((rng.randrange(1, 4), seq, missing))
            seq += shift
            flags = rng.choice((ACK,) * 60 + (ACK | PSH, 0))
            ack = c["cseq"] + rng.choice((0,) * 60 + (7, -7))  # past what the client sent, or behind it
            payload = bytes(rng.randrange(256) for _ in range(size))
            add(tcp_frame(SERVER, c["c"], seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, flags, payload,
                               options=rng.choice((b"", b"\x01\x01\x08\x0a" + b"\x00" * 8))))
            c["sseq"] = max(c["sseq"], seq + size)
            late = []
            for wait, lseq, missing in c.get("late", ()):
                if wait > 1:
                    late.append((wait - 1, lseq, missing))
                else:
                    add(tcp_frame(SERVER, c["c"], lseq & 0xFFFFFFFF, c["cseq"], ACK, missing))
            c["late"] = late
        if rng.random() < 0.05:  # the connection ends; a new one from a new port takes its place
            add(tcp_frame(SERVER, c["c"], c["sseq"], c["cseq"], rng.choice((ACK | FIN, ACK | RST)), b""))
            c["c"] = (c["c"][0], c["c"][1] + 2)
            c["late"] = []
            c["ahead"] = False
    return out


class NoRuns(RecordFeed):
    __slots__ = ()

    def run(self, buf, pos, end, layout):
        return pos, 0


class Scripted:
    """Scripted consumers behind a FlowTable, fed packets the plain way (`plain`: decode, then feed)."""

    def __init__(self, seed: int):
        self.consumers = ScriptedConsumers(seed, DEMANDS)
        self.table = FlowTable(self.consumers, idle_timeout_ns=3_000_000_000)
        self.counters = DecodeCounters()
        self.last_ts = 0

    def plain(self, packet) -> None:
        self.last_ts = packet.ts_ns
        seg = decode_segment(packet, self.counters)
        if seg is not None:
            self.table.feed(seg)

    def finish(self, ts_ns: int | None = None) -> tuple:
        """(the consumers' events, TCP's counters) once the table is flushed past `ts_ns` (default:
        the last packet or segment time)."""
        table = self.table
        table.flush((max(self.last_ts, table.latest_ts()) if ts_ns is None else ts_ns) + 1)
        return describe(self.consumers.events), table.counters()


def reference(records, seed: int) -> tuple:
    scripted = Scripted(seed)
    for ts, frame, wire in records:
        scripted.plain(Packet(ts, 1, frame, wire))
    return *scripted.finish(records[-1][0]), scripted.counters


def through_reader(data: bytes, seed: int, run: bool) -> tuple:
    scripted = Scripted(seed)
    stats = CaptureStats()
    reader = PcapReader(open_source(io.BytesIO(data)), stats)
    for _ in reader.feed((RecordFeed if run else NoRuns)(scripted.table, scripted.plain)):
        pass
    return *scripted.finish(), scripted.counters, stats


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("chunk", [1 << 20, 700])
def test_runs_give_what_packet_by_packet_gives(seed, chunk, monkeypatch):
    monkeypatch.setattr(source, "CHUNK", chunk)
    rng = random.Random(seed)
    records = bulk_records(rng, 600)
    fmt = rng.choice(({}, {"nanosecond": True}, {"modified": True}))
    data = pcap_bytes(records, **fmt)
    events, tcp, net, stats = through_reader(data, seed, run=True)
    events_1, tcp_1, net_1, stats_1 = through_reader(data, seed, run=False)
    assert (events, tcp, stats) == (events_1, tcp_1, stats_1)
    # the time of the flush differs from the reference's (the reader's last packet), the rest not
    ref_events, ref_tcp, _ = reference(records, seed)
    assert [e[:2] for e in events] == [e[:2] for e in ref_events]
    assert tcp == ref_tcp
    assert stats.packets == len(records)


def test_a_run_takes_a_bulk_transfer_and_stops_where_it_must():
    """The run holds in-order pieces of a frame the consumer wants and counts the receiver's ACKs in
    between; it stops at an ACK of more than was sent, and at a record not whole in the buffer."""
    table, feed = opened_table(want=10_000)
    records = [(10 + i, ether_ipv4_tcp(SERVER, CLIENT, SISN + 2 + 100 * i, ISN + 1, ACK, b"r" * 100))
               for i in range(6)]
    records.insert(3, (13, ether_ipv4_tcp(CLIENT, SERVER, ISN + 1, SISN + 302, ACK, b"")))  # all sent so far
    beyond = ether_ipv4_tcp(CLIENT, SERVER, ISN + 1, SISN + 1000, ACK, b"")  # more than was sent
    records.insert(6, (16, beyond))
    data = pcap_bytes([(ts * 1000, f, len(f)) for ts, f in records])[24:]
    layout = RecordLayout(struct.Struct("<IIII").unpack_from, struct.Struct("<I4xII").unpack_from, 16, 1000,
                          1 << 20)
    server, client = table._flows[1].halves[1], table._flows[1].halves[0]
    segments, client_segments = server.segments, client.segments
    first = records[0][1]
    assert feed.record(10_000, 1, data, 16, 16 + len(first), len(first)) is True  # held
    pos, k = feed.run(data, 16 + len(first), len(data), layout)
    assert k == 5  # data, data, the ACK, data, data
    assert server.segments == segments + 5 and server.bytes == 500 + 1 and server.want == 10_000 - 500
    assert server.last_ts == server.held_ts == 14_000
    assert client.segments == client_segments + 1 and client.last_ts == 13_000
    assert data[pos + 16:pos + 16 + len(beyond)] == beyond
    # the end of the buffer: a record not whole in it is left for the reader
    feed.record(16_000, 1, beyond, 0, len(beyond), len(beyond))
    after = pos + 16 + len(beyond)
    assert feed.run(data, after, len(data) - 1, layout) == (after, 0)


def test_a_run_stops_at_an_ack_that_is_due_to_sweep():
    """The table sweeps for idle connections before the first packet at or past its next sweep
    time, ACK or data: the run leaves that packet to the reader."""
    table, feed = opened_table(want=10_000)
    records = [(10, ether_ipv4_tcp(SERVER, CLIENT, SISN + 2, ISN + 1, ACK, b"r" * 100)),
               (11, ether_ipv4_tcp(SERVER, CLIENT, SISN + 102, ISN + 1, ACK, b"r" * 100)),
               (2_000_000, ether_ipv4_tcp(CLIENT, SERVER, ISN + 1, SISN + 202, ACK, b"")),
               (2_000_001, ether_ipv4_tcp(SERVER, CLIENT, SISN + 202, ISN + 1, ACK, b"r" * 100))]
    data = pcap_bytes([(ts * 1000, f, len(f)) for ts, f in records])[24:]
    layout = RecordLayout(struct.Struct("<IIII").unpack_from, struct.Struct("<I4xII").unpack_from, 16, 1000,
                          1 << 20)
    table.next_sweep = 2_000_000_000  # the ACK's time
    assert feed.record(10_000, 1, data, 16, 16 + len(records[0][1]), len(records[0][1])) is True
    pos, k = feed.run(data, 16 + len(records[0][1]), len(data), layout)
    assert k == 1
    assert data[pos + 16:pos + 16 + len(records[2][1])] == records[2][1]


def opened_table(want: int):
    """A table with one open connection whose consumer, handed the broker's first byte, answered
    `want`; and a RecordFeed over it."""
    from kwire.tcp.recorder import StreamRecorder

    recorder = StreamRecorder()
    table = FlowTable(recorder)
    feed = RecordFeed(table, lambda p: table.feed(seg) if (seg := decode_segment(p)) is not None else None)
    for ts, f in ((1, ether_ipv4_tcp(CLIENT, SERVER, ISN, 0, 0x02, b"")),
                  (2, ether_ipv4_tcp(SERVER, CLIENT, SISN, ISN + 1, 0x12, b"")),
                  (3, ether_ipv4_tcp(CLIENT, SERVER, ISN + 1, SISN + 1, ACK, b""))):
        feed.record(ts, 1, f, 0, len(f), len(f))
    recorder.wants[1] = [0, want]
    first = ether_ipv4_tcp(SERVER, CLIENT, SISN + 1, ISN + 1, ACK, b"h")
    feed.record(4, 1, first, 0, len(first), len(first))
    assert table._flows[1].halves[1].want == want
    return table, feed
