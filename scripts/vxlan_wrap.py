#!/usr/bin/env python3
"""A tunnelled copy of a capture: every Ethernet frame of a classic pcap wrapped in Ethernet/IPv4/UDP/VXLAN.

    python scripts/vxlan_wrap.py small10.pcap small10-vxlan.pcap

For speed figures of the plain path (docs/speed.md: tunnelled traffic does not take the fused path). The outer
headers are fixed (10.0.0.1:40000 -> 10.0.0.2:4789, VNI 42, IPv4 checksum set, UDP checksum 0, as VXLAN allows);
the inner frames are copied byte for byte and each record's times are kept. Classic pcap of link type Ethernet,
little-endian microsecond or nanosecond records only: anything else is refused in one line.
"""

from __future__ import annotations

import struct
import sys

MAC = bytes.fromhex("020000000001020000000002") + b"\x08\x00"
VXLAN = struct.pack(">II", 0x08000000, 42 << 8)  # flags: a VNI is present; VNI 42
OUTER = len(MAC) + 20 + 8 + len(VXLAN)
RECORD = struct.Struct("<IIII")


def ipv4_header(udp_len: int) -> bytes:
    """An IPv4 header (no options, don't fragment, UDP) for a datagram of `udp_len` bytes, its checksum set."""
    head = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0, bytes([10, 0, 0, 1]),
                       bytes([10, 0, 0, 2]))
    total = sum(struct.unpack(">10H", head))
    total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    return head[:10] + struct.pack(">H", ~total & 0xFFFF) + head[12:]


def wrap(frame: bytes) -> bytes:
    """The Ethernet frame inside outer Ethernet, IPv4, UDP (to port 4789) and VXLAN headers."""
    udp_len = 8 + len(VXLAN) + len(frame)
    return MAC + ipv4_header(udp_len) + struct.pack(">HHHH", 40000, 4789, udp_len, 0) + VXLAN + frame


def wrap_capture(data: bytes) -> bytes:
    """A whole classic pcap file's bytes, every record's frame wrapped (a truncated last record is left out)."""
    if len(data) < 24 or data[:4] not in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        raise ValueError("not a little-endian classic pcap file")
    if struct.unpack_from("<I", data, 20)[0] & 0xFFFF != 1:
        raise ValueError("not an Ethernet capture (link type 1)")
    out = bytearray(data[:24])
    pos = 24
    while pos + 16 <= len(data):
        sec, frac, caplen, wirelen = RECORD.unpack_from(data, pos)
        frame = data[pos + 16:pos + 16 + caplen]
        if len(frame) < caplen:
            break
        pos += 16 + caplen
        out += RECORD.pack(sec, frac, caplen + OUTER, wirelen + OUTER) + wrap(frame)
    return bytes(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    try:
        with open(argv[0], "rb") as src:
            wrapped = wrap_capture(src.read())
        with open(argv[1], "wb") as dst:
            dst.write(wrapped)
    except (OSError, ValueError) as error:
        print(f"vxlan_wrap: {argv[0]}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
