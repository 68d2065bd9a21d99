"""IPv4/IPv6 TCP packets made from their fields, checksums included: what kwire writes back out.

`tcp_packet(src, dst, sport, dport, seq, ack, flags, payload)` is a raw IP packet (no link header:
pcap LINKTYPE_RAW) carrying one TCP segment without options, IPv4 when the addresses are 4 bytes,
IPv6 when they are 16; the IP header checksum (IPv4) and the TCP checksum (over the pseudo-header)
are computed as RFC 793 / RFC 8200 define them.
"""

from __future__ import annotations

import struct

_IPV4 = struct.Struct("!BBHHHBBH4s4s")
_IPV6 = struct.Struct("!IHBB16s16s")
_TCP = struct.Struct("!HHIIBBHHH")
IPPROTO_TCP = 6
WINDOW = 65535


def checksum(data) -> int:
    """The Internet checksum (RFC 1071) of `data`."""
    if len(data) % 2:
        data = bytes(data) + b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def tcp_packet(src: bytes, dst: bytes, sport: int, dport: int, seq: int, ack: int, flags: int,
               payload: bytes = b"") -> bytes:
    length = 20 + len(payload)
    if len(src) == 4:
        pseudo = src + dst + struct.pack("!BBH", 0, IPPROTO_TCP, length)
    else:
        pseudo = src + dst + struct.pack("!IxxxB", length, IPPROTO_TCP)
    header = _TCP.pack(sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags, WINDOW, 0, 0)
    tcp_sum = checksum(pseudo + header + payload)
    header = header[:16] + struct.pack("!H", tcp_sum) + header[18:]
    if len(src) == 4:
        ip = _IPV4.pack(0x45, 0, 20 + length, 0, 0x4000, 64, IPPROTO_TCP, 0, src, dst)
        ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
    else:
        ip = _IPV6.pack(6 << 28, length, IPPROTO_TCP, 64, src, dst)
    return ip + header + payload
