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

from kwire.native.record_walk import pcap_chunk
from kwire.capture.packet import HANDOFF, Packet, RecordLayout, RecordSink, packets_of
from kwire.capture.source import MAX_RECORD, Source, fill
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
                pos, need = pcap_chunk(self, buf, pos, base, sink, layout, self.little, self.linktype, counts,
                                        pos + HANDOFF)
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

    def absurd_record(self, offset: int, caplen: int) -> Exception:
        """The error of a record header at `offset` claiming `caplen` captured bytes, too many to be real."""
        return self._source.error(offset, f"absurd record length {caplen} (snap length {self.snaplen})")

    def _truncated(self, buf, base: int, need: int) -> None:
        hsize = self._rec_size
        if len(buf) < hsize:
            problem = f"truncated record header ({len(buf)} of {hsize} bytes)"
        else:
            problem = f"truncated record (needs {need - hsize} bytes, {len(buf) - hsize} left)"
        raise self._source.error(base, problem)

