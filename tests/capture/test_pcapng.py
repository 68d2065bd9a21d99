"""pcapng: scapy-written and hand-built files (interfaces, tsresol, byte orders, sections, block
kinds), and every kind of damage the block loop checks."""

from __future__ import annotations

import struct

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapNgWriter

from kwire.capture.files import open_capture
from kwire.capture.pcapng import ts_scale
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError
from tests.capture import builders as b

T0_US = 1_700_000_000_123_456

MAC = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")  # no ARP lookups by scapy


def frame(i: int) -> bytes:
    return bytes(Ether(**MAC) / IP() / TCP(sport=1000 + i, dport=9092) / Raw(b"p" * i))


def read(path, stats=None):
    return list(open_capture(path, stats))


def test_scapy_pcapng_writer(tmp_path):
    path = tmp_path / "s.pcapng"
    w = PcapNgWriter(str(path))
    for i in range(4):
        p = Ether(frame(i))
        p.time = 1_700_000_000 + i / 4
        w.write(p)
    w.close()
    got = read(path)
    assert [p.data for p in got] == [frame(i) for i in range(4)]
    assert [p.ts_ns for p in got] == [1_700_000_000_000_000_000 + i * 250_000_000 for i in range(4)]
    assert {p.linktype for p in got} == {1}


@pytest.mark.parametrize(
    "tsresol, ns_per_tick",
    [(6, 1000), (9, 1), (3, 1_000_000), (0, 1_000_000_000), (0x80 | 10, 1_000_000_000 / 1024)],
)
def test_ts_scale(tsresol, ns_per_tick):
    mul, div = ts_scale(tsresol)
    assert 1_000_000 * mul // div == int(1_000_000 * ns_per_tick)


def test_ts_scale_finer_than_ns_and_power_of_two():
    mul, div = ts_scale(12)  # picoseconds
    assert 1_500_000 * mul // div == 1500
    mul, div = ts_scale(0x80 | 30)  # 2^-30 s
    assert (1 << 30) * 5 * mul // div == 5_000_000_000


def multi_file(order_second: str = ">") -> tuple[bytes, list[tuple[int, int, bytes]]]:
    """Two sections: LE with 3 interfaces (different link types and resolutions, one with an
    offset), unknown and statistics blocks between packets; then a second section in the other
    byte order with one interface, an obsolete packet block and a simple packet block."""
    blob = [
        b.shb("<"),
        b.idb(1, "<", snaplen=262144, name=b"eth0"),                         # 0: Ethernet, us
        b.idb(276, "<", tsresol=9),                                          # 1: SLL2, ns
        b.idb(101, "<", tsresol=0x80 | 20, tsoffset=-3600),                  # 2: raw, 2^-20 s
        b.block(0x00000BAD, b"some unknown block body"),
        b.epb(0, T0_US, b"eth-a"),
        b.epb(1, T0_US * 1000 + 7, b"sll2-a", options=b.option(1, b"comment") + b.end_of_options()),
        b.block(5, struct.pack("<III", 0, 0, 0)),                            # interface statistics
        b.epb(2, 3 << 20, b"raw-a"),
        b.block(4, b"\x00\x00\x00\x00"),                                     # name resolution
        b.epb(0, T0_US + 1, b"eth-b", wire_len=1500),
    ]
    o = order_second
    blob += [
        b.shb(o),
        b.idb(0, o, snaplen=4, tsresol=3),                                   # 0: null, ms
        b.obsolete_pb(0, 1_700_000_000_500, b"\x02\x00\x00\x00", o),
        b.spb(b"\x02\x00\x00\x00ip", o),                                     # cut by snaplen 4
        b.block(0x40000BAD, b"", o),                                         # empty unknown
    ]
    expect = [
        (1_700_000_000_123_456_000, 1, b"eth-a"),
        (1_700_000_000_123_456_007, 276, b"sll2-a"),
        (3_000_000_000 - 3_600_000_000_000, 101, b"raw-a"),
        (1_700_000_000_123_457_000, 1, b"eth-b"),
        (1_700_000_000_500_000_000, 0, b"\x02\x00\x00\x00"),
        (1_700_000_000_500_000_000, 0, b"\x02\x00\x00\x00"),  # SPB: previous packet's time
    ]
    return b"".join(blob), expect


