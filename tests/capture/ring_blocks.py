"""TPACKET_V3 ring blocks built the way the kernel lays them out, for tests of the ring walk.

A block: the block descriptor (version, offset to private area, status, packet count, offset of the
first frame, bytes used, sequence number, first and last packet times), then frames, each a
tpacket3_hdr (offset of the next frame, seconds, nanoseconds, captured length, wire length,
status, where the packet starts, where its network header starts, rx hash, VLAN TCI and TPID), a
sockaddr_ll, padding, and the packet at tp_mac; the next frame starts 8-byte aligned after it
(tp_next_offset, 0 after the last). Tests may ask for other link-header offsets and extra padding,
which a reader must follow through the header rather than assume.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

BLOCK_DESC = struct.Struct("=IIIIII Q II II")
FRAME_HDR = struct.Struct("=IIIIIIHHIIHH8x")
FIRST = 48
KERNEL_MAC = 82  # where the kernel puts an Ethernet packet (SOCK_RAW, no reserve)
TP_STATUS_USER = 1
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6


@dataclass
class Frame:
    ts_ns: int
    data: bytes  # what the kernel stored (snap length applied, VLAN tag already taken out)
    wire_len: int
    status: int = 0
    vlan_tci: int = 0
    vlan_tpid: int = 0
    mac: int = KERNEL_MAC
    pad: int = 0  # extra bytes before the next frame (a reader must follow tp_next_offset)


def block(frames: list[Frame], size: int = 1 << 16, base: int = 0, buf: bytearray | None = None,
          garbage: int = 0xEE) -> bytearray:
    """A block of `frames` at buf[base:base + size] (a new buffer when none is given). The bytes
    between frames are `garbage`, as a reused ring block holds old data there."""
    buf = bytearray([garbage]) * (base + size) if buf is None else buf
    pos = base + FIRST
    starts = []
    for f in frames:
        starts.append(pos)
        end = pos + f.mac + len(f.data)
        assert end <= base + size, "frames do not fit in the block"
        buf[pos:pos + 68] = b"\x00" * 68  # header and sockaddr_ll
        buf[pos + f.mac:end] = f.data
        pos = (end + 7) & ~7
        pos += f.pad
    for i, (f, start) in enumerate(zip(frames, starts)):
        following = starts[i + 1] - start if i + 1 < len(starts) else 0
        FRAME_HDR.pack_into(buf, start, following, f.ts_ns // 10**9, f.ts_ns % 10**9, len(f.data), f.wire_len,
                            f.status | TP_STATUS_USER, f.mac, f.mac + 14, 0, f.vlan_tci, f.vlan_tpid, 0)
    used = (pos - base) if frames else FIRST
    last = frames[-1].ts_ns if frames else 0
    first = frames[0].ts_ns if frames else 0
    BLOCK_DESC.pack_into(buf, base, 1, 0, TP_STATUS_USER, len(frames), FIRST, used, 1,
                         first // 10**9, first % 10**9, last // 10**9, last % 10**9)
    return buf
