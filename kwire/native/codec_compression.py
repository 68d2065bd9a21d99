"""Kafka's record compression codecs, decompressed with a hard bound on the output.

Owns: the codec table (attribute bits 0-2: none, gzip, snappy, lz4, zstd) and `decompress(codec, data,
limit)`, which returns the decompressed bytes or raises DecodeError. Guarantees:

- never more than `limit` bytes of output are produced or allocated for it (plus one chunk of slack
  for lz4/zstd, at most 4 MiB); a stream that would exceed it raises `DecompressedTooLarge` as soon as
  the excess is seen: a declared size (raw snappy preamble, lz4/zstd frame content size) is checked
  before anything is decompressed;
- every failure of the underlying libraries (zlib, cramjam, lz4, zstandard) is turned into DecodeError;
- every DecodeError says how much work it cost: `produced`, the bytes of output made before the
  failure (the excess chunk of a bomb included), so budgets can charge failed decompressions too.
  Chunk sizes depend only on the data and `limit`, so the same call fails the same way every time.

Formats: gzip (or zlib) through zlib with header auto-detection and multi-member support; snappy raw
or in the xerial framing the Java client writes (b"\\x82SNAPPY\\x00", version, compat, then
[int32 length][raw snappy block]...); lz4 frames; zstd frames (streaming). `repair_legacy_lz4` fixes
the header checksum that Kafka before 0.10 computed wrongly (KAFKA-3160, message format v0).
"""

from __future__ import annotations

import struct
import zlib

from kwire.kafka.primitives import read_uvarint
from kwire.errors import DecodeError

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = 16  # magic, int32 version, int32 compatible version
_INT32 = struct.Struct(">i")
_U32 = struct.Struct("<I")
_U32X4 = struct.Struct("<4I")

_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_FIRST_CHUNK = 256 << 10  # first read when the frame does not declare its size
_MAX_CHUNK = 4 << 20  # reads grow x4 up to this
_ZSTD_MAX_WINDOW = 1 << 27  # zstd's own default limit (128 MiB)


class DecompressedTooLarge(DecodeError):
    """A compressed payload whose output exceeds the caller's bound (a bomb, or a too-small bound)."""


def _failed(message: str, produced: int = 0, kind=DecodeError) -> DecodeError:
    """A DecodeError that carries the output bytes made before the failure."""
    error = kind(message)
    error.produced = produced
    return error


def produced_by(error: DecodeError) -> int:
    """The output bytes a failed `decompress` made before failing (0 when it made none)."""
    return getattr(error, "produced", 0)


def codec_name(codec: int) -> str:
    return CODEC_NAMES[codec] if 0 <= codec < len(CODEC_NAMES) else f"unknown({codec})"


def decompress(codec: int, data, limit: int):
    """Decompress `data` (bytes-like) compressed with Kafka codec `codec`, producing at most `limit` bytes.

    Returns a bytes-like object (bytes or bytearray). Raises DecompressedTooLarge past `limit`,
    DecodeError for corrupt or truncated input and for an unknown codec; `produced_by(error)` is the
    output made before the failure.
    """
    if codec == GZIP:
        return gunzip(data, limit)
    if codec == SNAPPY:
        return unsnappy(data, limit)
    if codec == LZ4:
        return unlz4(data, limit)
    if codec == ZSTD:
        return unzstd(data, limit)
    if codec == NONE:
        if len(data) > limit:
            raise _failed(f"{len(data)} bytes exceed the limit of {limit}", 0, DecompressedTooLarge)
        return data
    raise DecodeError(f"unknown compression codec {codec}")


def _too_large(codec: str, limit: int, declared: int | None = None, produced: int = 0) -> DecompressedTooLarge:
    if declared is not None:
        return _failed(f"{codec}: declares {declared} bytes, which exceeds the limit of {limit} bytes", 0,
                       DecompressedTooLarge)
    return _failed(f"{codec}: output exceeds the limit of {limit} bytes", produced, DecompressedTooLarge)


def gunzip(data, limit: int):
    """gzip (any number of members) or zlib, bounded, read in chunks like the other codecs."""
    state = [zlib.decompressobj(47), data]  # 32 + 15: detect a gzip or zlib header

    def read(n: int) -> bytes:
        d, src = state
        while True:
            out = d.decompress(src, n)
            src = state[1] = d.unconsumed_tail
            if out:
                return out
            if d.eof:
                rest = d.unused_data
                if not rest.strip(b"\x00"):  # Java pads nothing, but tolerate trailing zero bytes
                    return b""
                d = state[0] = zlib.decompressobj(47)
                src = state[1] = rest
            elif not src:
                raise DecodeError("gzip: stream is truncated")

    return _bounded_reads(read, _FIRST_CHUNK, limit, "gzip", zlib.error)


