"""pcapng files -> records, streamed chunk by chunk (`feed(sink)`, or `packets()`).

Owns the block loop: Section Header Blocks of either byte order (several sections per file, each
with its own byte order and interfaces), Interface Description Blocks (link type, snap length,
if_tsresol incl. power-of-2 resolutions, if_tsoffset), Enhanced, Simple and obsolete Packet
Blocks, and Decryption Secrets Blocks (their secrets type and data go to `on_secrets`, before the
packets after them are read: `editcap --inject-secrets tls,keys.txt` puts a TLS key log there);
every other block type is skipped by its length. Guarantees: the first section header is
checked when the reader is built; a bad block length (not a multiple of 4, under 12, over
MAX_RECORD, or differing from its trailing copy), a packet block referring to an undeclared
interface, a malformed option or a truncated last block raises a CaptureError naming the file and
byte offset, after every good packet before it was yielded. Packet blocks alike that captured nothing,
back to back (a compressed bomb's), are handed over as one RecordSink.empty_run.

The link types of the interfaces declared before the first packet are noted (in `linktypes` and
CaptureStats) when the reader is built; later ones as their blocks are read.

A Simple Packet Block has no timestamp: it gets the timestamp of the packet before it in the
section (0 if none), so merged output stays in order.
"""

from __future__ import annotations

import struct
from typing import Callable, Iterator

from kwire.capture.packet import HANDOFF, Packet, RecordSink, packets_of
from kwire.capture.source import MAX_RECORD, Source, fill
from kwire.native.record_walk import copies
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError

SHB_MAGIC = b"\x0a\x0d\x0d\x0a"
BT_SHB = 0x0A0D0D0A
BT_IDB = 1
BT_PB = 2       # obsolete Packet Block
BT_SPB = 3
BT_EPB = 6
BT_DSB = 0x0000000A  # Decryption Secrets Block
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


class _Section:
    """What the block loop knows of the section it is in: its byte order's unpackers, its interfaces
    (link type, ts mul, ts div, ts offset ns, snap length) and the last packet's time."""

    __slots__ = ("s", "ifaces", "last_ts")

    def __init__(self, s: _Structs):
        self.s = s
        self.ifaces: list[tuple[int, int, int, int, int]] = []
        self.last_ts = 0


