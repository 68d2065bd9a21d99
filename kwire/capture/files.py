"""Capture files -> records: the entry point the pipeline uses to read files.

Owns format detection (pcap, pcapng, either compressed with gzip, zstd, lz4, xz or bzip2, by magic bytes) and merging several files in
timestamp order. `open_captures(paths)` gives one object with `feed(sink)` (every record to a
kwire.capture.packet.RecordSink, yielding after each window of records) whether it reads one file or merges
several; `read_captures(paths)` gives the same records as Packets. Guarantees: `open_capture` checks the file at once (missing, directory, empty,
not a capture, truncated header all raise CaptureError before any packet); packets stream in
1 MiB chunks; a damaged or truncated file yields every good packet, then raises CaptureError.

Link types are not judged here: the capture layer does not know which ones kwire decodes. Each
reader records the link types its file declares in `CaptureStats.linktypes` (type -> file names)
and on `reader.linktypes`; the pipeline compares them with kwire.native.net_decode.SUPPORTED_LINKTYPES
and reports "unknown link type N in FILE" (kwire.native.net_decode also counts such packets).
"""

from __future__ import annotations

import glob
import heapq
import os
import re
from operator import attrgetter
from typing import BinaryIO, Callable, Iterable, Iterator

from kwire.capture.decompress import FORMATS as COMPRESSIONS
from kwire.capture.packet import HANDOFF, Packet, RecordSink
from kwire.capture.pcap import MAGICS as PCAP_MAGICS
from kwire.capture.pcap import PcapReader
from kwire.capture.pcapng import SHB_MAGIC, PcapngReader
from kwire.capture.source import describe_magic, open_source
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError

PathLike = str | os.PathLike


class CaptureReader:
    """One open capture file. Iterate it once for its packets; close it (or use `with`) when done.

    `format` is "pcap" or "pcapng", `compression` "gzip", "zstd", "lz4", "xz", "bzip2" or None, `linktypes` the set of link
    types declared so far (pcapng declares interfaces as it goes).
    """

    def __init__(self, source: PathLike | BinaryIO, stats: CaptureStats | None = None,
                 on_secrets: Callable[[int, bytes], None] | None = None):
        src = open_source(source)
        try:
            head = src.head
            magic = head[:4]
            if magic == SHB_MAGIC:
                self._reader: PcapReader | PcapngReader = PcapngReader(src, stats, on_secrets)
            elif magic in PCAP_MAGICS:
                self._reader = PcapReader(src, stats)
            elif len(head) < 4:
                raise CaptureError(f"{src.name}: truncated file header: only {len(head)} bytes")
            else:
                raise CaptureError(f"{src.name}: {describe_magic(head)}")
        except BaseException:
            src.close()
            raise
        self._source = src
        self.name = src.name
        self.format = self._reader.format
        self.compression = src.compression
        self._packets: Iterator[Packet] | None = None

    @property
    def linktypes(self) -> set[int]:
        return self._reader.linktypes

    def __iter__(self) -> Iterator[Packet]:
        # Hand out the reader's own generator so iteration runs at generator speed.
        if self._packets is None:
            self._packets = self._reader.packets()
        return self._packets

    def feed(self, sink: RecordSink) -> Iterator[None]:
        """Every record to `sink` (kwire.capture.packet.RecordSink), yielding after each window of
        them (kwire.capture.packet.HANDOFF)."""
        return self._reader.feed(sink)

    def __next__(self) -> Packet:
        return next(iter(self))

    def close(self) -> None:
        if self._packets is not None:
            self._packets.close()
        self._source.close()

    def __enter__(self) -> CaptureReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_capture(
    path: PathLike | BinaryIO, stats: CaptureStats | None = None
) -> CaptureReader:
    """Open one capture file (pcap/pcapng, optionally gzip-compressed) as an iterator of Packets.

    Raises CaptureError at once when the file cannot be a capture; damage found while reading
    raises CaptureError from the iteration, after every good packet before it.
    """
    return CaptureReader(path, stats)


def _guarded(reader: CaptureReader, errors: list[CaptureError]) -> Iterator[Packet]:
    try:
        yield from reader
    except CaptureError as exc:
        errors.append(exc)
    finally:
        reader.close()