def _snappy_raw_size(block, where: str) -> int:
    try:
        size, _ = read_uvarint(block, 0)
    except DecodeError:
        raise DecodeError(f"snappy: bad length preamble {where}") from None
    return size


# The codec libraries are imported where they are first needed: most captures never use some of
# them, and importing all three costs milliseconds at every start.


def _unloadable(e: ImportError) -> Exception:
    """What a codec library's failed import is: out of memory when its shared object could not be mapped
    (a memory limit: `ulimit -v`, a container), as the allocation that failed would be; else the error."""
    text = str(e).lower()
    if "failed to map segment" in text or "cannot allocate memory" in text:
        return MemoryError(f"cannot load a compression library: {e}")
    return e


def unsnappy(data, limit: int):
    """Raw snappy, or the xerial framing. Declared sizes are summed and checked before decompressing."""
    try:
        import cramjam
    except ImportError as e:
        raise _unloadable(e) from None

    mv = memoryview(data)
    if bytes(mv[:8]) == XERIAL_MAGIC:
        if len(mv) < _XERIAL_HEADER:
            raise DecodeError("snappy: xerial header is truncated")
        blocks = []
        pos = _XERIAL_HEADER
        end = len(mv)
        while pos < end:
            if pos + 4 > end:
                raise DecodeError(f"snappy: xerial block length cut at byte {pos}")
            (n,) = _INT32.unpack_from(mv, pos)
            if n < 0 or pos + 4 + n > end:
                raise DecodeError(f"snappy: xerial block of {n} bytes at byte {pos} overruns the payload")
            blocks.append(mv[pos + 4 : pos + 4 + n])
            pos += 4 + n
    else:
        blocks = [mv]
    sizes = []
    total = 0
    for i, block in enumerate(blocks):
        size = _snappy_raw_size(block, f"in block {i}")
        total += size
        if total > limit:
            raise _too_large("snappy", limit, total)
        sizes.append(size)
    out = bytearray(total)
    view = memoryview(out)
    pos = 0
    try:
        for block, size in zip(blocks, sizes):
            written = cramjam.snappy.decompress_raw_into(block, view[pos : pos + size])
            if written != size:
                raise _failed(f"snappy: block produced {written} bytes, declared {size}", total)
            pos += size
    except cramjam.DecompressionError as e:
        raise _failed(f"snappy: {e}", total) from None  # the output was allocated: it counts
    return out


def _bounded_reads(read, first: int, limit: int, codec: str, errors=()):
    """Call read(n) with growing n until it returns b"", never letting the total pass limit + 1.

    One chunk is returned as it is; more are gathered in a bytearray (no list-then-join doubling).
    A DecodeError or one of `errors` raised by read becomes a DecodeError carrying the bytes made."""
    out = b""
    total = 0
    step = first
    while True:
        try:
            chunk = read(min(step, limit - total + 1))
        except DecodeError as e:
            raise _failed(str(e), total) from None
        except errors as e:
            raise _failed(f"{codec}: {e}", total) from None
        if not chunk:
            return out
        total += len(chunk)
        if total > limit:
            raise _too_large(codec, limit, produced=total)
        if not out:
            out = chunk
        else:
            if not isinstance(out, bytearray):
                out = bytearray(out)
            out += chunk
        step = min(step * 4, _MAX_CHUNK)


def unlz4(data, limit: int):
    """One lz4 frame, bounded (python-lz4 allocates max_length up front, so reads are chunked)."""
    try:
        import lz4.frame
    except ImportError as e:
        raise _unloadable(e) from None

    try:
        info = lz4.frame.get_frame_info(data)
    except Exception as e:  # lz4 raises RuntimeError for a bad header
        raise DecodeError(f"lz4: {e}") from None
    declared = info.get("content_size") or 0
    if declared > limit:
        raise _too_large("lz4", limit, declared)
    d = lz4.frame.LZ4FrameDecompressor()
    pending = [data]

    def read(n: int) -> bytes:
        if d.eof:
            return b""
        src = pending.pop() if pending else b""
        out = d.decompress(src, max_length=n)
        if not out and not d.eof and d.needs_input:
            raise DecodeError("lz4: frame is truncated")
        return out

    return _bounded_reads(read, declared + 1 if declared else _FIRST_CHUNK, limit, "lz4", Exception)


