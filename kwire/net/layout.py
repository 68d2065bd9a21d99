"""Where the fields of the commonest packet lie: untagged Ethernet, IPv4 without options, TCP.

One definition of that header layout and of the test that a packet is one, for every path that reads
it straight from a capture's buffer: kwire.native.net_decode's fast path and kwire.native.fused's. Each unpacker
reads the fields its caller checks, in one struct call (offsets: Ethernet type at 12, IPv4 at 14, TCP
at 34):

- ETH_IPV4_TCP: `head` (Ethernet type, IPv4 version/IHL and TOS as one number), total length,
  fragment field, protocol, source and destination address, source and destination port, sequence
  and acknowledgement number, data offset byte, flags.
- ETH_IPV4_TCP_KEYED: the same, with addresses and ports as one 12-byte key (bytes 26..38 as they
  are, `header_key`): a TCP direction is looked up by it without building a tuple.
- RAW_IPV4_TCP_KEYED: KEYED's fields for a packet without link header (raw IP, as live capture on
  every interface hands them over): everything 14 bytes earlier, `head` without the Ethernet type.
- KEY_AT, KEY_SIZE: where KEYED's key lies. kwire.native.fused reads the other fields with native code's
  `kwire.native.c_reads._ipv4_tcp` (C reads compiled), which holds these structs' offsets: tests/net/test_layout.py
  holds the two to each other.

The test, `plain_ipv4_tcp(head, frag, proto)`: IPv4 in untagged Ethernet, no IP options, not a
fragment (more-fragments flag and offset 0; DF and the reserved bit may be set), carrying TCP (a raw
packet's head lies between RAW_HEAD_LO and RAW_HEAD_HI instead). kwire.native.fused's per-record paths write
the same expression inline, with these same names: a call per record costs its run loop 1.7 % more
instructions on a bulk transfer (callgrind, 20,000 packets). It compares small numbers and makes
none: a mask that leaves a large number, or a shift, would cost as much again.

TCP_PAYLOAD_AT[data offset byte] is where the TCP payload starts in such a frame (a data offset under
5 words is damage: past any buffer). SLOW_BY_FLAGS[flags] tells SYN, FIN or RST among the flags.
"""

from __future__ import annotations

from struct import Struct

from kwire.net.segment import FIN, RST, SYN

ETH_IPV4_TCP = Struct("!12xIH2xHxB2x4s4sHHIIBB").unpack_from
ETH_IPV4_TCP_KEYED = Struct("!12xIH2xHxB2x12sIIBB").unpack_from
RAW_IPV4_TCP_KEYED = Struct("!HH2xHxB2x12sIIBB").unpack_from
KEY_AT, KEY_SIZE = 26, 12  # where KEYED's key lies in an Ethernet frame (a raw packet's: ETHERNET_HEADER earlier)
ETHERNET_HEADER = 14
MIN_FRAME = 54  # Ethernet 14 + IPv4 20 + TCP 20
MIN_RAW = 40    # IPv4 20 + TCP 20
IPV4_NO_OPTIONS = 0x45
ETHERTYPE_IPV4 = 0x0800
IPPROTO_TCP = 6

PLAIN_HEAD_LO = (ETHERTYPE_IPV4 << 8 | IPV4_NO_OPTIONS) << 8  # head of a packet the fast paths take: any TOS
PLAIN_HEAD_HI = PLAIN_HEAD_LO | 0xFF
RAW_HEAD_LO = IPV4_NO_OPTIONS << 8  # the same without the Ethernet type (raw IP)
RAW_HEAD_HI = RAW_HEAD_LO | 0xFF
FRAGMENTED = 0x3FFF  # of the fragment field: the more-fragments flag and the fragment offset


def plain_ipv4_tcp(head: int, frag: int, proto: int) -> bool:
    """Is this the packet the fast paths take (module docstring)?"""
    return PLAIN_HEAD_LO <= head <= PLAIN_HEAD_HI and proto == IPPROTO_TCP and not frag & FRAGMENTED


SLOW_FLAGS = SYN | FIN | RST
SLOW_BY_FLAGS = tuple(bool(f & SLOW_FLAGS) for f in range(256))
TCP_PAYLOAD_AT = tuple(34 + ((d >> 4) << 2) if d >= 0x50 else 1 << 29 for d in range(256))

_PORTS = Struct("!HH")


def header_key(src_ip: bytes, src_port: int, dst_ip: bytes, dst_port: int) -> bytes:
    """What bytes 26..38 of an Ethernet+IPv4 frame hold for this (src ip, port, dst ip, port)."""
    return src_ip + dst_ip + _PORTS.pack(src_port, dst_port)


def reverse_key(key: bytes) -> bytes:
    """The header key of the other direction."""
    return key[4:8] + key[:4] + key[10:] + key[8:10]
