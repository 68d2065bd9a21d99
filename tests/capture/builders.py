"""Hand-built capture files for the tests: pcap (any byte order, micro/nano, modified) and pcapng
blocks (any byte order, interfaces with tsresol/tsoffset options, EPB/SPB/obsolete PB)."""

from __future__ import annotations

import struct

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D
PCAP_MAGIC_MODIFIED = 0xA1B2CD34


def pcap(records, *, order="<", nano=False, linktype=1, snaplen=262144, modified=False,
         version=(2, 4)) -> bytes:
    """records: iterable of (ts_ns, data) or (ts_ns, data, wire_len)."""
    magic = PCAP_MAGIC_MODIFIED if modified else PCAP_MAGIC_NS if nano else PCAP_MAGIC_US
    out = [struct.pack(order + "IHHiIII", magic, version[0], version[1], 0, 0, snaplen, linktype)]
    for rec in records:
        ts, data = rec[0], rec[1]
        wire = rec[2] if len(rec) > 2 else len(data)
        sec, ns = divmod(ts, 1_000_000_000)
        frac = ns if nano else ns // 1000
        out.append(struct.pack(order + "IIII", sec, frac, len(data), wire))
        if modified:
            out.append(struct.pack(order + "IHBx", 1, 0x0800, 0))
        out.append(data)
    return b"".join(out)


def block(btype: int, body: bytes, order: str = "<") -> bytes:
    body += b"\0" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack(order + "II", btype, n) + body + struct.pack(order + "I", n)


def option(code: int, value: bytes, order: str = "<") -> bytes:
    return struct.pack(order + "HH", code, len(value)) + value + b"\0" * (-len(value) % 4)


def end_of_options(order: str = "<") -> bytes:
    return struct.pack(order + "HH", 0, 0)


def shb(order: str = "<", version=(1, 0), options: bytes = b"") -> bytes:
    body = struct.pack(order + "IHHq", 0x1A2B3C4D, version[0], version[1], -1) + options
    return block(0x0A0D0D0A, body, order)


def idb(linktype: int, order: str = "<", snaplen: int = 0, tsresol: int | None = None,
        tsoffset: int | None = None, name: bytes | None = None) -> bytes:
    opts = b""
    if name is not None:
        opts += option(2, name, order)
    if tsresol is not None:
        opts += option(9, bytes([tsresol]), order)
    if tsoffset is not None:
        opts += option(14, struct.pack(order + "q", tsoffset), order)
    if opts:
        opts += end_of_options(order)
    return block(1, struct.pack(order + "HHI", linktype, 0, snaplen) + opts, order)


def epb(iface: int, ticks: int, data: bytes, order: str = "<", wire_len: int | None = None,
        options: bytes = b"") -> bytes:
    wire = len(data) if wire_len is None else wire_len
    body = struct.pack(order + "IIIII", iface, ticks >> 32, ticks & 0xFFFFFFFF, len(data), wire)
    body += data + b"\0" * (-len(data) % 4) + options
    return block(6, body, order)


def spb(data: bytes, order: str = "<", wire_len: int | None = None) -> bytes:
    wire = len(data) if wire_len is None else wire_len
    return block(3, struct.pack(order + "I", wire) + data, order)


def obsolete_pb(iface: int, ticks: int, data: bytes, order: str = "<") -> bytes:
    body = struct.pack(order + "HHIIII", iface, 0, ticks >> 32, ticks & 0xFFFFFFFF, len(data), len(data))
    return block(2, body + data, order)