def unzstd(data, limit: int):
    """zstd frames, streamed with a bounded output (zstd's default 128 MiB cap on the window)."""
    try:
        import zstandard
    except ImportError as e:
        raise _unloadable(e) from None

    _zstd_check_frames(data)  # the streaming reader ends silently on a cut frame: find that first
    try:
        params = zstandard.get_frame_parameters(data)
    except zstandard.ZstdError as e:
        raise DecodeError(f"zstd: {e}") from None
    declared = params.content_size
    known = declared != zstandard.CONTENTSIZE_UNKNOWN
    if known and declared > limit:
        raise _too_large("zstd", limit, declared)
    dctx = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW)
    try:
        reader = dctx.stream_reader(data, read_across_frames=True)
    except zstandard.ZstdError as e:
        raise DecodeError(f"zstd: {e}") from None
    with reader:
        return _bounded_reads(reader.read, declared + 1 if known else _FIRST_CHUNK, limit, "zstd",
                              zstandard.ZstdError)


_ZSTD_MAGIC = 0xFD2FB528
_FCS_BYTES = (0, 2, 4, 8)
_DID_BYTES = (0, 1, 2, 4)


def _zstd_check_frames(data) -> None:
    """Walk the frame and block headers (one step per block of up to 128 KiB); raise if any is cut."""
    mv = memoryview(data)
    n = len(mv)
    pos = 0
    while pos < n:
        if pos + 5 > n:
            raise DecodeError(f"zstd: frame header cut at byte {pos}")
        (magic,) = _U32.unpack_from(mv, pos)
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame
            if pos + 8 > n:
                raise DecodeError(f"zstd: skippable frame cut at byte {pos}")
            pos += 8 + _U32.unpack_from(mv, pos + 4)[0]
            continue
        if magic != _ZSTD_MAGIC:
            raise DecodeError(f"zstd: no frame magic at byte {pos}")
        fhd = mv[pos + 4]
        single_segment = fhd & 0x20
        fcs = _FCS_BYTES[fhd >> 6]
        if fcs == 0 and single_segment:
            fcs = 1
        pos += 5 + (0 if single_segment else 1) + _DID_BYTES[fhd & 3] + fcs
        while True:
            if pos + 3 > n:
                raise DecodeError(f"zstd: frame is truncated (block header at byte {pos})")
            b = mv[pos] | mv[pos + 1] << 8 | mv[pos + 2] << 16
            kind = (b >> 1) & 3
            if kind == 3:
                raise DecodeError(f"zstd: reserved block type at byte {pos}")
            pos += 3 + (1 if kind == 1 else b >> 3)
            if b & 1:
                break
        if fhd & 0x04:
            pos += 4
    if pos > n:
        raise DecodeError("zstd: frame is truncated")


# --- KAFKA-3160: the lz4 frame header checksum of message format v0 ---------------------------------

_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M32 = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 (lz4's header checksum). Plain Python: only ever run on a frame descriptor (< 20 bytes)."""
    n = len(data)
    p = 0
    if n >= 16:
        v1, v2, v3, v4 = (seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed & _M32, (seed - _P1) & _M32
        while p + 16 <= n:
            a, b, c, d = _U32X4.unpack_from(data, p)
            v1 = _rotl((v1 + a * _P2) & _M32, 13) * _P1 & _M32
            v2 = _rotl((v2 + b * _P2) & _M32, 13) * _P1 & _M32
            v3 = _rotl((v3 + c * _P2) & _M32, 13) * _P1 & _M32
            v4 = _rotl((v4 + d * _P2) & _M32, 13) * _P1 & _M32
            p += 16
        h = (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while p + 4 <= n:
        (w,) = _U32.unpack_from(data, p)
        h = _rotl((h + w * _P3) & _M32, 17) * _P4 & _M32
        p += 4
    while p < n:
        h = _rotl((h + data[p] * _P5) & _M32, 11) * _P1 & _M32
        p += 1
    h ^= h >> 15
    h = h * _P2 & _M32
    h ^= h >> 13
    h = h * _P3 & _M32
    h ^= h >> 16
    return h


def lz4_header_checksums(data) -> tuple[int, int, int] | None:
    """(checksum byte found, correct one, KAFKA-3160 one) of an lz4 frame, None if it is no lz4 frame."""
    head = bytes(memoryview(data)[:19])
    if len(head) < 7 or head[:4] != _LZ4_MAGIC:
        return None
    flg = head[4]
    hc_at = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    if len(head) <= hc_at:
        return None
    good = (xxh32(head[4:hc_at]) >> 8) & 0xFF
    broken = (xxh32(head[:hc_at]) >> 8) & 0xFF
    return head[hc_at], good, broken


def repair_legacy_lz4(data) -> tuple[object, bool]:
    """Return (data with a correct lz4 header checksum, whether it had the KAFKA-3160 one and was fixed)."""
    sums = lz4_header_checksums(data)
    if sums is None:
        return data, False
    found, good, broken = sums
    if found == good or found != broken:
        return data, False
    flg = memoryview(data)[4]
    hc_at = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    fixed = bytearray(data)
    fixed[hc_at] = good
    return fixed, True
