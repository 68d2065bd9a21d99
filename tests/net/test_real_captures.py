"""Real captures written by tcpdump and dumpcap (tests/capture/data, see record_real.py there):
every packet kwire reads and decodes agrees with tshark's view of it, field by field."""

from __future__ import annotations

import csv
import ipaddress
from pathlib import Path

import pytest

from kwire.capture.files import open_capture
from kwire.capture.stats import CaptureStats
from kwire.native.net_decode import DecodeCounters, decode_segment

DATA = Path(__file__).resolve().parent.parent / "capture" / "data"
CAPTURES = {
    # name: (format, link types, nanosecond timestamps)
    "lo_us.pcap": ("pcap", {1}, False),
    "lo_ns.pcap": ("pcap", {1}, True),
    "any_sll.pcap": ("pcap", {113}, False),
    "any_sll2.pcap": ("pcap", {276}, False),
    "lo_snap80.pcap": ("pcap", {1}, False),
    "lo_any.pcapng": ("pcapng", {1, 113}, True),
    "lo_any.pcapng.gz": ("pcapng", {1, 113}, True),
}


def truth(name: str) -> list[dict[str, str]]:
    base = name.removesuffix(".gz")
    with open(DATA / f"{base}.tshark.tsv", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def epoch_ns(text: str) -> int:
    sec, frac = text.split(".")
    return int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_agrees_with_tshark(name):
    fmt, linktypes, nano = CAPTURES[name]
    stats = CaptureStats()
    reader = open_capture(DATA / name, stats)
    assert reader.format == fmt and reader.linktypes == linktypes
    packets = list(reader)
    rows = truth(name)
    assert len(packets) == len(rows) > 20
    counters = DecodeCounters()
    decoded = 0
    truncated = {4: 0, 16: 0}
    for i, (p, row) in enumerate(zip(packets, rows)):
        assert p.ts_ns == epoch_ns(row["frame.time_epoch"]), i
        if not nano:
            assert p.ts_ns % 1000 == 0
        assert len(p.data) == int(row["frame.cap_len"]), i
        seg = decode_segment(p, counters)
        if seg is None:
            continue
        decoded += 1
        src = row["ip.src"] or row["ipv6.src"]
        dst = row["ip.dst"] or row["ipv6.dst"]
        assert seg.src_ip == ipaddress.ip_address(src).packed, i
        assert seg.dst_ip == ipaddress.ip_address(dst).packed, i
        assert (seg.src_port, seg.dst_port) == (int(row["tcp.srcport"]), int(row["tcp.dstport"])), i
        assert (seg.seq, seg.ack) == (int(row["tcp.seq_raw"]), int(row["tcp.ack_raw"])), i
        assert seg.flags == int(row["tcp.flags"], 16) & 0xFF, i
        tcp_len = int(row["tcp.len"])
        if seg.truncated:
            truncated[len(seg.src_ip)] += 1
            assert len(seg.payload) < tcp_len, i
            assert row["tcp.payload"].startswith(seg.payload.hex()), i
        else:
            assert len(seg.payload) == tcp_len, i
            assert seg.payload.hex() == row["tcp.payload"], i
    assert decoded + counters.total == len(packets)
    assert stats.packets == len(packets)
    assert counters.total == 0 and decoded == len(packets)
    if name == "lo_snap80.pcap":
        # Payloads cut at 80 bytes; IPv6 + TCP with timestamps needs 86, so there even the TCP
        # options are cut and the segments come out empty but with their numbers and flags.
        # Cut payloads: IPv4 replies longer than 14 bytes (3), every IPv6 payload (10).
        assert truncated == {4: 3, 16: 10}
        assert stats.truncated == 21  # those, plus IPv6 packets cut inside their TCP options
    else:
        assert stats.truncated == 0 and not any(truncated.values())


@pytest.mark.parametrize("name", ["lo_us.pcap", "lo_ns.pcap", "lo_any.pcapng"])
def test_conversation_payloads(name):
    """The payloads record_real.py sent, in order, on both IPv4 and IPv6 connections."""
    requests = [b"hello kwire %d" % i for i in range(5)]
    replies = [b"reply %d" % i * (i + 1) for i in range(5)]
    seen: dict[tuple[int, bool], bytes] = {}
    for p in open_capture(DATA / name):
        if p.linktype != 1:
            continue  # lo_any.pcapng also holds the same packets seen on "any"
        seg = decode_segment(p)
        key = (len(seg.src_ip), seg.dst_port == 19092)
        seen[key] = seen.get(key, b"") + seg.payload
    for family in (4, 16):
        assert seen[(family, True)] == b"".join(requests)
        assert seen[(family, False)] == b"".join(replies)
