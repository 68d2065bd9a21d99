"""decode_segment on scapy-built packets: every link type, VLAN tags, IPv4 options, IPv6 extension
headers, padding, TSO, snap-length cuts, fragments, non-TCP, malformed headers; random bytes never
raise; every field agrees with scapy's own dissection."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_NOP, IPOption_RR
from scapy.layers.inet6 import (
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
)
from scapy.layers.ipsec import AH
from scapy.layers.l2 import ARP, CookedLinux, CookedLinuxV2, Dot1AD, Dot1Q, Ether, Loopback
from scapy.packet import Raw

from kwire.capture.packet import (
    LINKTYPE_ETHERNET,
    LINKTYPE_IPV4,
    LINKTYPE_IPV6,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_LOOP,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
    Packet,
)
from kwire.native.net_decode import SUPPORTED_LINKTYPES, DecodeCounters, decode_segment, decode_segments
from kwire.net.segment import ACK, PSH, SYN

V4 = dict(src="192.0.2.1", dst="198.51.100.7")
V6 = dict(src="2001:db8::1", dst="2001:db8::2:3")
TCP_OPTS = [("MSS", 1460), ("NOP", None), ("WScale", 7), ("Timestamp", (1, 2))]

MAC = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")  # no ARP lookups by scapy


def tcp(payload=b"kafka bytes", **kw):
    fields = dict(sport=40000, dport=9092, seq=0xFFFFFFF0, ack=12345, flags="PA", options=TCP_OPTS)
    fields.update(kw)
    return TCP(**fields) / Raw(payload)


def pkt(raw: bytes, linktype: int, wire_len: int | None = None) -> Packet:
    return Packet(42, linktype, raw, len(raw) if wire_len is None else wire_len)


def check(seg, *, v6=False, payload=b"kafka bytes", truncated=False):
    assert seg is not None
    ip = V6 if v6 else V4
    import ipaddress

    assert seg.src_ip == ipaddress.ip_address(ip["src"]).packed
    assert seg.dst_ip == ipaddress.ip_address(ip["dst"]).packed
    assert (seg.src_port, seg.dst_port, seg.seq, seg.ack) == (40000, 9092, 0xFFFFFFF0, 12345)
    assert seg.flags & 0x3F == PSH | ACK
    assert seg.payload == payload and seg.truncated is truncated
    assert seg.ts_ns == 42


LINK_CASES = [
    ("ether-v4", LINKTYPE_ETHERNET, Ether(**MAC) / IP(**V4) / tcp(), False),
    ("ether-v6", LINKTYPE_ETHERNET, Ether(**MAC) / IPv6(**V6) / tcp(), True),
    ("dot1q", LINKTYPE_ETHERNET, Ether(**MAC) / Dot1Q(vlan=10) / IP(**V4) / tcp(), False),
    ("qinq", LINKTYPE_ETHERNET, Ether(**MAC) / Dot1AD(vlan=5) / Dot1Q(vlan=7) / IPv6(**V6) / tcp(), True),
    ("triple-tag", LINKTYPE_ETHERNET,
     Ether(**MAC) / Dot1AD(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / IP(**V4) / tcp(), False),
    ("sll-v4", LINKTYPE_LINUX_SLL, CookedLinux(proto=0x0800) / IP(**V4) / tcp(), False),
    ("sll-v6", LINKTYPE_LINUX_SLL, CookedLinux(proto=0x86DD) / IPv6(**V6) / tcp(), True),
    ("sll-vlan", LINKTYPE_LINUX_SLL, CookedLinux(proto=0x8100) / Dot1Q(vlan=9) / IP(**V4) / tcp(), False),
    ("sll2-v4", LINKTYPE_LINUX_SLL2, CookedLinuxV2(proto=0x0800) / IP(**V4) / tcp(), False),
    ("sll2-v6", LINKTYPE_LINUX_SLL2, CookedLinuxV2(proto=0x86DD) / IPv6(**V6) / tcp(), True),
    ("raw-v4", LINKTYPE_RAW, IP(**V4) / tcp(), False),
    ("raw-v6", LINKTYPE_RAW, IPv6(**V6) / tcp(), True),
    ("ipv4", LINKTYPE_IPV4, IP(**V4) / tcp(), False),
    ("ipv6", LINKTYPE_IPV6, IPv6(**V6) / tcp(), True),
]


@pytest.mark.parametrize("name, linktype, scapy_pkt, v6", LINK_CASES, ids=[c[0] for c in LINK_CASES])
def test_link_types(name, linktype, scapy_pkt, v6):
    counters = DecodeCounters()
    check(decode_segment(pkt(bytes(scapy_pkt), linktype), counters), v6=v6)
    assert counters.total == 0


def null_header(af: int, order: str) -> bytes:
    return struct.pack(order + "I", af)


@pytest.mark.parametrize("linktype", [LINKTYPE_NULL, LINKTYPE_LOOP])
@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("af, v6", [(2, False), (24, True), (28, True), (30, True), (10, True)])
def test_null_and_loop_both_byte_orders(linktype, order, af, v6):
    inner = IPv6(**V6) / tcp() if v6 else IP(**V4) / tcp()
    check(decode_segment(pkt(null_header(af, order) + bytes(inner), linktype)), v6=v6)


def test_scapy_loopback_layer():
    raw = bytes(Loopback(type=2) / IP(**V4) / tcp())
    check(decode_segment(pkt(raw, LINKTYPE_NULL)))


def test_null_unknown_family_is_non_ip():
    c = DecodeCounters()
    assert decode_segment(pkt(null_header(7, "<") + bytes(IP() / tcp()), LINKTYPE_NULL), c) is None
    assert c.non_ip == 1


def test_ipv4_options():
    raw = bytes(Ether(**MAC) / IP(options=[IPOption_RR(routers=["1.2.3.4"]), IPOption_NOP()], **V4) / tcp())
    check(decode_segment(pkt(raw, LINKTYPE_ETHERNET)))


def test_ethernet_padding_and_fcs_dropped():
    raw = bytes(Ether(**MAC) / IP(**V4) / TCP(sport=40000, dport=9092, seq=0xFFFFFFF0, ack=12345, flags="PA")
                / Raw(b"ab"))
    assert len(raw) < 60
    padded = raw + b"\x00" * (60 - len(raw)) + b"\xde\xad\xbe\xef"  # padding + FCS
    seg = decode_segment(pkt(padded, LINKTYPE_ETHERNET))
    assert seg.payload == b"ab" and not seg.truncated


def test_ipv6_padding_dropped():
    raw = bytes(Ether(**MAC) / IPv6(**V6) / tcp()) + b"\x00" * 9
    check(decode_segment(pkt(raw, LINKTYPE_ETHERNET)), v6=True)


def test_tso_total_length_zero_runs_to_end():
    raw = bytearray(bytes(Ether(**MAC) / IP(**V4) / tcp()))
    raw[16:18] = b"\x00\x00"
    check(decode_segment(pkt(bytes(raw), LINKTYPE_ETHERNET)))


def test_ipv6_payload_length_zero_runs_to_end():
    raw = bytearray(bytes(IPv6(**V6) / tcp()))
    raw[4:6] = b"\x00\x00"
    check(decode_segment(pkt(bytes(raw), LINKTYPE_RAW)), v6=True)


@pytest.mark.parametrize("v6", [False, True])
@pytest.mark.parametrize("linktype, link", [(LINKTYPE_ETHERNET, "ether"), (LINKTYPE_LINUX_SLL2, "sll2")])
def test_snaplen_cut_payload_is_truncated(v6, linktype, link):
    ip = IPv6(**V6) if v6 else IP(**V4)
    head = Ether(**MAC) if link == "ether" else CookedLinuxV2(proto=0x86DD if v6 else 0x0800)
    raw = bytes(head / ip / tcp())
    seg = decode_segment(pkt(raw[:-4], linktype, len(raw)))
    check(seg, v6=v6, payload=b"kafka b", truncated=True)


def test_options_cut_gives_empty_truncated_segment():
    raw = bytes(Ether(**MAC) / IP(**V4) / tcp())
    seg = decode_segment(pkt(raw[: 14 + 20 + 24], LINKTYPE_ETHERNET, len(raw)))
    assert seg is not None and seg.payload == b"" and seg.truncated and seg.seq == 0xFFFFFFF0


def test_options_cut_without_payload_is_not_truncated():
    raw = bytes(Ether(**MAC) / IP(**V4) / TCP(flags="S", options=TCP_OPTS))
    seg = decode_segment(pkt(raw[: 14 + 20 + 24], LINKTYPE_ETHERNET, len(raw)))
    assert seg is not None and seg.flags == SYN and seg.payload == b"" and not seg.truncated


@pytest.mark.parametrize("cut", [0, 5, 13, 14, 20, 33, 34, 40, 53])
def test_headers_cut_are_short(cut):
    raw = bytes(Ether(**MAC) / IP(**V4) / tcp())
    c = DecodeCounters()
    assert decode_segment(pkt(raw[:cut], LINKTYPE_ETHERNET, len(raw)), c) is None
    assert c.short == 1 and c.total == 1


@pytest.mark.parametrize("frag", [dict(flags="MF", frag=0), dict(frag=100), dict(flags="MF", frag=3)])
def test_ipv4_fragments_skipped(frag):
    c = DecodeCounters()
    raw = bytes(Ether(**MAC) / IP(**V4, **frag) / tcp())
    assert decode_segment(pkt(raw, LINKTYPE_ETHERNET), c) is None
    assert c.fragments == 1


def test_ipv4_dont_fragment_is_fine():
    check(decode_segment(pkt(bytes(Ether(**MAC) / IP(flags="DF", **V4) / tcp()), LINKTYPE_ETHERNET)))


@pytest.mark.parametrize("offset, m", [(0, 1), (10, 0), (10, 1)])
def test_ipv6_fragments_skipped(offset, m):
    c = DecodeCounters()
    raw = bytes(IPv6(**V6) / IPv6ExtHdrFragment(offset=offset, m=m, id=1) / tcp())
    assert decode_segment(pkt(raw, LINKTYPE_RAW), c) is None
    assert c.fragments == 1


def test_ipv6_atomic_fragment_decoded():
    raw = bytes(IPv6(**V6) / IPv6ExtHdrFragment(offset=0, m=0, id=1) / tcp())
    check(decode_segment(pkt(raw, LINKTYPE_RAW)), v6=True)


def test_ipv6_extension_header_chain():
    raw = bytes(
        Ether(**MAC) / IPv6(**V6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
        / IPv6ExtHdrRouting(addresses=["2001:db8::99"]) / IPv6ExtHdrDestOpt() / tcp()
    )
    check(decode_segment(pkt(raw, LINKTYPE_ETHERNET)), v6=True)


def test_ipv6_ah():
    ah = AH(nh=6, payloadlen=4, spi=1, seq=1, icv=b"\x00" * 12)  # (4 + 2) * 4 = 24 bytes
    raw = bytes(IPv6(**V6) / ah / tcp())
    check(decode_segment(pkt(raw, LINKTYPE_RAW)), v6=True)


@pytest.mark.parametrize(
    "scapy_pkt, reason",
    [
        (Ether(**MAC) / IP(**V4) / UDP() / Raw(b"x"), "non_tcp"),
        (Ether(**MAC) / IP(**V4) / ICMP(), "non_tcp"),
        (Ether(**MAC) / IPv6(**V6, nh=59), "non_tcp"),
        (Ether(**MAC) / IPv6(**V6) / UDP(), "non_tcp"),
        (Ether(**MAC) / IPv6(**V6, nh=50) / Raw(b"\x00" * 16), "non_tcp"),
        (Ether(**MAC) / ARP(), "non_ip"),
        (Ether(**MAC, type=0x88CC) / Raw(b"\x00" * 40), "non_ip"),
        (Ether(**MAC, type=60) / Raw(b"\x00" * 60), "non_ip"),  # 802.3 length field
        (CookedLinuxV2(proto=0x0806) / ARP(), "non_ip"),
    ],
)
def test_not_tcp(scapy_pkt, reason):
    c = DecodeCounters()
    raw = bytes(scapy_pkt)
    lt = LINKTYPE_LINUX_SLL2 if isinstance(scapy_pkt, CookedLinuxV2) else LINKTYPE_ETHERNET
    assert decode_segment(pkt(raw, lt), c) is None
    assert getattr(c, reason) == 1 and c.total == 1


def mutate(raw: bytes, pos: int, value: int) -> bytes:
    return raw[:pos] + bytes([value]) + raw[pos + 1 :]


V4_ETH = bytes(Ether(**MAC) / IP(**V4) / tcp())
V6_RAW = bytes(IPv6(**V6) / tcp())


@pytest.mark.parametrize(
    "raw, linktype",
    [
        (mutate(V4_ETH, 14, 0x44), LINKTYPE_ETHERNET),      # IHL 4
        (mutate(V4_ETH, 14, 0x65), LINKTYPE_ETHERNET),      # version 6 in an IPv4 frame
        (mutate(V4_ETH, 17, 16), LINKTYPE_ETHERNET),        # total length below IHL
        (mutate(V4_ETH, 17, 30), LINKTYPE_ETHERNET),        # total length cuts the TCP header
        (mutate(V4_ETH, 46, 0x40), LINKTYPE_ETHERNET),      # TCP data offset 4
        (mutate(V4_ETH, 46, 0xF0), LINKTYPE_ETHERNET),      # data offset past the IP end
        (mutate(V6_RAW, 0, 0x40), LINKTYPE_IPV6),           # version 4 in an IPv6 link
        (mutate(V6_RAW, 5, 8), LINKTYPE_RAW),               # payload length cuts the TCP header
    ],
)
def test_malformed(raw, linktype):
    c = DecodeCounters()
    assert decode_segment(pkt(raw, linktype), c) is None
    assert c.malformed == 1 and c.total == 1


def test_raw_with_bad_version_is_non_ip():
    c = DecodeCounters()
    assert decode_segment(pkt(b"\x50" + V6_RAW[1:], LINKTYPE_RAW), c) is None
    assert c.non_ip == 1


def test_unknown_linktype_counted():
    c = DecodeCounters()
    for lt in (147, 147, 9):
        assert decode_segment(pkt(V4_ETH, lt), c) is None
    assert c.unknown_linktype == 3 and c.unknown_linktypes == {147: 2, 9: 1}
    assert 147 not in SUPPORTED_LINKTYPES and LINKTYPE_LINUX_SLL2 in SUPPORTED_LINKTYPES


def test_without_counters():
    assert decode_segment(pkt(b"", LINKTYPE_ETHERNET)) is None
    assert decode_segment(pkt(b"", 999)) is None


def test_syn_flags_and_empty_payload():
    raw = bytes(Ether(**MAC) / IP(**V4) / TCP(sport=1, dport=2, flags="S"))
    seg = decode_segment(pkt(raw, LINKTYPE_ETHERNET))
    assert seg.flags == SYN and seg.payload == b"" and not seg.truncated


def test_decode_segments_skips_and_counts():
    c = DecodeCounters()
    packets = [pkt(V4_ETH, 1), pkt(bytes(Ether(**MAC) / ARP()), 1), pkt(V6_RAW, LINKTYPE_RAW)]
    segs = list(decode_segments(packets, c))
    assert len(segs) == 2 and c.non_ip == 1


# ---- properties -----------------------------------------------------------------------------


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(sorted(SUPPORTED_LINKTYPES) + [12345]), st.binary(max_size=120))
def test_random_bytes_never_raise(linktype, raw):
    seg = decode_segment(pkt(raw, linktype), DecodeCounters())
    if seg is not None:
        assert seg.payload in raw


@settings(max_examples=800, deadline=None)
@given(
    st.sampled_from([c[1:] for c in LINK_CASES]),
    st.integers(0, 200),
    st.integers(0, 255),
)
def test_mutated_packets_never_raise(case, pos, value):
    linktype, scapy_pkt, _ = case
    raw = bytes(scapy_pkt)
    raw = mutate(raw, pos % len(raw), value)
    c = DecodeCounters()
    seg = decode_segment(pkt(raw, linktype), c)
    assert (seg is None) == (c.total == 1)


tcp_st = st.builds(
    lambda sport, dport, seq, ack, flags, payload, opts: TCP(
        sport=sport, dport=dport, seq=seq, ack=ack, flags=flags,
        options=[("NOP", None)] * opts) / Raw(payload),
    st.integers(0, 65535), st.integers(0, 65535), st.integers(0, 2**32 - 1),
    st.integers(0, 2**32 - 1), st.integers(0, 255), st.binary(min_size=1, max_size=80),
    st.integers(0, 40),
)


@settings(max_examples=300, deadline=None)
@given(
    tcp_st,
    st.booleans(),
    st.integers(0, 3),
    st.integers(0, 20),
    st.sampled_from([LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2, LINKTYPE_RAW]),
)
def test_agrees_with_scapy(tcp_layer, v6, vlans, pad, linktype):
    ip = IPv6(src="2001:db8::5", dst="2001:db8::6") if v6 else IP(src="10.1.2.3", dst="10.3.2.1")
    ethertype = 0x86DD if v6 else 0x0800
    if linktype == LINKTYPE_ETHERNET:
        head = Ether(**MAC)
        for _ in range(vlans):
            head = head / Dot1Q(vlan=vlans)
        frame = head / ip / tcp_layer
    elif linktype == LINKTYPE_LINUX_SLL:
        frame = CookedLinux(proto=ethertype) / ip / tcp_layer
    elif linktype == LINKTYPE_LINUX_SLL2:
        frame = CookedLinuxV2(proto=ethertype) / ip / tcp_layer
    else:
        frame = ip / tcp_layer
    raw = bytes(frame) + b"\x00" * pad
    seg = decode_segment(pkt(raw, linktype))
    ref = frame.__class__(bytes(frame))[TCP]
    ref_ip = ref.underlayer
    assert seg.src_ip == bytes(ref_ip)[8:24] if v6 else seg.src_ip == bytes(ref_ip)[12:16]
    assert (seg.src_port, seg.dst_port, seg.seq, seg.ack, seg.flags) == (
        ref.sport, ref.dport, ref.seq, ref.ack, int(ref.flags))
    assert seg.payload == bytes(ref.payload) and not seg.truncated
