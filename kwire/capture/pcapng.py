"""pcapng files -> Packets, streamed chunk by chunk.

Owns the block loop: Section Header Blocks of either byte order (several sections per file, each
with its own byte order and interfaces), Interface Description Blocks (link type, snap length,
if_tsresol incl. power-of-2 resolutions, if_tsoffset), Enhanced, Simple and obsolete Packet
Blocks; every other block type is skipped by its length. Guarantees: the first section header is
checked when the reader is built; a bad block length (not a multiple of 4, under 12, over
MAX_RECORD, or differing from its trailing copy), a packet block referring to an undeclared
interface, a malformed option or a truncated last block raises a CaptureError naming the file and
byte offset, after every good packet before it was yielded.

The link types of the interfaces declared before the first packet are noted (in `linktypes` and
CaptureStats) when the reader is built; later ones as their blocks are read.

A Simple Packet Block has no timestamp: it gets the timestamp of the packet before it in the
section (0 if none), so merged output stays in order.
"""

from __future__ import annotations

import struct
from typing import Iterator

from kwire.capture.packet import LINKTYPE_ETHERNET, TAKEN_EVENTS, Packet, Take, TakeRun
from kwire.capture.source import MAX_RECORD, Source, fill
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError

SHB_MAGIC = b"\x0a\x0d\x0d\x0a"
BT_SHB = 0x0A0D0D0A
BT_IDB = 1
BT_PB = 2       # obsolete Packet Block
BT_SPB = 3
BT_EPB = 6
OPT_END = 0
OPT_IF_TSRESOL = 9
OPT_IF_TSOFFSET = 14

_BOM = {b"\x4d\x3c\x2b\x1a": "<", b"\x1a\x2b\x3c\x4d": ">"}
SHB_MIN = 28


class _Structs:
    """Precompiled unpackers for one byte order."""

    def __init__(self, order: str):
        self.head = struct.Struct(order + "II").unpack_from       # block type, total length
        self.u32 = struct.Struct(order + "I").unpack_from
        self.shb = struct.Struct(order + "HHq").unpack_from       # major, minor, section length
        self.idb = struct.Struct(order + "HHI").unpack_from       # linktype, reserved, snaplen
        self.opt = struct.Struct(order + "HH").unpack_from        # option code, length
        self.i64 = struct.Struct(order + "q").unpack_from
        self.epb = struct.Struct(order + "IIIII").unpack_from     # iface, ts hi, ts lo, cap, len
        self.pb = struct.Struct(order + "HHIIII").unpack_from     # iface, drops, hi, lo, cap, len


_STRUCTS = {"<": _Structs("<"), ">": _Structs(">")}


def ts_scale(tsresol: int) -> tuple[int, int]:
    """(mul, div) such that ticks * mul // div is nanoseconds, for an if_tsresol byte."""
    if tsresol & 0x80:
        return 1_000_000_000, 1 << (tsresol & 0x7F)
    if tsresol <= 9:
        return 10 ** (9 - tsresol), 1
    return 1, 10 ** (tsresol - 9)


