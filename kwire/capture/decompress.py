"""Compressed captures by content: gzip, zstd, lz4 frame, xz and bzip2, decoded in bounded steps by one loop.

`decompressor(raw, first)` looks at the first bytes of a file (`first`, already read from `raw`) and returns
(name, reader) for a compressed one, else None. The reader is a `Stepped`: `read(n)` gives at most n uncompressed
bytes (b"" at the end). Every format is decoded by its maintained library's incremental decompressor (zlib,
python's lzma and bz2, lz4.frame, and zstd's: `compression.zstd`, or its backport before Python 3.14), which all
have one interface (`decompress(data, max_length)`, `needs_input`, `eof`, `unused_data`; zlib's gets it from
`_Inflate`), in one loop: at most STEP compressed bytes and at most n uncompressed bytes per call, so memory stays
bounded whatever the file (zstd: windows up to MAX_WINDOW). Guarantees:
- concatenated streams (gzip members, zstd and lz4 frames, skippable frames, `cat a.xz b.xz`, pzstd, pbzip2)
  are read one after another, each by a fresh decompressor, with zero padding between them; anything else after
  a stream is `Garbage`;
- everything decoded before damage or a cut is handed out first; the next read raises: `CutShort` when the file
  ends inside a stream, the library's own error for damage (kwire.capture.source makes both a one-line
  CaptureError saying where). A failing call loses at most its own output: a call gets at most STEP bytes, and the
  file's last HOLD bytes (a check sum and a size, mostly) alone.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Callable

STEP = 16 << 10       # compressed bytes per decompressor call
HOLD = 8              # the file's last bytes, handed out alone
CHUNK = 1 << 20       # bytes per read from the file
MAX_WINDOW_LOG = 27   # zstd's window, the memory its decoder may need: 128 MiB (zstd's own default limit)

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LZ4_MAGIC = b"\x04\x22\x4d\x18"
XZ_MAGIC = b"\xfd7zXZ\x00"
BZIP2_MAGIC = b"BZh"
# zstd's and lz4's skippable frames: 0x184D2A50 to 0x184D2A5F, little-endian (pzstd starts every frame with one)
SKIPPABLE = tuple(bytes((low, 0x2A, 0x4D, 0x18)) for low in range(0x50, 0x60))


class CutShort(EOFError):
    """The file ends inside a compressed stream: what came before it was handed out."""


class Garbage(ValueError):
    """Bytes after a compressed stream that are neither zero padding nor another stream."""


class _Inflate:
    """zlib's gzip decoder with the interface of lzma's, bz2's, lz4's and zstd's (`needs_input`: no more
    output before more input). zlib keeps the input a call had no room to decode in `unconsumed_tail`, and at a
    member's end may leave it there as well as in `unused_data`: that tail is only read inside the member."""

    __slots__ = ("_d", "_tail", "needs_input")

    def __init__(self):
        self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._tail = b""
        self.needs_input = True

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused_data(self) -> bytes:
        return self._d.unused_data

    def decompress(self, data: bytes, max_length: int) -> bytes:
        d = self._d
        out = d.decompress(self._tail + data if self._tail else data, max_length)
        self._tail = b"" if d.eof else d.unconsumed_tail
        self.needs_input = not self._tail and len(out) < max_length  # a full output may leave output in zlib
        return out


def _zstd():
    try:
        from compression import zstd  # Python 3.14
    except ImportError:
        from backports import zstd
    return zstd.ZstdDecompressor(options={zstd.DecompressionParameter.window_log_max: MAX_WINDOW_LOG})


def _lz4():
    import lz4.frame

    return lz4.frame.LZ4FrameDecompressor()


def _zstd_errors() -> tuple[type[Exception], ...]:
    try:
        from compression import zstd
    except ImportError:
        from backports import zstd
    return (zstd.ZstdError,)


@dataclass(frozen=True)
class Format:
    """A compression format: its name, the magics a stream of it starts with (the first one names it), a fresh
    decompressor for one stream, and the exceptions its library raises on damage."""

    name: str
    magics: tuple[bytes, ...]
    fresh: Callable[[], object]
    errors: Callable[[], tuple[type[Exception], ...]]

    def starts(self, data: bytes) -> bool:
        """data could be the start of a stream of this format (a magic, or the start of one at the end of data)."""
        return any(data[:len(m)] == m[:len(data)] for m in self.magics)


