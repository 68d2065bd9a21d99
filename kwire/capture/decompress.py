"""Compressed captures by content: zstd, lz4 frame, xz and bzip2 streams (gzip: kwire.capture.source).

`decompressor(raw, first)` looks at the first bytes of a file (`first`, already read from `raw`) and
returns (name, reader) for a compressed one, else None. A reader's `read(n)` gives at most n
uncompressed bytes (b"" at the end): each format is decoded as a stream, in steps, by its maintained
library (python's lzma and bz2, zstandard, lz4), so memory stays bounded whatever the file's size
(zstd: windows up to MAX_WINDOW). Concatenated streams (pzstd, pbzip2, `cat a.xz b.xz`) are read one
after another. A damaged stream raises from read(); kwire.capture.source makes that a CaptureError.
"""

from __future__ import annotations

import bz2
import lzma
from typing import BinaryIO

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LZ4_MAGIC = b"\x04\x22\x4d\x18"
XZ_MAGIC = b"\xfd7zXZ\x00"
BZIP2_MAGIC = b"BZh"
MAX_WINDOW = 1 << 27  # zstd's window, the memory its decoder may need (zstd's own default limit)


class _Prefixed:
    """`raw` with `first` (its bytes already read) put back in front."""

    def __init__(self, raw: BinaryIO, first: bytes):
        self._raw = raw
        self._first = first

    def read(self, n: int = -1) -> bytes:
        first = self._first
        if first:
            if n < 0 or n >= len(first):
                self._first = b""
                return first
            self._first = first[n:]
            return first[:n]
        return self._raw.read(n) if n >= 0 else self._raw.read()

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass


def _zstd(raw):
    import zstandard

    dctx = zstandard.ZstdDecompressor(max_window_size=MAX_WINDOW)
    return dctx.stream_reader(raw, read_size=1 << 16, read_across_frames=True, closefd=False)


def _lz4(raw):
    import lz4.frame

    return lz4.frame.LZ4FrameFile(raw, mode="rb")


FORMATS = (
    (ZSTD_MAGIC, "zstd", _zstd),
    (LZ4_MAGIC, "lz4", _lz4),
    (XZ_MAGIC, "xz", lambda raw: lzma.LZMAFile(raw, mode="rb")),
    (BZIP2_MAGIC, "bzip2", lambda raw: bz2.BZ2File(raw, mode="rb")),
)


def decompressor(raw: BinaryIO, first: bytes):
    """(name, reader of the uncompressed bytes) when `first` starts a compressed stream, else None."""
    for magic, name, opener in FORMATS:
        if first.startswith(magic):
            return name, opener(_Prefixed(raw, first))
    return None