class PcapngReader:
    """One pcapng file. Iterate once for its packets (the iterator closes the source)."""

    format = "pcapng"

    def __init__(self, source: Source, stats: CaptureStats | None = None,
                 on_secrets: Callable[[int, bytes], None] | None = None):
        self._source = source
        self._stats = stats
        self.on_secrets = on_secrets
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

    def packets(self) -> Iterator[Packet]:
        """The file's packets."""
        return packets_of(self.feed)

    def feed(self, sink: RecordSink) -> Iterator[None]:
        """Hand every packet to `sink.record` (kwire.capture.packet.RecordSink), yielding after each
        chunk. Runs are never offered: pcapng packets each sit in a block of their own."""
        source = self._source
        stats = self._stats
        buf = self._buf
        self._buf = b""
        read = None if stats is None else stats.reading(source.name)
        if read is not None:
            stats.note_read(read, source.offset, source.compressed)
        state = _Section(_STRUCTS["<"])
        counts = [0, 0, 0, 0]
        pos = base = 0  # base: file offset of buf[0]
        try:
            while True:
                pos, need = self._chunk(buf, pos, base, sink, state, counts, pos + HANDOFF)
                if stats is not None:
                    stats.add(*counts)
                counts[:] = (0, 0, 0, 0)
                yield
                if not need:  # a window handed over (kwire.capture.packet.HANDOFF): the chunk goes on
                    continue
                base += pos
                buf = fill(source, buf, pos, need)
                pos = 0
                if read is not None:
                    stats.note_read(read, source.offset, source.compressed)
                if len(buf) < need:
                    if buf:
                        problem = (f"truncated block header ({len(buf)} of 12 bytes)" if len(buf) < 12
                                   else f"truncated block (needs {need} bytes, {len(buf)} left)")
                        raise source.error(base, problem)
                    return
        finally:
            if stats is not None:
                stats.add(*counts)
            source.close()

    def _chunk(self, buf, pos: int, base: int, sink: RecordSink, state: _Section,
               counts: list, until: int) -> tuple[int, int]:
        """Read the whole blocks of buf that start from pos on, before `until`; (where the next block
        starts, the bytes needed from there, or 0 when `until` ended the walk first)."""
        error = self._source.error
        record = sink.record
        end = len(buf)
        blen = 12
        n = cap = wire = cut = 0
        try:
            while pos + 12 <= end:
                if pos >= until:
                    return pos, 0
                btype, blen = state.s.head(buf, pos)
                if btype == BT_SHB:
                    btype, blen = self._byte_order(buf, pos, base, state)
                if blen < 12 or blen & 3 or blen > MAX_RECORD:
                    raise error(base + pos, f"bad block length {blen} (block type 0x{btype:x})")
                if pos + blen > end:
                    break
                if state.s.u32(buf, pos + blen - 4)[0] != blen:
                    raise error(base + pos, f"block length {blen} differs from its trailing copy")
                if btype == BT_EPB or btype == BT_SPB or btype == BT_PB:
                    ts, lt, start, caplen, wirelen = self._packet(buf, pos, blen, btype, base, state)
                    if caplen == 0 and pos + 2 * blen <= end and buf[pos:pos + blen] == buf[pos + blen:pos + 2 * blen]:
                        k = copies(buf, pos, blen, end)  # empty packets alike, back to back: one call for all
                        sink.empty_run(ts, lt, wirelen, k)
                        pos += (k - 1) * blen
                    else:
                        k = 1
                        record(ts, lt, buf, start, start + caplen, wirelen)
                    n += k
                    cap += caplen
                    wire += k * wirelen
                    if caplen < wirelen:
                        cut += k
                elif btype == BT_IDB:
                    state.ifaces.append(self._interface(buf, pos, blen, state.s, base))
                elif btype == BT_DSB and self.on_secrets is not None:
                    self._secrets(buf, pos, blen, base, state)
                elif btype == BT_SHB:
                    self._section(buf, pos, blen, base, state)
                pos += blen
        finally:
            counts[:] = (n, cap, wire, cut)
        return pos, (blen if pos + 12 <= end else 12)

    def _secrets(self, buf, pos: int, blen: int, base: int, state: _Section) -> None:
        """A Decryption Secrets Block: secrets type, secrets length, the secrets (then padding, options)."""
        if blen < 20:
            raise self._source.error(base + pos, f"decryption secrets block too short ({blen} bytes)")
        secrets_type, length = state.s.head(buf, pos + 8)
        if length > blen - 20:
            raise self._source.error(base + pos, f"secrets length {length} exceeds its block ({blen} bytes)")
        self.on_secrets(secrets_type, bytes(buf[pos + 16:pos + 16 + length]))

    def _byte_order(self, buf, pos: int, base: int, state: _Section) -> tuple[int, int]:
        """A section header block: its byte order sets the section's unpackers."""
        order = _BOM.get(buf[pos + 8: pos + 12])
        if order is None:
            raise self._source.error(base + pos + 8, "bad pcapng byte-order magic")
        state.s = _STRUCTS[order]
        return state.s.head(buf, pos)

    def _section(self, buf, pos: int, blen: int, base: int, state: _Section) -> None:
        if blen < SHB_MIN:
            raise self._source.error(base + pos, f"section header block too short ({blen} bytes)")
        major, minor, _ = state.s.shb(buf, pos + 12)
        if major != 1:
            raise self._source.error(base + pos, f"unsupported pcapng version {major}.{minor}")
        state.ifaces = []
        state.last_ts = 0
        self.sections += 1

    def _packet(self, buf, pos: int, blen: int, btype: int, base: int, state: _Section):
        """An enhanced, simple or obsolete packet block -> (ts ns, link type, start, captured, wire)."""
        error = self._source.error
        if btype == BT_SPB:
            if blen < 16:
                raise error(base + pos, f"simple packet block too short ({blen} bytes)")
            if not state.ifaces:
                raise error(base + pos, "simple packet block before any interface block")
            lt, _, _, _, snaplen = state.ifaces[0]
            wirelen = state.s.u32(buf, pos + 8)[0]
            caplen = min(wirelen, blen - 16)
            if snaplen:
                caplen = min(caplen, snaplen)
            return state.last_ts, lt, pos + 12, caplen, wirelen
        kind = "enhanced packet" if btype == BT_EPB else "packet"
        if blen < 32:
            raise error(base + pos, f"{kind} block too short ({blen} bytes)")
        if btype == BT_EPB:
            iid, hi, lo, caplen, wirelen = state.s.epb(buf, pos + 8)
        else:
            iid, _, hi, lo, caplen, wirelen = state.s.pb(buf, pos + 8)
        if caplen > blen - 32:
            raise error(base + pos, f"packet length {caplen} exceeds its block ({blen} bytes)")
        try:
            lt, mul, div, off, _ = state.ifaces[iid]
        except IndexError:
            raise error(base + pos, f"packet refers to undeclared interface {iid}") from None
        state.last_ts = ((hi << 32) | lo) * mul // div + off
        return state.last_ts, lt, pos + 28, caplen, wirelen
