"""Classic pcap (libpcap) files -> records, streamed chunk by chunk.

Owns the pcap file header (both byte orders; microsecond magic 0xa1b2c3d4, nanosecond magic
0xa1b23c4d, and the "modified" 0xa1b2cd34 variant with 24-byte record headers) and the record
loop (`feed(sink)`: every record to a kwire.capture.packet.RecordSink; `packets()`: the same as
Packets). Guarantees: the header is checked when the reader is built (CaptureError at once for a bad
or truncated header); records are sliced out of 1 MiB chunks, never the whole file; a record
length above the snap length plus slack (or MAX_RECORD) or a truncated last record raises a
CaptureError naming the file and byte offset, after every good packet before it was yielded. Empty records
alike, back to back (a compressed bomb's), are handed over as one RecordSink.empty_run: at memcmp speed.
"""

from __future__ import annotations

import struct
from typing import Iterator

try:
    import cython
except ImportError:  # the pure-Python build where Cython is not installed
    from kwire.native.cython_stand_in import cython

from kwire.native import c_reads  # compiled: kwire/native/c_reads.pxd's C reads (kwire/capture/pcap.pxd)
from kwire.capture.packet import HANDOFF, Packet, RecordLayout, RecordSink, packets_of
from kwire.capture.source import MAX_RECORD, Source, copies, fill
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError

# magic bytes as stored -> (struct byte order, ns per timestamp fraction unit, record header size)
MAGICS: dict[bytes, tuple[str, int, int]] = {
    b"\xd4\xc3\xb2\xa1": ("<", 1000, 16),  # 0xa1b2c3d4 little-endian, microseconds
    b"\xa1\xb2\xc3\xd4": (">", 1000, 16),
    b"\x4d\x3c\xb2\xa1": ("<", 1, 16),     # 0xa1b23c4d little-endian, nanoseconds
    b"\xa1\xb2\x3c\x4d": (">", 1, 16),
    b"\x34\xcd\xb2\xa1": ("<", 1000, 24),  # 0xa1b2cd34: Kuznetzov's patched libpcap
    b"\xa1\xb2\xcd\x34": (">", 1000, 24),
}
FILE_HEADER = 24
# Some writers store a snap length smaller than what they then write; allow for that.
SNAPLEN_FLOOR = 262144
SNAPLEN_SLACK = 65536


class PcapReader:
    """One classic pcap file. Iterate once for its packets (the iterator closes the source)."""

    format = "pcap"

    def __init__(self, source: Source, stats: CaptureStats | None = None):
        self._source = source
        self._stats = stats
        buf = fill(source, source.head, 0, FILE_HEADER)
        if len(buf) < FILE_HEADER:
            raise CaptureError(
                f"{source.name}: truncated pcap file header: {len(buf)} of {FILE_HEADER} bytes"
            )
        info = MAGICS.get(buf[:4])
        if info is None:
            raise CaptureError(f"{source.name}: not a pcap capture (magic 0x{buf[:4].hex()})")
        order, self._ts_mult, self._rec_size = info
        self.nanosecond = self._ts_mult == 1
        major, minor, _zone, _sigfigs, snaplen, network = struct.unpack_from(
            order + "HHiIII", buf, 4
        )
        if major != 2:
            raise CaptureError(f"{source.name}: unsupported pcap version {major}.{minor}")
        self.version = (major, minor)
        self.snaplen = snaplen
        # Low 16 bits are the link type; the top bits may carry FCS length information.
        self.linktype = network & 0xFFFF
        self.linktypes = {self.linktype}
        self._limit = min(MAX_RECORD, max(snaplen, SNAPLEN_FLOOR) + SNAPLEN_SLACK)
        self.little = order == "<"  # the byte order of its record headers
        self._rec = struct.Struct(order + "IIII")
        self._lengths = struct.Struct(order + "I4xII")  # for a TakeRun: no fraction of a second
        self._buf = buf
        if stats is not None:
            stats.files += 1
            stats.note_linktype(self.linktype, source.name)

    def __iter__(self) -> Iterator[Packet]:
        return self.packets()

    def packets(self) -> Iterator[Packet]:
        """The file's packets."""
        return packets_of(self.feed)

    def feed(self, sink: RecordSink) -> Iterator[None]:
        """Hand every record to `sink` (kwire.capture.packet.RecordSink), yielding after each window
        of them (kwire.capture.packet.HANDOFF).
        Runs are offered after a record the sink asks for them on (the records are classic pcap's)."""
        source = self._source
        stats = self._stats
        buf = self._buf
        self._buf = b""
        read = None if stats is None else stats.reading(source.name)
        if read is not None:
            stats.note_read(read, source.offset, source.compressed)
        base = 0  # file offset of buf[0]
        layout = RecordLayout(self._rec.unpack_from, self._lengths.unpack_from, self._rec_size, self._ts_mult,
                              self._limit)
        counts = [0, 0, 0, 0]  # records, captured bytes, wire bytes, cut records: since the last report
        pos = FILE_HEADER
        try:
            while True:
                pos, need = _chunk(self, buf, pos, base, sink, layout, counts, pos + HANDOFF)
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
                        self._truncated(buf, base, need)
                    return
        finally:
            if stats is not None:
                stats.add(*counts)
            source.close()

    def _truncated(self, buf, base: int, need: int) -> None:
        hsize = self._rec_size
        if len(buf) < hsize:
            problem = f"truncated record header ({len(buf)} of {hsize} bytes)"
        else:
            problem = f"truncated record (needs {need - hsize} bytes, {len(buf) - hsize} left)"
        raise self._source.error(base, problem)


