"""Test-only: compressed captures the readers misread, lost data of, or read for minutes in silence (issue 49).

Every format kwire reads compressed (FORMATS: gzip, zstd, lz4, xz, bzip2), by its own library:
- `compress(fmt, data, piece)`: `data` compressed as one stream per `piece` bytes (gzip members, zstd and lz4
  frames, xz and bzip2 streams: what pigz -i, pzstd, pbzip2 or `cat a.xz b.xz` make), concatenated;
- `reference(fmt, data)`: the format's own decoder over every stream of `data`, as far as it goes: what a
  reader must hand out, whatever the data's cuts (zstd: zstandard's, not the decoder kwire uses);
- `in_members(path, piece, fmt)`: a capture file's bytes (gzip-compressed or not) compressed in `piece`-byte
  streams; `pending_in_members(scale)`: the bundled pending-cap capture gzipped in 64 KiB members, the case
  that lost 8 of its 26 exchanges (`scale` repeats its records, same header, to grow it);
- `cut(fmt, data, fraction, piece)`: compressed, then cut at `fraction` of its bytes;
- `empty_records(fmt, records, container)`: a compressed capture of `records` empty records (16-byte pcap
  record headers with no data, or 32-byte pcapng Enhanced Packet Blocks), all alike, compressed a chunk at a
  time so that no more than a chunk is ever held: the bombs (`bomb(fmt, scale)`: 256 MiB a scale, from 250 KB
  of gzip to a few hundred bytes of bzip2).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import struct
import zlib
from pathlib import Path

import lz4.frame
import zstandard

ROOT = Path(__file__).resolve().parents[2]
PENDING = ROOT / "captures" / "problems" / "pending-cap.pcap.gz"
BULK = ROOT / "captures" / "bulk-fetch.pcap"
FORMATS = ("gzip", "zstd", "lz4", "xz", "bzip2")
SUFFIX = {"gzip": "gz", "zstd": "zst", "lz4": "lz4", "xz": "xz", "bzip2": "bz2"}
PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
EMPTY_PCAP = bytes(16)  # a record of time 0 with no data: the best a compressor can do
PCAPNG_HEAD = (struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28)
               + struct.pack("<IIHHII", 1, 20, 1, 0, 65535, 20))
EMPTY_EPB = struct.pack("<IIIIIIII", 6, 32, 0, 0, 0, 0, 0, 32)


class _Compressor:
    """One stream of `fmt` compressed incrementally: add() pieces, end() the stream; each returns bytes."""

    def __init__(self, fmt: str):
        if fmt == "gzip":
            self._c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        elif fmt == "zstd":
            self._c = zstandard.ZstdCompressor(level=3).compressobj()
        elif fmt == "lz4":
            self._c = lz4.frame.LZ4FrameCompressor(compression_level=12)
            self._head = self._c.begin()
        elif fmt == "xz":
            self._c = lzma.LZMACompressor()
        else:
            self._c = bz2.BZ2Compressor(9)
        self._fmt = fmt

    def add(self, data: bytes) -> bytes:
        out = self._c.compress(data)
        if self._fmt == "lz4" and self._head:
            out, self._head = self._head + out, b""
        return out

    def end(self) -> bytes:
        return self.add(b"") + self._c.flush()


def compress(fmt: str, data: bytes, piece: int | None = None) -> bytes:
    """`data` compressed as one stream per `piece` bytes (one stream when None), concatenated."""
    step = piece or max(len(data), 1)
    out = []
    for i in range(0, max(len(data), 1), step):
        c = _Compressor(fmt)
        out.append(c.add(data[i:i + step]) + c.end())
    return b"".join(out)


def _fresh(fmt: str):
    if fmt == "gzip":
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if fmt == "zstd":
        return zstandard.ZstdDecompressor().decompressobj()
    if fmt == "lz4":
        return lz4.frame.LZ4FrameDecompressor()
    return lzma.LZMADecompressor() if fmt == "xz" else bz2.BZ2Decompressor()


def reference(fmt: str, data: bytes) -> tuple[bytes, bool]:
    """(what the format's own decoder makes of every stream of data, whether the last stream ended)."""
    out = []
    while data:
        d = _fresh(fmt)
        out.append(d.decompress(data))
        if not d.eof:
            return b"".join(out), False
        data = d.unused_data
    return b"".join(out), True


def in_members(path: Path, piece: int, fmt: str = "gzip") -> bytes:
    """The capture at `path` (gzip-compressed or not) compressed again in `piece`-byte streams."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return compress(fmt, raw, piece)


def pending_in_members(scale: int = 1, piece: int = 64 << 10) -> bytes:
    """pending-cap, its records `scale` times after one header, gzipped in `piece`-byte members."""
    raw = gzip.decompress(PENDING.read_bytes())
    return compress("gzip", raw[:24] + raw[24:] * scale, piece)


def cut(fmt: str, data: bytes, fraction: float, piece: int | None = None) -> bytes:
    packed = compress(fmt, data, piece)
    return packed[:int(len(packed) * fraction)]


def empty_records(fmt: str, records: int, container: str = "pcap") -> bytes:
    """A capture of `records` empty records, compressed as one stream a chunk at a time."""
    head, record = (PCAP_HEADER, EMPTY_PCAP) if container == "pcap" else (PCAPNG_HEAD, EMPTY_EPB)
    chunk_records = (1 << 20) // len(record)
    c = _Compressor(fmt)
    out = [c.add(head)]
    block = record * chunk_records
    left = records
    while left >= chunk_records:
        out.append(c.add(block))
        left -= chunk_records
    out.append(c.add(record * left))
    out.append(c.end())
    return b"".join(out)


def bomb(fmt: str, scale: int = 1, container: str = "pcap") -> bytes:
    """`scale` times 256 MiB of empty records (pcap: 16.8 million; pcapng: 8.4 million), compressed."""
    size = 16 if container == "pcap" else 32
    return empty_records(fmt, scale * (256 << 20) // size, container)
