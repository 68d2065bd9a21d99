"""Classic pcap (libpcap) files -> Packets, streamed chunk by chunk.

Owns the pcap file header (both byte orders; microsecond magic 0xa1b2c3d4, nanosecond magic
0xa1b23c4d, and the "modified" 0xa1b2cd34 variant with 24-byte record headers) and the record
loop. Guarantees: the header is checked when the reader is built (CaptureError at once for a bad
or truncated header); records are sliced out of 1 MiB chunks, never the whole file; a record
length above the snap length plus slack (or MAX_RECORD) or a truncated last record raises a
CaptureError naming the file and byte offset, after every good packet before it was yielded.
"""

from __future__ import annotations

import struct
from typing import Iterator

from kwire.capture.packet import LINKTYPE_ETHERNET, TAKEN_EVENTS, TAKEN_QUIETLY, Packet, RecordLayout, Take, TakeRun
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
        self._rec = struct.Struct(order + "IIII")
        self._lengths = struct.Struct(order + "I4xII")  # for a TakeRun: no fraction of a second
        self._buf = buf
        if stats is not None:
            stats.files += 1
            stats.note_linktype(self.linktype, source.name)

    def __iter__(self) -> Iterator[Packet]:
        return self.packets()

    def packets(self, take: Take | None = None, take_run: TakeRun | None = None) -> Iterator[Packet | None]:
        """The file's packets. `take(ts_ns, buf, start, stop)`, when given, is offered every whole
        packet (not cut by the snap length) of an Ethernet file first, as a slice of the read
        buffer (kwire.capture.packet.Take): the packets it takes are counted but not yielded, or
        yielded as None when it asks for that. `take_run`, when given with take, is offered the
        records that follow a packet take put aside quietly, all at once (a TakeRun): in a bulk
        transfer one loop of the consumer's then takes most packets."""
        if self.linktype != LINKTYPE_ETHERNET:
            take = None
        if take is None:
            take_run = None
        source = self._source
        stats = self._stats
        buf = self._buf
        self._buf = b""
        pos = FILE_HEADER
        base = 0  # file offset of buf[0]
        unpack = self._rec.unpack_from
        hsize = self._rec_size
        mult = self._ts_mult
        limit = self._limit
        lt = self.linktype
        layout = RecordLayout(unpack, self._lengths.unpack_from, hsize, mult, limit)
        n = cap = wire = cut = 0
        try:
            while True:
                end = len(buf)
                caplen = 0
                while pos + hsize <= end:
                    sec, frac, caplen, wirelen = unpack(buf, pos)
                    if caplen > limit:
                        raise source.error(
                            base + pos,
                            f"absurd record length {caplen} (snap length {self.snaplen})",
                        )
                    start = pos + hsize
                    stop = start + caplen
                    if stop > end:
                        break
                    pos = stop
                    n += 1
                    cap += caplen
                    wire += wirelen
                    ts = sec * 1_000_000_000 + frac * mult
                    if caplen < wirelen:
                        cut += 1
                    elif take is not None:
                        taken = take(ts, buf, start, stop)
                        if taken:
                            if taken == TAKEN_EVENTS:
                                yield None
                            elif taken == TAKEN_QUIETLY and take_run is not None:
                                after, k = take_run(buf, pos, end, layout)
                                if k:
                                    n += k
                                    k = after - pos - k * hsize  # their captured (= wire) bytes
                                    cap += k
                                    wire += k
                                    pos = after
                            continue
                    yield Packet(ts, lt, buf[start:stop], wirelen)
                if stats is not None:
                    stats.add(n, cap, wire, cut)
                    n = cap = wire = cut = 0
                need = hsize + caplen if pos + hsize <= end else hsize
                base += pos
                buf = fill(source, buf, pos, need)
                pos = 0
                if len(buf) < need:
                    if not buf:
                        return
                    if len(buf) < hsize:
                        problem = f"truncated record header ({len(buf)} of {hsize} bytes)"
                    else:
                        problem = f"truncated record (needs {caplen} bytes, {len(buf) - hsize} left)"
                    raise source.error(base, problem)
        finally:
            if stats is not None:
                stats.add(n, cap, wire, cut)
            source.close()
