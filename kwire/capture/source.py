"""Opening a capture source: a path (or binary stream) becomes a `Source` of uncompressed bytes.

Owns: path checks (missing, directory, empty, unreadable), compression detection by magic (never by
extension): streaming gunzip with bounded output per read here, zstd, lz4, xz and bzip2 through
kwire.capture.decompress, and mapping every I/O or zlib failure
to a one-line CaptureError naming the file. Readers pull bytes in CHUNK-sized reads through
`fill`, so memory stays bounded by CHUNK plus the largest record (itself capped at MAX_RECORD).
"""

from __future__ import annotations

import os
import zlib
from typing import BinaryIO

from kwire.capture.decompress import decompressor
from kwire.errors import CaptureError

CHUNK = 1 << 20           # bytes per read from the file (and per gunzip step)
# No record or block may claim more than this. Capture tools write packets of at most 256 KiB
# (tcpdump's and dumpcap's largest snap length for Ethernet); the bound is what a hostile file (a gzip
# bomb behind a record header claiming gigabytes) can make kwire hold at once.
MAX_RECORD = 32 << 20

GZIP_MAGIC = b"\x1f\x8b"
GZIP_STEP = 16 << 10      # compressed bytes per zlib call

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


class _Gunzip:
    """Streaming gzip decoder: multi-member, trailing zero padding allowed, bounded output.

    `read(n)` returns at most n bytes, b"" at the end. Data decoded before a failure is returned
    first; the failure is raised by the next call, so readers yield every good packet first. zlib
    gets at most GZIP_STEP compressed bytes per call (it drops the output of a call that fails, so
    a damaged spot costs at most that much of the data before it) and the file's last 8 bytes alone
    (a bad CRC at the very end costs nothing).
    """

    def __init__(self, raw: BinaryIO, first: bytes):
        self._raw = raw
        self._pending = first          # compressed bytes not yet given to zlib, from _pos on
        self._pos = 0
        self._eof = False              # the raw file has no more bytes
        self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._in_member = True         # True while a member has started but not ended
        self._done = False
        self._error: Exception | None = None

    def _input(self) -> bytes:
        """The next compressed bytes (at most GZIP_STEP), b"" at the end of the file. The file's last
        8 bytes (a member's CRC and size) are handed out alone, so a bad CRC costs no data."""
        while len(self._pending) - self._pos <= 8 and not self._eof:
            more = self._raw.read(CHUNK)
            if not more:
                self._eof = True
            else:
                self._pending = self._pending[self._pos:] + more
                self._pos = 0
        take = min(GZIP_STEP, len(self._pending) - self._pos - (0 if self._eof else 8))
        if take <= 0:
            take = len(self._pending) - self._pos
        piece = self._pending[self._pos:self._pos + take]
        self._pos += len(piece)
        return piece

    def read(self, n: int) -> bytes:
        if self._error is not None:
            err, self._error = self._error, None
            raise err
        out: list[bytes] = []
        have = 0
        try:
            while have < n and not self._done:
                d = self._d
                inp = d.unconsumed_tail or self._input()
                if not inp:
                    if not self._in_member:
                        self._done = True
                        break
                    chunk = d.decompress(b"", n - have)  # output zlib still holds
                    if chunk:
                        out.append(chunk)
                        have += len(chunk)
                    if d.eof:
                        self._in_member = False
                    elif not chunk:
                        raise EOFError("gzip data ends before the end of its stream")
                    continue
                if not self._in_member:
                    # Between members: zero padding is allowed, anything else must be a member.
                    stripped = inp.lstrip(b"\x00")
                    if not stripped:
                        continue
                    if not stripped.startswith(GZIP_MAGIC[: len(stripped)]):
                        raise zlib.error("garbage after the gzip data")
                    inp = stripped
                    self._in_member = True
                    d = self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                chunk = d.decompress(inp, n - have)
                if chunk:
                    out.append(chunk)
                    have += len(chunk)
                if d.eof:
                    self._in_member = False
                    if d.unused_data:  # the next member's first bytes: read them again
                        self._pending = d.unused_data + self._pending[self._pos:]
                        self._pos = 0
        except (zlib.error, EOFError, OSError) as exc:
            if not out:
                raise
            self._error = exc
        return b"".join(out)


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
        while 0 < len(first) < 8:  # a pipe may hand out a few bytes at a time
            more = self._read_raw(CHUNK)
            if not more:
                break
            first += more
        if not first:
            raise CaptureError(f"{name}: empty file")
        if first.startswith(GZIP_MAGIC):
            self.compression = "gzip"
            self._reader = _Gunzip(raw, first)
            first = self.read(CHUNK)
            if not first:
                raise CaptureError(f"{name}: gzip data decompresses to nothing")
            self.head = first
        elif (found := decompressor(raw, first)) is not None:
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
        """Up to n more bytes (fewer only at the end); CaptureError on damaged data."""
        try:
            data = self._reader.read(n)
        except Exception as exc:  # noqa: BLE001 - zlib, lzma, bz2, zstandard and lz4 each have their own
            what = f"damaged {self.compression} data" if self.compression else "read failed"
            raise CaptureError(
                f"{self.name}: {what} ({exc}) after byte {self.offset}{self.where}"
            ) from None
        self.offset += len(data)
        return data

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