def _chunk(reader: PcapReader, buf, pos: int, base: int, sink: RecordSink, layout: RecordLayout,
           counts: list, until: int) -> tuple[int, int]:
    """Hand the whole records of buf that start from pos on, before `until`, to `sink`; (where the
    next record starts, the bytes needed from there to read it, or 0 when `until` ended the walk
    first). (A function, not a method: the compiled core types its locals, kwire/capture/pcap.pxd.)"""
    unpack, hsize, mult, limit, lt = layout.unpack, layout.header_size, layout.ts_mult, layout.max_caplen, \
        reader.linktype
    run = sink.run
    end = len(buf)
    n = cap = wire = cut = 0
    caplen = 0
    fast = cython.compiled and type(buf) is bytes  # compiled: the header read in C (kwire/native/c_reads.pxd)
    little = reader.little
    while pos + hsize <= end:
        if pos >= until:
            counts[:] = (n, cap, wire, cut)
            return pos, 0
        if not fast:
            sec, frac, caplen, wirelen = unpack(buf, pos)
        elif little:
            sec, frac = c_reads._u32le(buf, pos), c_reads._u32le(buf, pos + 4)
            caplen, wirelen = c_reads._u32le(buf, pos + 8), c_reads._u32le(buf, pos + 12)
        else:
            sec, frac, caplen, wirelen = c_reads._u32(buf, pos), c_reads._u32(buf, pos + 4), \
                c_reads._u32(buf, pos + 8), c_reads._u32(buf, pos + 12)
        if caplen > limit:
            counts[:] = (n, cap, wire, cut)
            raise reader._source.error(base + pos, f"absurd record length {caplen} (snap length {reader.snaplen})")
        start = pos + hsize
        stop = start + caplen
        if stop > end:
            break
        if caplen == 0 and stop + hsize <= end and buf[pos:stop] == buf[stop:stop + hsize]:
            k = copies(buf, pos, hsize, end)  # empty records alike, back to back: one call for all
            pos += k * hsize
            n += k
            wire += k * wirelen
            if wirelen:
                cut += k
            sink.empty_run(sec * 1_000_000_000 + frac * mult, lt, wirelen, k)
            continue
        pos = stop
        n += 1
        cap += caplen
        wire += wirelen
        if caplen < wirelen:
            cut += 1
        if sink.record(sec * 1_000_000_000 + frac * mult, lt, buf, start, stop, wirelen):
            after, k = run(buf, pos, end, layout)
            if k:
                n += k
                k = after - pos - k * hsize  # their captured (= wire) bytes
                cap += k
                wire += k
                pos = after
    counts[:] = (n, cap, wire, cut)
    return pos, (hsize + caplen if pos + hsize <= end else hsize)
