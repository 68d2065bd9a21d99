"""Tunnels on real traffic: committed real captures wrapped by scapy (tests/net/wrap.py, an encoder of
its own) in every encapsulation kwire opens give exactly the plain capture's exchanges and bodies;
hostile tunnels stay within the bounds; what was opened (or not) is said in the summary."""

from __future__ import annotations

import json
import struct

import pytest

from kwire.native.net_decode import DecodeCounters, decode_record
from kwire.net.tables import MAX_LAYERS, add_vxlan_ports
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import exchange_json
from tests.net.wrap import CUSTOM_VXLAN_PORT, KINDS, wrap

CAPTURES = ["captures/produce-consume-zstd.pcap", "captures/multi-broker-3.pcap"]
V6_KINDS = {"6in4", "6in6"}  # the inner segment moved to IPv6 addresses: endpoints differ


def exchanges(path) -> tuple[list[dict], RunSummary]:
    summary = RunSummary()
    rows = [json.loads(exchange_json(ex)) for ex in analyze_files([str(path)], summary=summary)]
    return rows, summary


def comparable(row: dict, v6: bool) -> dict:
    row = dict(row)
    if v6:
        for name in ("client", "broker"):
            row.pop(name, None)
    return row


@pytest.fixture(scope="module")
def plain():
    return {capture: exchanges(capture)[0] for capture in CAPTURES}


@pytest.mark.parametrize("capture", CAPTURES)
@pytest.mark.parametrize("kind", KINDS)
def test_wrapped_capture_gives_the_plain_exchanges(tmp_path, plain, capture, kind):
    if kind == "vxlan-custom":
        add_vxlan_ports([CUSTOM_VXLAN_PORT])
    path = tmp_path / f"{kind}.pcap"
    wrap(capture, path, kind)
    rows, summary = exchanges(path)
    want = plain[capture]
    assert len(rows) == len(want) > 20
    v6 = kind in V6_KINDS
    assert [comparable(r, v6) for r in rows] == [comparable(r, v6) for r in want]
    assert any(name.startswith("tunnel:") and count >= summary.capture.packets
               for name, count in summary.net.items()), summary.net
    assert "packets" in summary.line()


def test_every_segment_twice_counts_once(tmp_path, plain):
    """The same segments mirrored twice (each packet also as a VXLAN copy): TCP counts the copies as
    retransmitted bytes, and the exchanges are those of the plain capture."""
    from scapy.utils import PcapReader, PcapWriter

    from tests.net.wrap import wrapped

    capture = CAPTURES[0]
    path = tmp_path / "twice.pcap"
    with PcapReader(capture) as reader, PcapWriter(str(path), linktype=1) as writer:
        for n, pkt in enumerate(reader):
            copy = wrapped(bytes(pkt), "vxlan", n)
            copy.time = pkt.time
            writer.write(pkt)
            writer.write(copy)
    rows, summary = exchanges(path)
    assert rows == plain[capture]
    assert summary.tcp["retransmitted_bytes"] == summary.tcp["bytes"] // 2


def test_nothing_kafka_says_what_the_packets_were(tmp_path):
    """VXLAN to a port kwire does not open: not a silent zero, the summary names the port."""
    path = tmp_path / "w.pcap"
    count = wrap(CAPTURES[0], path, "vxlan-custom")
    from kwire.net.tables import UDP_PORTS
    UDP_PORTS.pop(CUSTOM_VXLAN_PORT, None)
    rows, summary = exchanges(path)
    assert rows == []
    assert f"{count} UDP to port {CUSTOM_VXLAN_PORT} not opened" in summary.line()


# ---- hostile tunnels: bounded, counted, never raised ----------------------------------------------

ETH = b"\x02" * 12
IPV4_TCP_SEGMENT = None


def _ipv4(proto: int, payload: bytes, total: int | None = None) -> bytes:
    total = 20 + len(payload) if total is None else total
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0, 64, proto, 0, b"\x0a\0\0\1", b"\x0a\0\0\2") + payload


