"""kwire.net.layout.plain_ipv4_tcp, the fast paths' one test of "the commonest packet", against
scapy's reading of the same headers, and the places that write it inline (kwire.native.fused's record path
for Ethernet and raw IP, and decode_record's fast path) against it: each takes exactly the packets
the test accepts."""

from __future__ import annotations

import itertools

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Dot1Q, Ether

from kwire.capture.packet import Packet
from kwire.native.fused import RecordFeed
from kwire.native.net_decode import decode_segment
from kwire.net.layout import ETH_IPV4_TCP, RAW_IPV4_TCP_KEYED, plain_ipv4_tcp
from kwire.net.segment import ACK, SYN
from kwire.native.tcp_flows import FlowTable

CLIENT, SERVER = ("10.0.0.1", 40000), ("10.0.0.2", 9092)
PAYLOAD = b"kafka bytes"

# (flags, frag offset) of the IPv4 header, TOS, IP options, protocol, VLAN tag
IP_FLAGS = [(0, 0), ("DF", 0), ("MF", 0), (0, 8), ("MF", 8), ("evil", 0), ("DF+evil", 0)]
TOS = [0, 0x10, 0xFF]
OPTIONS = [None, b"\x01\x01\x01\x00"]  # NOPs and the end of the option list: IHL 6
PROTOS = ["tcp", "udp"]
VLAN = [False, True]


def ip_packet(flags, frag, tos, options, proto):
    ip = IP(src=CLIENT[0], dst=SERVER[0], flags=flags, frag=frag, tos=tos, id=7)
    if options is not None:
        ip.options = options
    l4 = (TCP(sport=CLIENT[1], dport=SERVER[1], seq=1001, ack=50001, flags="A") if proto == "tcp"
          else UDP(sport=CLIENT[1], dport=SERVER[1]))
    return ip / l4 / PAYLOAD


def truth(ip) -> bool:
    """What scapy reads: IPv4 without options, not a fragment, carrying TCP."""
    return ip.version == 4 and ip.ihl == 5 and not ip.flags.MF and ip.frag == 0 and ip.proto == 6


CASES = list(itertools.product(IP_FLAGS, TOS, OPTIONS, PROTOS, VLAN))


def _open_table(seen: list) -> tuple[FlowTable, RecordFeed]:
    """A table with the CLIENT -> SERVER connection open (handshake through the plain path)."""
    table = FlowTable(lambda conn: _Want())
    feed = RecordFeed(table, seen.append)
    for ts, pkt in ((1, Ether() / IP(src=CLIENT[0], dst=SERVER[0]) / TCP(sport=CLIENT[1], dport=SERVER[1],
                                                                        seq=1000, flags="S")),
                    (2, Ether() / IP(src=SERVER[0], dst=CLIENT[0]) / TCP(sport=SERVER[1], dport=CLIENT[1],
                                                                        seq=50000, ack=1001, flags="SA"))):
        data = bytes(pkt)
        table.feed(decode_segment(Packet(ts, 1, data, len(data))))
    return table, feed


class _Want:
    def data(self, direction, ts_ns, data):
        return 0

    def gap(self, direction, ts_ns, size):
        pass

    def close(self, ts_ns, reason):
        pass


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, itertools.chain(*(
    x if isinstance(x, tuple) else (x,) for x in c)))))
def test_the_fast_paths_take_exactly_what_the_test_accepts(case):
    (flags, frag), tos, options, proto, vlan = case
    ip = ip_packet(flags, frag, tos, options, proto)
    frame = bytes((Ether() / Dot1Q(vlan=5) / ip) if vlan else (Ether() / ip))
    raw = bytes(ip)
    parsed = IP(raw)
    expected = truth(parsed) and not vlan

    head, total, frag_field, proto_field = ETH_IPV4_TCP(frame, 0)[:4]
    assert plain_ipv4_tcp(head, frag_field, proto_field) == expected

    # kwire.native.fused, Ethernet: the fast path takes it (no Packet for the plain path) exactly then
    seen: list = []
    _, feed = _open_table(seen)
    feed.record(10, 1, frame, 0, len(frame), len(frame))
    assert (not seen) == expected

    # kwire.native.fused, raw IP: the same test without the Ethernet header
    head_raw, _, frag_raw, proto_raw = RAW_IPV4_TCP_KEYED(raw, 0)[:4]
    seen = []
    _, feed = _open_table(seen)
    feed.record(10, 101, raw, 0, len(raw), len(raw))
    assert (not seen) == truth(parsed)
    assert (head_raw >> 8 == 0x45 and proto_raw == 6 and not frag_raw & 0x3FFF) == truth(parsed)

    # decode_record's fast path and the general one read the same segment
    seg = decode_segment(Packet(10, 1, frame, len(frame)))
    if expected:
        assert seg is not None and bytes(seg.payload) == PAYLOAD and seg.flags == ACK
    elif proto == "tcp" and not (flags in ("MF",) or frag):
        assert seg is not None and bytes(seg.payload) == PAYLOAD  # the general path: options, VLAN
    assert not (seg is not None and seg.flags & SYN)


def test_native_reads_of_the_fields_are_the_keyed_structs():
    """kwire.native.c_reads._ipv4_tcp (kwire.native.fused's reads of a file's packets; its C form, compiled, is held to this one
    by tests/test_compiled.py's captures) and KEY_AT give what ETH_IPV4_TCP_KEYED and RAW_IPV4_TCP_KEYED give, on
    bytes where every field differs, a raw packet at its buffer's start too; short of bytes it raises IndexError."""
    import random

    import pytest

    from kwire.native import c_reads
    from kwire.net import layout

    rng = random.Random(7)
    for _ in range(50):
        frame = rng.randbytes(60)
        keyed = layout.ETH_IPV4_TCP_KEYED(frame, 0)
        assert c_reads._ipv4_tcp(frame, 0, True) == keyed[:4] + keyed[5:]
        assert frame[layout.KEY_AT:layout.KEY_AT + layout.KEY_SIZE] == keyed[4]
        raw = layout.RAW_IPV4_TCP_KEYED(frame, layout.ETHERNET_HEADER)
        assert c_reads._ipv4_tcp(frame, 0, False) == raw[:4] + raw[5:]
        packet = frame[layout.ETHERNET_HEADER:]  # a raw packet at the start of its buffer: its frame 14 bytes before
        assert c_reads._ipv4_tcp(packet, -layout.ETHERNET_HEADER, False) == raw[:4] + raw[5:]
    with pytest.raises(IndexError):
        c_reads._ipv4_tcp(bytes(47), 0, True)
    with pytest.raises(IndexError):
        c_reads._ipv4_tcp(bytes(33), -layout.ETHERNET_HEADER, False)
