"""Opening a capture source: a path (or binary stream) becomes a `Source` of uncompressed bytes.

Owns: path checks (missing, directory, empty, unreadable), compression detection by magic (never by
extension; gzip, zstd, lz4, xz and bzip2 are decoded by kwire.capture.decompress), and mapping every I/O or
decompression failure to a one-line CaptureError naming the file and where it happened. Readers pull bytes in
CHUNK-sized reads through `fill`, so memory stays bounded by CHUNK plus the largest record (itself capped at
MAX_RECORD). `Source.compressed` counts the compressed bytes read so far (the file's bytes when it is not
compressed), for how far a compressed file expands.
"""

from __future__ import annotations

import os
from typing import BinaryIO

from kwire.capture.decompress import CHUNK, CutShort, decompressor
from kwire.errors import CaptureError

# No record or block may claim more than this. Capture tools write packets of at most 256 KiB
# (tcpdump's and dumpcap's largest snap length for Ethernet); the bound is what a hostile file (a gzip
# bomb behind a record header claiming gigabytes) can make kwire hold at once.
MAX_RECORD = 32 << 20

# Formats kwire does not read, named so the error message can say what the file is.
_OTHER_MAGICS = (
    (b"PK\x03\x04", "a zip archive"),
    (b"snoop\x00\x00\x00", "a snoop capture (not supported)"),
)


def describe_magic(head: bytes) -> str:
    """Human words for what a file that is not a capture seems to be."""
    for magic, what in _OTHER_MAGICS:
        if head.startswith(magic):
            return what
    return f"not a pcap or pcapng capture (starts with 0x{head[:4].hex()})"


class Source:
    """Uncompressed bytes of one capture, read in chunks, with the file's name for messages."""

    __slots__ = ("name", "compression", "head", "offset", "_raw", "_reader", "_owns")

    def __init__(self, name: str, raw: BinaryIO, owns: bool):
        self.name = name
        self._raw = raw
        self._owns = owns
        self.compression: str | None = None
        self.offset = 0  # uncompressed bytes handed out so far
        self._reader = raw
        first = self._read_raw(CHUNK)
        while 0 < len(first) < 16:  # a pipe may hand out a few bytes at a time
            more = self._read_raw(CHUNK)
            if not more:
                break
            first += more
        if not first:
            raise CaptureError(f"{name}: empty file")
        if (found := decompressor(raw, first)) is not None:
            self.compression, self._reader = found
            first = self.read(CHUNK)
            if not first:
                raise CaptureError(f"{name}: {self.compression} data decompresses to nothing")
            self.head = first
        else:
            self.head = first
            self.offset = len(first)

    def _read_raw(self, n: int) -> bytes:
        try:
            return self._raw.read(n)
        except OSError as exc:
            raise CaptureError(f"{self.name}: read failed: {exc.strerror or exc}") from None

    def read(self, n: int) -> bytes:
        """Up to n more bytes (fewer only at the end); CaptureError on damaged or cut data, once every byte
        decoded before it was read."""
        try:
            data = self._reader.read(n)
        except CutShort:
            raise CaptureError(f"{self.name}: {self.compression} data cut short: its {self.compressed} bytes end "
                               f"inside a stream, after byte {self.offset}{self.where}") from None
        except Exception as exc:  # noqa: BLE001 - zlib, lzma, bz2, zstd and lz4 each have their own
            what = f"damaged {self.compression} data" if self.compression else "read failed"
            raise CaptureError(
                f"{self.name}: {what} ({exc}) after byte {self.offset}{self.where}"
            ) from None
        self.offset += len(data)
        return data

    @property
    def compressed(self) -> int:
        """The compressed bytes decoded so far (the bytes read, when the file is not compressed)."""
        return self._reader.fed if self.compression else self.offset

    @property
    def where(self) -> str:
        """Suffix for byte offsets: they count uncompressed bytes in a compressed file."""
        return " (uncompressed)" if self.compression else ""

    def error(self, offset: int, problem: str) -> CaptureError:
        """A one-line CaptureError: '<file>: <problem> at byte <offset>'."""
        return CaptureError(f"{self.name}: {problem} at byte {offset}{self.where}")

    def close(self) -> None:
        if self._owns:
            self._raw.close()


STDIN = "-"  # the path that means standard input


def open_source(source: str | os.PathLike | BinaryIO) -> Source:
    """Open a path ("-": standard input, read as it comes) or take an open binary stream, and detect
    compression by magic."""
    if hasattr(source, "read"):
        name = str(getattr(source, "name", "<stream>"))
        return Source(name, source, owns=False)  # type: ignore[arg-type]
    if source == STDIN:
        # Unbuffered: each read hands over what the pipe holds, so a capture written as it happens
        # (`tcpdump -U -w - | kwire inspect -`) is analysed as it comes, not at its end.
        return Source("stdin", open(0, "rb", buffering=0, closefd=False), owns=True)
    name = os.fsdecode(source)
    try:
        raw = open(source, "rb", buffering=0)
    except FileNotFoundError:
        raise CaptureError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise CaptureError(f"{name}: is a directory, not a capture file") from None
    except PermissionError:
        raise CaptureError(f"{name}: permission denied") from None
    except OSError as exc:
        raise CaptureError(f"{name}: cannot open: {exc.strerror or exc}") from None
    try:
        return Source(name, raw, owns=True)
    except BaseException:
        raw.close()
        raise


def fill(source: Source, buf: bytes, pos: int, need: int) -> bytes:
    """buf[pos:] followed by more bytes from `source`, until it holds `need` bytes or the end.

    When nothing is left over, a fresh chunk of at least CHUNK bytes is returned as read (no copy).
    A leftover (a record cut by the chunk boundary) is completed with just the bytes it lacks, so
    the big chunks are never joined: copying and page-faulting a new megabyte per chunk cost more
    than the extra read call."""
    rest = buf[pos:]
    have = len(rest)
    if have >= need:
        return rest
    parts = [rest] if have else []
    want = need - have if have else max(CHUNK, need)
    while have < need:
        data = source.read(want)
        if not data:
            break
        parts.append(data)
        have += len(data)
        want = need - have
    if len(parts) == 1:
        return parts[0]
    return b"".join(parts)