def _tcp() -> bytes:
    return struct.pack("!HHIIBBHHH", 1234, 9092, 1, 0, 0x50, 0x18, 1000, 0, 0) + b"kafka"


def _vxlan(frame: bytes, udp_length: int | None = None) -> bytes:
    udp_length = 16 + len(frame) if udp_length is None else udp_length
    return struct.pack("!HHHH", 5000, 4789, udp_length, 0) + b"\x08\0\0\0\0\0\x2a\0" + frame


def test_nesting_deeper_than_the_bound_is_counted():
    packet = _ipv4(6, _tcp())
    for _ in range(100):
        packet = _ipv4(4, packet)  # IPv4 in IPv4, a hundred deep
    counters = DecodeCounters()
    assert decode_record(0, 101, packet, counters) is None
    assert counters.too_deep == 1 and counters.tunnels["IPv4-in-IP"] == MAX_LAYERS - 2  # link, outer IP, the rest


def test_gre_loop_is_bounded():
    inner = b""
    packet = _ipv4(47, b"\0\0\x08\0")  # GRE carrying IPv4 carrying GRE ... (one level, ends short)
    for _ in range(200):
        packet = _ipv4(47, b"\0\0\x08\0" + packet)
    counters = DecodeCounters()
    assert decode_record(0, 101, inner + packet, counters) is None
    assert counters.too_deep == 1


def test_vxlan_claiming_more_than_it_has_is_malformed():
    frame = ETH + b"\x08\x00" + _ipv4(6, _tcp())
    counters = DecodeCounters()
    outer = ETH + b"\x08\x00" + _ipv4(17, _vxlan(frame, udp_length=60000))
    assert decode_record(0, 1, outer, counters) is None and counters.malformed == 1
    inner_lies = ETH + b"\x08\x00" + _ipv4(6, _tcp(), total=1400)  # inner IP longer than the datagram
    outer = ETH + b"\x08\x00" + _ipv4(17, _vxlan(inner_lies))
    assert decode_record(0, 1, outer, counters) is None and counters.malformed == 2
    outer = ETH + b"\x08\x00" + _ipv4(17, _vxlan(frame))
    segment = decode_record(0, 1, outer, counters)
    assert segment is not None and segment.payload == b"kafka" and counters.tunnels == {"VXLAN": 2}  # the first lie was caught in UDP


@pytest.mark.parametrize("cut", range(0, 90, 3))
def test_every_cut_of_a_tunnelled_packet_is_counted_not_raised(cut):
    frame = ETH + b"\x08\x00" + _ipv4(6, _tcp())
    outer = (ETH + b"\x08\x00" + _ipv4(17, _vxlan(frame)))[:cut]
    counters = DecodeCounters()
    segment = decode_record(0, 1, outer, counters)
    assert segment is None and counters.total == 1 or segment is not None and segment.truncated


def test_live_tunnels_filter_compiles_and_lets_tunnels_through(tmp_path):
    """`kwire live --tunnels`: libpcap compiles the default filter with the tunnels, and it passes the
    wrapped packets (checked by libpcap itself, through tcpdump reading the wrapped captures)."""
    import shutil
    import subprocess

    from kwire.capture.bpf import compile_filter, default_filter
    from kwire.capture.files import read_captures

    expression = default_filter((9092,), tunnels=[4789, 8472, 6081])
    assert compile_filter(expression, 1) and compile_filter(expression, 113)
    if shutil.which("tcpdump") is None:
        pytest.skip("needs tcpdump")
    for kind in ("vxlan", "vxlan-8472", "geneve", "gre-eth", "erspan3", "ipip", "6in4", "mpls", "pppoe"):
        path = tmp_path / f"{kind}.pcap"
        count = wrap(CAPTURES[0], path, kind)
        kept = tmp_path / f"{kind}-kept.pcap"
        subprocess.run(["tcpdump", "-r", str(path), "-w", str(kept), expression], check=True, capture_output=True)
        assert len(list(read_captures([kept]))) == count, kind
    plain = subprocess.run(["tcpdump", "-r", CAPTURES[0], "-n", default_filter((9092,))], capture_output=True,
                           text=True)
    assert plain.returncode == 0
