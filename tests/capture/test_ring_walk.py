"""kwire.capture.ring's walk of TPACKET_V3 blocks, on blocks the tests build (tests/capture/ring_blocks):
every frame handed over byte for byte with its time and wire length, VLAN tags put back, blocks as
pcap records, and kwire.native.fused's frame loop giving exactly what packet-by-packet gives on random
bulk-like traffic laid out in ring frames (any link-header offset, any padding between frames)."""

from __future__ import annotations

import io
import random
import struct

import pytest

from kwire.capture.packet import LINKTYPE_ETHERNET, LINKTYPE_RAW, PacketCollector
from kwire.capture.pcap import PcapReader
from kwire.capture.pcapwrite import PcapWriter
from kwire.capture.ring import RingStats, block_records, walk_block
from kwire.capture.source import open_source
from kwire.native.fused import RecordFeed
from kwire.native.net_decode import decode_segment
from kwire.native.tcp_flows import FlowTable

from tests.capture.ring_blocks import TP_STATUS_VLAN_TPID_VALID, TP_STATUS_VLAN_VALID, Frame, block
from tests.native.test_fused import ScriptedConsumers
from tests.native.test_fused_run import DEMANDS, Scripted, bulk_records, reference

TS = 1_795_000_000_123_456_789


def _frames(rng: random.Random, n: int) -> list[Frame]:
    out = []
    for i in range(n):
        data = bytes(rng.randrange(256) for _ in range(rng.choice((14, 60, 61, 100, 1514))))
        wire = len(data) + rng.choice((0, 0, 0, 7))  # some cut by the snap length
        out.append(Frame(TS + i * 1_000_003, data, wire, mac=rng.choice((82, 82, 78, 96, 130)),
                         pad=rng.choice((0, 0, 8, 24))))
    return out


def test_every_frame_is_handed_over_byte_for_byte():
    rng = random.Random(3)
    frames = _frames(rng, 40)
    ring = bytes(block(frames, base=4096, size=1 << 17, buf=bytearray(b"\xee") * ((1 << 17) + 4096)))
    sink, stats = PacketCollector(), RingStats()
    walk_block(ring, 4096, 1 << 17, LINKTYPE_ETHERNET, sink, stats)
    assert [(p.ts_ns, p.data, p.wire_len, p.linktype) for p in sink.packets] == \
        [(f.ts_ns, f.data, f.wire_len, LINKTYPE_ETHERNET) for f in frames]
    assert stats.packets == 40 and stats.blocks == 1 and stats.block_packets == 40
    assert stats.bytes == sum(f.wire_len for f in frames)
    assert stats.truncated == sum(1 for f in frames if f.wire_len > len(f.data))
    assert stats.block_ts_ns == frames[-1].ts_ns


def test_an_empty_block_hands_nothing_over():
    sink, stats = PacketCollector(), RingStats()
    walk_block(bytes(block([])), 0, 1 << 16, LINKTYPE_ETHERNET, sink, stats)
    assert sink.packets == [] and stats.packets == 0 and stats.blocks == 1


def test_a_vlan_tag_the_kernel_took_out_is_put_back():
    eth = bytes(range(12)) + b"\x08\x00" + b"\x45" + bytes(39)
    frames = [Frame(TS, eth, len(eth), status=TP_STATUS_VLAN_VALID, vlan_tci=0x2064),
              Frame(TS + 1, eth, len(eth), status=TP_STATUS_VLAN_VALID | TP_STATUS_VLAN_TPID_VALID,
                    vlan_tci=0x0005, vlan_tpid=0x88A8),
              Frame(TS + 2, eth, len(eth))]
    ring = bytes(block(frames))
    sink, stats = PacketCollector(), RingStats()
    walk_block(ring, 0, 1 << 16, LINKTYPE_ETHERNET, sink, stats)
    tagged = eth[:12] + b"\x81\x00\x20\x64" + eth[12:]
    assert [p.data for p in sink.packets] == [tagged, eth[:12] + b"\x88\xa8\x00\x05" + eth[12:], eth]
    assert [p.wire_len for p in sink.packets] == [len(eth) + 4, len(eth) + 4, len(eth)]
    # without a link header (SOCK_DGRAM) there is nothing to put a tag in
    sink = PacketCollector()
    walk_block(ring, 0, 1 << 16, LINKTYPE_RAW, sink, RingStats())
    assert [p.data for p in sink.packets] == [eth] * 3