class PcapngReader:
    """One pcapng file. Iterate once for its packets (the iterator closes the source)."""

    format = "pcapng"

    def __init__(self, source: Source, stats: CaptureStats | None = None):
        self._source = source
        self._stats = stats
        name = source.name
        buf = fill(source, source.head, 0, SHB_MIN)
        if len(buf) < SHB_MIN:
            raise CaptureError(
                f"{name}: truncated pcapng section header: {len(buf)} of {SHB_MIN} bytes"
            )
        if buf[:4] != SHB_MAGIC:
            raise CaptureError(f"{name}: not a pcapng capture (magic 0x{buf[:4].hex()})")
        order = _BOM.get(buf[8:12])
        if order is None:
            raise CaptureError(f"{name}: bad pcapng byte-order magic 0x{buf[8:12].hex()}")
        major, minor, _ = _STRUCTS[order].shb(buf, 12)
        if major != 1:
            raise CaptureError(f"{name}: unsupported pcapng version {major}.{minor}")
        self.linktypes: set[int] = set()
        self.sections = 0
        self._buf = buf
        if stats is not None:
            stats.files += 1
        self._peek_interfaces(buf, _STRUCTS[order])

    def _peek_interfaces(self, buf: bytes, s: _Structs) -> None:
        """Note the link types of the interfaces declared before the first packet (within the
        first chunk), so they are known as soon as the file is open. The block loop checks and
        parses these blocks again properly."""
        pos = 0
        while pos + 12 <= len(buf):
            btype, blen = s.head(buf, pos)
            if blen < 12 or blen & 3 or pos + blen > len(buf):
                return
            if btype == BT_IDB and blen >= 20:
                linktype = s.idb(buf, pos + 8)[0]
                self.linktypes.add(linktype)
                if self._stats is not None:
                    self._stats.note_linktype(linktype, self._source.name)
            elif btype in (BT_EPB, BT_SPB, BT_PB) or (btype == BT_SHB and pos):
                return
            pos += blen

    def __iter__(self) -> Iterator[Packet]:
        return self.packets()

    def _interface(self, buf: bytes, pos: int, blen: int, s: _Structs, base: int):
        """Parse an IDB -> (linktype, ts mul, ts div, ts offset ns, snaplen)."""
        if blen < 20:
            raise self._source.error(base + pos, f"interface block too short ({blen} bytes)")
        linktype, _, snaplen = s.idb(buf, pos + 8)
        tsresol = 6
        offset_s = 0
        o = pos + 16
        oend = pos + blen - 4
        while o + 4 <= oend:
            code, olen = s.opt(buf, o)
            if code == OPT_END:
                break
            value = o + 4
            if value + olen > oend:
                raise self._source.error(base + o, f"option {code} runs past its block")
            if code == OPT_IF_TSRESOL and olen >= 1:
                tsresol = buf[value]
            elif code == OPT_IF_TSOFFSET and olen >= 8:
                offset_s = s.i64(buf, value)[0]
            o = value + ((olen + 3) & ~3)
        mul, div = ts_scale(tsresol)
        self.linktypes.add(linktype)
        if self._stats is not None:
            self._stats.note_linktype(linktype, self._source.name)
        return linktype, mul, div, offset_s * 1_000_000_000, snaplen

    def packets(self, take: Take | None = None, take_run: TakeRun | None = None) -> Iterator[Packet]:
        """The file's packets; `take` as in kwire.capture.pcap.PcapReader.packets (offered the whole
        packets of enhanced packet blocks on Ethernet interfaces; simple packet blocks, rare, are not).
        `take_run` is not used: its records are classic pcap's."""
        source = self._source
        error = source.error
        stats = self._stats
        buf = self._buf
        self._buf = b""
        pos = 0
        base = 0  # file offset of buf[0]
        s = _STRUCTS["<"]
        head, u32, epb = s.head, s.u32, s.epb
        ifaces: list[tuple[int, int, int, int, int]] = []
        last_ts = 0
        n = cap = wire = cut = 0
        try:
            while True:
                end = len(buf)
                blen = 12
                while pos + 12 <= end:
                    btype, blen = head(buf, pos)
                    if btype == BT_SHB:
                        order = _BOM.get(buf[pos + 8 : pos + 12])
                        if order is None:
                            raise error(base + pos + 8, "bad pcapng byte-order magic")
                        s = _STRUCTS[order]
                        head, u32, epb = s.head, s.u32, s.epb
                        btype, blen = head(buf, pos)
                    if blen < 12 or blen & 3 or blen > MAX_RECORD:
                        raise error(base + pos, f"bad block length {blen} (block type 0x{btype:x})")
                    if pos + blen > end:
                        break
                    if u32(buf, pos + blen - 4)[0] != blen:
                        raise error(base + pos, f"block length {blen} differs from its trailing copy")
                    if btype == BT_EPB:
                        if blen < 32:
                            raise error(base + pos, f"enhanced packet block too short ({blen} bytes)")
                        iid, hi, lo, caplen, wirelen = epb(buf, pos + 8)
                        if caplen > blen - 32:
                            raise error(base + pos, f"packet length {caplen} exceeds its block ({blen} bytes)")
                        try:
                            lt, mul, div, off, _ = ifaces[iid]
                        except IndexError:
                            raise error(base + pos, f"packet refers to undeclared interface {iid}") from None
                        last_ts = ((hi << 32) | lo) * mul // div + off
                        start = pos + 28
                        pos += blen
                        n += 1
                        cap += caplen
                        wire += wirelen
                        if caplen < wirelen:
                            cut += 1
                        elif take is not None and lt == LINKTYPE_ETHERNET:
                            taken = take(last_ts, buf, start, start + caplen)
                            if taken:
                                if taken == TAKEN_EVENTS:
                                    yield None
                                continue
                        yield Packet(last_ts, lt, buf[start : start + caplen], wirelen)
                        continue
                    if btype == BT_SPB:
                        if blen < 16:
                            raise error(base + pos, f"simple packet block too short ({blen} bytes)")
                        if not ifaces:
                            raise error(base + pos, "simple packet block before any interface block")
                        lt, _, _, _, snaplen = ifaces[0]
                        wirelen = u32(buf, pos + 8)[0]
                        caplen = min(wirelen, blen - 16)
                        if snaplen:
                            caplen = min(caplen, snaplen)
                        start = pos + 12
                        pos += blen
                        n += 1
                        cap += caplen
                        wire += wirelen
                        if caplen < wirelen:
                            cut += 1
                        yield Packet(last_ts, lt, buf[start : start + caplen], wirelen)
                        continue
                    if btype == BT_IDB:
                        ifaces.append(self._interface(buf, pos, blen, s, base))
                    elif btype == BT_SHB:
                        if blen < SHB_MIN:
                            raise error(base + pos, f"section header block too short ({blen} bytes)")
                        major, minor, _ = s.shb(buf, pos + 12)
                        if major != 1:
                            raise error(base + pos, f"unsupported pcapng version {major}.{minor}")
                        ifaces = []
                        last_ts = 0
                        self.sections += 1
                    elif btype == BT_PB:
                        if blen < 32:
                            raise error(base + pos, f"packet block too short ({blen} bytes)")
                        iid, _, hi, lo, caplen, wirelen = s.pb(buf, pos + 8)
                        if caplen > blen - 32:
                            raise error(base + pos, f"packet length {caplen} exceeds its block ({blen} bytes)")
                        try:
                            lt, mul, div, off, _ = ifaces[iid]
                        except IndexError:
                            raise error(base + pos, f"packet refers to undeclared interface {iid}") from None
                        last_ts = ((hi << 32) | lo) * mul // div + off
                        start = pos + 28
                        pos += blen
                        n += 1
                        cap += caplen
                        wire += wirelen
                        if caplen < wirelen:
                            cut += 1
                        yield Packet(last_ts, lt, buf[start : start + caplen], wirelen)
                        continue
                    pos += blen
                if stats is not None:
                    stats.add(n, cap, wire, cut)
                    n = cap = wire = cut = 0
                need = blen if pos + 12 <= end else 12
                base += pos
                buf = fill(source, buf, pos, need)
                pos = 0
                if len(buf) < need:
                    if not buf:
                        return
                    if len(buf) < 12:
                        problem = f"truncated block header ({len(buf)} of 12 bytes)"
                    else:
                        problem = f"truncated block (needs {need} bytes, {len(buf)} left)"
                    raise error(base, problem)
        finally:
            if stats is not None:
                stats.add(n, cap, wire, cut)
            source.close()