@pytest.mark.parametrize("order_second", ["<", ">"])
def test_sections_interfaces_resolutions(tmp_path, order_second):
    data, expect = multi_file(order_second)
    path = tmp_path / "m.pcapng"
    path.write_bytes(data)
    stats = CaptureStats()
    reader = open_capture(path, stats)
    assert reader.linktypes == {1, 276, 101}  # declared before the first packet
    got = [(p.ts_ns, p.linktype, p.data) for p in reader]
    assert got == expect
    assert reader.linktypes == {0, 1, 276, 101}
    assert set(stats.linktypes) == {0, 1, 276, 101}
    assert stats.packets == 6 and stats.truncated == 2  # eth-b (1500 on the wire) and the SPB
    assert stats.wire_bytes == 5 + 6 + 5 + 1500 + 4 + 6


def test_big_endian_first_section(tmp_path):
    data = b.shb(">") + b.idb(1, ">", tsresol=9) + b.epb(0, 12345, b"abc", ">")
    path = tmp_path / "be.pcapng"
    path.write_bytes(data)
    assert [(p.ts_ns, p.data) for p in read(path)] == [(12345, b"abc")]


def test_blocks_across_chunks(tmp_path):
    from kwire.capture.source import CHUNK

    sizes = [60, 1514, 9000, 65535] * 60 + [CHUNK + 5] + [3] * 50
    blocks = [b.shb(), b.idb(1)] + [b.epb(0, i, bytes([i % 256]) * s) for i, s in enumerate(sizes)]
    path = tmp_path / "big.pcapng"
    path.write_bytes(b"".join(blocks))
    got = read(path)
    assert [len(p.data) for p in got] == sizes
    assert all(p.data == bytes([i % 256]) * s for i, (p, s) in enumerate(zip(got, sizes)))


def good_prefix() -> bytes:
    return b.shb() + b.idb(1) + b.epb(0, T0_US, b"first")


@pytest.mark.parametrize(
    "tail, message",
    [
        (b.epb(3, 1, b"x"), "undeclared interface 3"),
        (struct.pack("<II", 6, 33) + b"\0" * 29, "bad block length 33"),
        (struct.pack("<III", 6, 8, 8), "bad block length 8"),
        (struct.pack("<III", 6, 512 << 20, 0), "bad block length 536870912"),
        (b.epb(0, 1, b"abcd")[:-4] + struct.pack("<I", 99), "differs from its trailing copy"),
        (b.block(6, struct.pack("<IIIII", 0, 0, 0, 100, 100)), "packet length 100 exceeds"),
        (b.block(6, b"\0" * 12), "enhanced packet block too short"),
        (b.block(1, struct.pack("<HHI", 1, 0, 0) + struct.pack("<HH", 9, 40)), "option 9 runs past"),
        (b.shb(version=(2, 0)), "unsupported pcapng version 2.0"),
        (b.block(0x0A0D0D0A, b"\x11\x22\x33\x44" + b"\0" * 12), "bad pcapng byte-order magic"),
        (b.epb(0, 1, b"abcdefgh")[:-3], "truncated block"),
        (b.epb(0, 1, b"abcdefgh")[:7], "truncated block header"),
        (b.shb() + b.spb(b"x"), "simple packet block before any interface block"),
    ],
)
def test_damage_after_good_packet(tmp_path, tail, message):
    prefix = good_prefix()
    path = tmp_path / "d.pcapng"
    path.write_bytes(prefix + tail)
    got = []
    with pytest.raises(CaptureError) as err:
        for p in open_capture(path):
            got.append(p.data)
    assert got == [b"first"]
    msg = str(err.value)
    assert message in msg and msg.startswith(f"{path}: ") and " at byte " in msg


def test_offset_in_message_points_at_bad_block(tmp_path):
    prefix = good_prefix()
    path = tmp_path / "o.pcapng"
    path.write_bytes(prefix + b.epb(9, 1, b"x"))
    with pytest.raises(CaptureError, match=f"at byte {len(prefix)}$"):
        read(path)


@pytest.mark.parametrize(
    "data, message",
    [
        (b.shb()[:20], "truncated pcapng section header: 20 of 28"),
        (b"\x0a\x0d\x0d\x0a" + b"\0" * 4 + b"\x11\x22\x33\x44" + b"\0" * 16, "bad pcapng byte-order"),
        (b.shb(version=(0, 9)), "unsupported pcapng version 0.9"),
    ],
)
def test_bad_section_header_at_open(tmp_path, data, message):
    path = tmp_path / "h.pcapng"
    path.write_bytes(data)
    with pytest.raises(CaptureError, match=message):
        open_capture(path)


def test_trailing_garbage(tmp_path):
    path = tmp_path / "g.pcapng"
    path.write_bytes(good_prefix() + b"\x13\x37" * 11)
    got = []
    with pytest.raises(CaptureError):
        for p in open_capture(path):
            got.append(p.data)
    assert got == [b"first"]
