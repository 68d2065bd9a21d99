"""Classic pcap: scapy-written and hand-built files, both byte orders, micro/nano, damage."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapWriter, wrpcap

from kwire.capture.files import open_capture
from kwire.capture.packet import LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL2, LINKTYPE_NULL
from kwire.capture.source import CHUNK
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError
from tests.capture import builders

T0 = 1_700_000_000_123_456_789

MAC = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")  # no ARP lookups by scapy


def frames(n: int = 5) -> list[bytes]:
    return [
        bytes(Ether(**MAC) / IP(src="10.0.0.1", dst="10.0.0.2") / TCP(sport=40000, dport=9092, seq=i)
              / Raw(b"k" * (i * 7)))
        for i in range(n)
    ]


def scapy_packets(n: int = 5):
    pkts = [Ether(f) for f in frames(n)]
    for i, p in enumerate(pkts):
        p.time = 1_700_000_000 + i * 0.25
    return pkts


def read(path, stats=None):
    return list(open_capture(path, stats))


@pytest.mark.parametrize("endianness", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_scapy_writer(tmp_path, endianness, nano):
    path = tmp_path / "s.pcap"
    w = PcapWriter(str(path), linktype=LINKTYPE_ETHERNET, endianness=endianness, nano=nano)
    for p in scapy_packets():
        w.write(p)
    w.close()
    got = read(path)
    assert [p.data for p in got] == frames()
    assert [p.ts_ns for p in got] == [1_700_000_000_000_000_000 + i * 250_000_000 for i in range(5)]
    assert all(p.linktype == LINKTYPE_ETHERNET and p.wire_len == len(p.data) for p in got)


def test_wrpcap_gzip(tmp_path):
    path = tmp_path / "s.pcap.gz"
    wrpcap(str(path), scapy_packets(), gz=1)
    reader = open_capture(path)
    assert reader.compression == "gzip" and reader.format == "pcap"
    assert [p.data for p in reader] == frames()


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_timestamps_exact(tmp_path, order, nano):
    ts = [T0, T0 + 1, T0 + 999_999_999, 0, 4_294_967_295_999_999_999]
    path = tmp_path / "t.pcap"
    path.write_bytes(builders.pcap([(t, b"x" * i) for i, t in enumerate(ts)], order=order, nano=nano))
    got = read(path)
    expect = ts if nano else [t - t % 1000 for t in ts]
    assert [p.ts_ns for p in got] == expect
    assert [p.data for p in got] == [b"x" * i for i in range(5)]


def test_modified_pcap(tmp_path):
    path = tmp_path / "m.pcap"
    path.write_bytes(builders.pcap([(T0, f) for f in frames()], modified=True))
    assert [p.data for p in read(path)] == frames()


@pytest.mark.parametrize("linktype", [LINKTYPE_NULL, LINKTYPE_LINUX_SLL2, 147])
def test_linktype_kept_and_declared(tmp_path, linktype):
    path = tmp_path / "l.pcap"
    path.write_bytes(builders.pcap([(T0, b"abc")], linktype=linktype))
    stats = CaptureStats()
    reader = open_capture(path, stats)
    assert stats.linktypes == {linktype: {str(path)}}  # known before any packet is read
    assert reader.linktypes == {linktype}
    assert [p.linktype for p in reader] == [linktype]


def test_fcs_bits_in_linktype_field_ignored(tmp_path):
    path = tmp_path / "f.pcap"
    path.write_bytes(builders.pcap([(T0, b"abc")], linktype=0x14000001))  # F bit + FCS length 4
    assert read(path)[0].linktype == 1


def test_snaplen_cut_counted(tmp_path):
    path = tmp_path / "cut.pcap"
    path.write_bytes(builders.pcap([(T0, b"a" * 60, 1500), (T0, b"b" * 40)], snaplen=60))
    stats = CaptureStats()
    got = read(path, stats)
    assert [p.truncated for p in got] == [True, False]
    assert (stats.files, stats.packets, stats.captured_bytes, stats.wire_bytes, stats.truncated) == (
        1, 2, 100, 1540, 1)


def test_records_across_chunks(tmp_path):
    """Records straddle the 1 MiB chunk boundaries; one record is larger than a chunk."""
    sizes = [1, 1500, 65535, 9000] * 40 + [CHUNK * 2 + 3] + [77] * 100
    recs = [(T0 + i, bytes([i % 251]) * s) for i, s in enumerate(sizes)]
    path = tmp_path / "big.pcap"
    path.write_bytes(builders.pcap(recs, snaplen=CHUNK * 3))
    stats = CaptureStats()
    got = read(path, stats)
    assert len(got) == len(recs)
    assert all(p.data == r[1] and p.ts_ns == r[0] // 1000 * 1000 for p, r in zip(got, recs))
    assert stats.packets == len(recs) and stats.captured_bytes == sum(sizes)


def test_trailing_garbage_after_good_packets(tmp_path):
    good = builders.pcap([(T0, f) for f in frames()])
    path = tmp_path / "g.pcap"
    path.write_bytes(good + b"\xff" * 40)
    got = []
    with pytest.raises(CaptureError) as err:
        for p in open_capture(path):
            got.append(p.data)
    assert got == frames()
    msg = str(err.value)
    assert str(path) in msg and f"at byte {len(good)}" in msg and "\n" not in msg


def test_truncated_last_record_yields_good_ones_first(tmp_path):
    good = builders.pcap([(T0, f) for f in frames()])
    path = tmp_path / "t.pcap"
    path.write_bytes(good[:-10])
    got = []
    with pytest.raises(CaptureError, match=r"truncated record .* at byte \d+"):
        for p in open_capture(path):
            got.append(p.data)
    assert got == frames()[:-1]


def test_truncated_record_header(tmp_path):
    good = builders.pcap([(T0, f) for f in frames(2)])
    path = tmp_path / "t.pcap"
    path.write_bytes(good + good[24:30])
    with pytest.raises(CaptureError, match=f"truncated record header .* at byte {len(good)}$"):
        read(path)


def test_absurd_record_length(tmp_path):
    data = builders.pcap([(T0, b"x")], snaplen=65535)
    bad = data[:24] + data[24:32] + (400_000).to_bytes(4, "little") + data[36:]
    path = tmp_path / "a.pcap"
    path.write_bytes(bad)
    with pytest.raises(CaptureError, match="absurd record length 400000 .* at byte 24"):
        read(path)


def test_truncated_file_header(tmp_path):
    path = tmp_path / "h.pcap"
    path.write_bytes(builders.pcap([])[:20])
    with pytest.raises(CaptureError, match="truncated pcap file header: 20 of 24"):
        open_capture(path)


def test_bad_version(tmp_path):
    path = tmp_path / "v.pcap"
    path.write_bytes(builders.pcap([], version=(3, 0)))
    with pytest.raises(CaptureError, match="unsupported pcap version 3.0"):
        open_capture(path)


def test_header_only_file_is_empty_capture(tmp_path):
    path = tmp_path / "e.pcap"
    path.write_bytes(builders.pcap([]))
    assert read(path) == []