@pytest.mark.parametrize("file_size", [None, 3000])
def test_a_block_as_pcap_records_reads_back_as_the_same_packets(tmp_path, file_size):
    rng = random.Random(5)
    frames = _frames(rng, 30) + [Frame(TS + 10**9, bytes(60), 60, status=TP_STATUS_VLAN_VALID, vlan_tci=7)]
    ring = bytes(block(frames, size=1 << 17))
    path = tmp_path / "out.pcap"
    with PcapWriter(str(path), LINKTYPE_ETHERNET, file_size) as writer:
        writer.write(block_records(ring, 0, 1 << 17, LINKTYPE_ETHERNET))
    expected = PacketCollector()
    walk_block(ring, 0, 1 << 17, LINKTYPE_ETHERNET, expected, RingStats())
    read = []
    for name in writer.files:
        read += list(PcapReader(open_source(name)).packets())
    assert [(p.ts_ns, p.data, p.wire_len) for p in read] == \
        [(p.ts_ns, p.data, p.wire_len) for p in expected.packets]
    assert len(writer.files) == (1 if file_size is None else len(writer.files)) and writer.records == 31


# ---- kwire.native.fused's loop over ring frames, against the packet-by-packet path ---------------------------


def _through_ring(records, seed: int, rng: random.Random, per_block: int) -> tuple:
    """records laid out in ring blocks (random link-header offsets and padding) and walked with
    RecordFeed: runs over ring frames happen wherever a record is held."""
    scripted = Scripted(seed)
    stats = RingStats()
    feed = RecordFeed(scripted.table, scripted.plain)
    size = 1 << 20
    for first in range(0, len(records), per_block):
        frames = [Frame(ts, frame, wire, mac=rng.choice((82,) * 8 + (78, 90)), pad=rng.choice((0,) * 8 + (8, 16)))
                  for ts, frame, wire in records[first:first + per_block]]
        ring = bytes(block(frames, size=size))
        walk_block(ring, 0, size, LINKTYPE_ETHERNET, feed, stats)
        scripted.last_ts = max(scripted.last_ts, frames[-1].ts_ns)
    return *scripted.finish(), stats


@pytest.mark.parametrize("seed", range(10))
def test_frame_runs_give_what_packet_by_packet_gives(seed):
    rng = random.Random(seed)
    records = bulk_records(rng, 600)
    events, tcp, stats = _through_ring(records, seed, rng, per_block=rng.choice((600, 97, 13)))
    ref_events, ref_tcp, _ = reference(records, seed)
    assert [e[:2] for e in events] == [e[:2] for e in ref_events]
    assert [e[3] for e in events] == [e[3] for e in ref_events]
    assert tcp == ref_tcp
    assert stats.packets == len(records)
    assert stats.bytes == sum(wire for _, _, wire in records)


def test_frame_runs_happen():
    """The differential test above is only worth something if runs take frames: count them."""
    rng = random.Random(1)
    records = bulk_records(rng, 600)
    taken = []

    class Counting(RecordFeed):
        __slots__ = ()

        def frame_run(self, buf, pos, end, layout):
            result = super().frame_run(buf, pos, end, layout)
            taken.append(result[1])
            return result

    table = FlowTable(ScriptedConsumers(1, DEMANDS), idle_timeout_ns=3_000_000_000)
    feed = Counting(table, lambda p: table.feed(s) if (s := decode_segment(p)) is not None else None)
    frames = [Frame(ts, frame, wire) for ts, frame, wire in records]
    walk_block(bytes(block(frames, size=1 << 20)), 0, 1 << 20, LINKTYPE_ETHERNET, feed, RingStats())
    assert sum(taken) > 100


def test_the_pcap_header_bytes_are_the_frame_header_bytes():
    """A frame's tp_sec, tp_nsec, tp_snaplen and tp_len are a nanosecond pcap record header."""
    frames = [Frame(TS, b"x" * 60, 64)]
    ring = bytes(block(frames))
    header, data = block_records(ring, 0, 1 << 16, LINKTYPE_ETHERNET)
    assert struct.unpack("=IIII", header) == (TS // 10**9, TS % 10**9, 60, 64) and data == b"x" * 60
    reader = PcapReader(open_source(io.BytesIO(struct.pack("=IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1)
                                                + header + data)))
    assert [(p.ts_ns, p.data, p.wire_len) for p in reader.packets()] == [(TS, b"x" * 60, 64)]


def test_packets_of_another_link_type_never_start_a_run():
    """Raw IP (SOCK_DGRAM) frames: a run's Ethernet reading would misread them."""
    calls = []

    class Sink(PacketCollector):
        def record(self, *args):
            super().record(*args)
            return True  # "held": a run would be offered for Ethernet

        def frame_run(self, *args):
            calls.append(args)
            return args[1], 0, 0

    frames = [Frame(TS + i, bytes(40), 40, mac=96) for i in range(3)]
    walk_block(bytes(block(frames)), 0, 1 << 16, LINKTYPE_RAW, Sink(), RingStats())
    assert calls == []
    walk_block(bytes(block(frames)), 0, 1 << 16, LINKTYPE_ETHERNET, Sink(), RingStats())
    assert len(calls) == 2  # after each held frame that another follows