FORMATS = (
    Format("gzip", (GZIP_MAGIC,), _Inflate, lambda: (zlib.error,)),
    Format("zstd", (ZSTD_MAGIC, *SKIPPABLE), _zstd, _zstd_errors),
    Format("lz4", (LZ4_MAGIC, *SKIPPABLE), _lz4, lambda: (RuntimeError,)),  # lz4.frame raises RuntimeError
    Format("xz", (XZ_MAGIC,), lzma.LZMADecompressor, lambda: (lzma.LZMAError,)),
    Format("bzip2", (BZIP2_MAGIC,), bz2.BZ2Decompressor, lambda: ()),  # bz2 raises OSError
)


def _past_skippable(first: bytes) -> bytes:
    """What follows the skippable frames at the start of `first` (pzstd's), as far as `first` holds them."""
    pos = 0
    while first[pos:pos + 4] in SKIPPABLE and len(first) >= pos + 8:
        pos += 8 + int.from_bytes(first[pos + 4:pos + 8], "little")
    return first[pos:]


def decompressor(raw: BinaryIO, first: bytes):
    """(name, Stepped reader of the uncompressed bytes) when `first` starts a compressed file, else None."""
    head = _past_skippable(first)
    for fmt in FORMATS:
        if head.startswith(fmt.magics[0]):
            return fmt.name, Stepped(fmt, raw, first)
    return None


class Stepped:
    """The uncompressed bytes of one compressed file (see the module docstring). `fed` counts the compressed
    bytes given to the decompressors so far (those past a stream's end given back), `streams` the streams begun."""

    def __init__(self, fmt: Format, raw: BinaryIO, first: bytes):
        self.format = fmt
        self._raw = raw
        self._pending = first   # compressed bytes read from raw, not yet given out from _pos on
        self._pos = 0
        self._raw_eof = False
        self._errors = (CutShort, Garbage, EOFError, OSError, *fmt.errors())
        self._d = None          # the decompressor of the stream being read; None between streams
        self._done = False
        self._error: Exception | None = None
        self.fed = 0
        self.streams = 0

    def read(self, n: int) -> bytes:
        if self._error is not None:
            err, self._error = self._error, None
            raise err
        out: list[bytes] = []
        have = 0
        try:
            while have < n and not self._done:
                d = self._d
                if d is None:
                    self._d = self._next_stream()
                elif d.eof:
                    self._give_back(d.unused_data or b"")
                    self._d = None
                else:
                    inp = b""
                    if d.needs_input:
                        inp = self._input()
                        if not inp:
                            raise CutShort("the file ends inside a stream")
                    chunk = d.decompress(inp, n - have)
                    if chunk:
                        out.append(chunk)
                        have += len(chunk)
        except self._errors as exc:
            if not out:
                raise
            self._error = exc
        return b"".join(out)

    def _next_stream(self):
        """Between streams: skip zero padding; a fresh decompressor when a stream starts, None at the end."""
        while True:
            inp = self._input()
            if not inp:
                self._done = True
                return None
            data = inp.lstrip(b"\x00")
            if data:
                break
        self._give_back(data)
        if not self.format.starts(data):
            raise Garbage(f"garbage after the {self.format.name} data")
        self.streams += 1
        return self.format.fresh()

    def _input(self) -> bytes:
        """The next compressed bytes (at most STEP), b"" at the end of the file. The file's last HOLD bytes
        are handed out alone, so a bad check at the very end costs no data."""
        while len(self._pending) - self._pos <= HOLD and not self._raw_eof:
            more = self._raw.read(CHUNK)
            if not more:
                self._raw_eof = True
            else:
                self._pending = self._pending[self._pos:] + more
                self._pos = 0
        left = len(self._pending) - self._pos
        take = min(STEP, left - (0 if self._raw_eof else HOLD))
        if take <= 0:
            take = left
        piece = self._pending[self._pos:self._pos + take]
        self._pos += len(piece)
        self.fed += len(piece)
        return piece

    def _give_back(self, data: bytes) -> None:
        """Put bytes given out (a stream's tail: the next one's start) back in front of the pending ones."""
        size = len(data)
        if not size:
            return
        self.fed -= size
        if size <= self._pos and self._pending[self._pos - size:self._pos] == data:
            self._pos -= size  # the usual case: the last bytes given out, still in _pending
        else:
            self._pending = data + self._pending[self._pos:]
            self._pos = 0