class MergedCaptures:
    """Several capture files read as one, their records merged by timestamp (stable: ties keep file
    order). Every file is opened (and its header checked) before the first record. A file damaged
    part way stops contributing; the others run to their end, then the CaptureError is raised (the
    messages of several damaged files are joined with "; ")."""

    def __init__(self, readers: list[CaptureReader]):
        self.readers = readers

    def __iter__(self) -> Iterator[Packet]:
        return _merged(self.readers)

    def feed(self, sink: RecordSink) -> Iterator[None]:
        """Every record to `sink`, in time order, yielding after each HANDOFF bytes of them
        (kwire.capture.packet.HANDOFF), as one file's reader does."""
        record = sink.record
        handed = 0
        for p in _merged(self.readers):
            data = p.data
            size = len(data)
            record(p.ts_ns, p.linktype, data, 0, size, p.wire_len)
            handed += size
            if handed >= HANDOFF:
                handed = 0
                yield
        yield

    def close(self) -> None:
        for r in self.readers:
            r.close()


# capture.pcap, .pcapng, .cap, rotated parts (tcpdump -C: capture.pcap1, -G: any name with a
# pcap suffix), each optionally compressed.
# What kwire reads, in words (the commands' help says it): every container and compression read_captures opens.
FORMATS_READ = "pcap or pcapng, plain or compressed with " + ", ".join(f.name for f in COMPRESSIONS[:-1]) + \
    " or " + COMPRESSIONS[-1].name
CAPTURE_NAME = re.compile(r"\.(pcap|pcapng|cap)\d*(\.(gz|zst|lz4|xz|bz2))?$")


def find_captures(args: Iterable[str]) -> list[str]:
    """Paths as given, globs expanded (for shells that did not), directories walked for files named
    as captures (CAPTURE_NAME). A glob that matches nothing, or nothing at all, is a CaptureError."""
    paths: list[str] = []
    for arg in args:
        if os.path.isdir(arg):
            for root, _, files in sorted(os.walk(arg)):
                paths += [os.path.join(root, f) for f in sorted(files) if CAPTURE_NAME.search(f)]
        elif any(ch in arg for ch in "*?[") and not os.path.exists(arg):
            found = sorted(glob.glob(arg))
            if not found:
                raise CaptureError(f"no file matches {arg}")
            paths += found
        else:
            paths.append(arg)
    if not paths:
        raise CaptureError("no capture files")
    return paths


def open_captures(paths: Iterable[PathLike], stats: CaptureStats | None = None,
                  on_secrets: Callable[[int, bytes], None] | None = None,
                  on_error: Callable[[CaptureError], None] | None = None) -> CaptureReader | MergedCaptures:
    """The capture files as one source of records: the file's own reader for one file (its runs of
    records reach a sink at the reader's speed), a merge for several. Every file is opened and its
    header checked first. A file that cannot be a capture (missing, empty, not a capture, a bad
    header) is handed to `on_error` and left out, when others can be read; when none can, the
    CaptureError says why for each (without `on_error`, the first one is raised at once).
    `on_secrets(type, data)` is given the decryption secrets pcapng files carry, as they are read."""
    readers: list[CaptureReader] = []
    errors: list[CaptureError] = []
    try:
        for path in paths:
            try:
                readers.append(CaptureReader(path, stats, on_secrets))
            except CaptureError as exc:
                if on_error is None:
                    raise
                errors.append(exc)
    except BaseException:
        for r in readers:
            r.close()
        raise
    if not readers:
        raise errors[0] if len(errors) == 1 else CaptureError("; ".join(str(e) for e in errors))
    for exc in errors:
        on_error(exc)
    if len(readers) == 1:
        return readers[0]
    return MergedCaptures(readers)


def read_captures(paths: Iterable[PathLike], stats: CaptureStats | None = None) -> Iterator[Packet]:
    """The packets of several capture files merged by timestamp (open_captures, as Packets)."""
    return iter(open_captures(paths, stats))


def _merged(readers: list[CaptureReader]) -> Iterator[Packet]:
    errors: list[CaptureError] = []
    streams = [_guarded(r, errors) for r in readers]
    try:
        yield from heapq.merge(*streams, key=attrgetter("ts_ns"))
    finally:
        for s in streams:
            s.close()
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise CaptureError("; ".join(str(e) for e in errors))
