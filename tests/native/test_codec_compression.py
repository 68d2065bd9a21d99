"""Bounded decompression: every codec round-trips, stops at the bound, and fails only with DecodeError."""

from __future__ import annotations

import gzip
import os
import struct
import tracemalloc
import zlib

import cramjam
import lz4.frame
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.native import codec_compression as c
from kwire.errors import DecodeError

from tests.codec.test_records_encoder import compress, xerial

DATA = b"".join(b"record %d of something fairly compressible; " % i for i in range(5000))
CODECS = [c.GZIP, c.SNAPPY, c.LZ4, c.ZSTD]


def variants(data: bytes):
    yield "gzip", c.GZIP, gzip.compress(data)
    yield "zlib", c.GZIP, zlib.compress(data)
    yield "snappy", c.SNAPPY, bytes(cramjam.snappy.compress_raw(data))
    yield "xerial", c.SNAPPY, xerial(data)
    yield "lz4", c.LZ4, lz4.frame.compress(data)
    yield "lz4-sized", c.LZ4, lz4.frame.compress(data, store_size=True, content_checksum=True)
    yield "lz4-64k-blocks", c.LZ4, lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                                                      block_linked=False)
    yield "zstd", c.ZSTD, zstandard.ZstdCompressor().compress(data)
    cobj = zstandard.ZstdCompressor(write_content_size=False, write_checksum=True, level=19).compressobj()
    yield "zstd-unsized", c.ZSTD, cobj.compress(data) + cobj.flush()


@pytest.mark.parametrize("name,codec,blob", list(variants(DATA)), ids=lambda v: v if isinstance(v, str) else "")
def test_round_trip_and_exact_bound(name, codec, blob):
    assert bytes(c.decompress(codec, blob, len(DATA))) == DATA
    assert bytes(c.decompress(codec, memoryview(blob), 1 << 30)) == DATA
    with pytest.raises(c.DecompressedTooLarge):
        c.decompress(codec, blob, len(DATA) - 1)


@pytest.mark.parametrize("name,codec,blob", list(variants(b"")), ids=lambda v: v if isinstance(v, str) else "")
def test_empty_input_compressed(name, codec, blob):
    assert bytes(c.decompress(codec, blob, 0)) == b""


@pytest.mark.parametrize("name,codec,blob", list(variants(DATA)), ids=lambda v: v if isinstance(v, str) else "")
def test_truncated_streams_are_decode_errors(name, codec, blob):
    for cut in (0, 1, 5, len(blob) // 2, len(blob) - 1):
        with pytest.raises(DecodeError):
            c.decompress(codec, blob[:cut], 1 << 30)


def test_empty_raw_snappy_is_an_error():
    with pytest.raises(DecodeError):
        c.decompress(c.SNAPPY, b"", 100)


def test_multi_member_gzip():
    blob = gzip.compress(b"abc") + gzip.compress(b"def")
    assert c.decompress(c.GZIP, blob, 6) == b"abcdef"
    with pytest.raises(c.DecompressedTooLarge):
        c.decompress(c.GZIP, blob, 5)


def test_zstd_multiple_and_skippable_frames():
    z = zstandard.ZstdCompressor()
    skippable = struct.pack("<II", 0x184D2A53, 3) + b"xyz"
    blob = z.compress(b"abc") + skippable + z.compress(b"def")
    assert c.decompress(c.ZSTD, blob, 6) == b"abcdef"
    with pytest.raises(DecodeError):
        c.decompress(c.ZSTD, blob[:-1], 6)


def test_unknown_codec_and_none():
    with pytest.raises(DecodeError, match="unknown compression codec 5"):
        c.decompress(5, b"abc", 10)
    assert c.decompress(c.NONE, b"abc", 3) == b"abc"
    with pytest.raises(c.DecompressedTooLarge):
        c.decompress(c.NONE, b"abc", 2)
    assert c.codec_name(4) == "zstd" and c.codec_name(7) == "unknown(7)"


def test_snappy_declared_size_is_checked_before_decompressing(monkeypatch):
    claims_1gb = bytes([0x80, 0x80, 0x80, 0x80, 0x04]) + b"\x00" * 20  # preamble 2**30
    called = []
    import cramjam

    monkeypatch.setattr(cramjam.snappy, "decompress_raw_into", lambda *a: called.append(a))
    with pytest.raises(c.DecompressedTooLarge, match="declares 1073741824"):
        c.decompress(c.SNAPPY, claims_1gb, 64 << 20)
    blocks = xerial(b"\x00" * (1 << 20), block=1 << 20)
    many = blocks + blocks[16:] * 99  # 100 xerial blocks of 1 MiB each
    with pytest.raises(c.DecompressedTooLarge, match="declares"):
        c.decompress(c.SNAPPY, many, 64 << 20)
    assert called == []


def test_snappy_preamble_lies():
    raw = bytes(cramjam.snappy.compress_raw(b"hello world, hello world"))
    with pytest.raises(DecodeError):  # claims one byte less than the data holds
        c.decompress(c.SNAPPY, bytes([raw[0] - 1]) + raw[1:], 100)
    with pytest.raises(DecodeError):  # claims more
        c.decompress(c.SNAPPY, bytes([raw[0] + 1]) + raw[1:], 100)


def test_xerial_framing_errors():
    good = xerial(DATA)
    with pytest.raises(DecodeError, match="xerial header"):
        c.decompress(c.SNAPPY, good[:12], 1 << 20)
    with pytest.raises(DecodeError, match="overruns"):
        c.decompress(c.SNAPPY, good[:16] + struct.pack(">i", 1000) + b"x", 1 << 20)
    with pytest.raises(DecodeError, match="overruns"):
        c.decompress(c.SNAPPY, good[:16] + struct.pack(">i", -1), 1 << 20)
    with pytest.raises(DecodeError, match="cut"):
        c.decompress(c.SNAPPY, good + b"\x00\x00", 1 << 20)
    assert c.decompress(c.SNAPPY, good[:16], 10) == b""  # header only: no blocks


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CODECS), st.binary(max_size=200))
def test_garbage_only_raises_decode_error(codec, blob):
    try:
        c.decompress(codec, blob, 1 << 20)
    except DecodeError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CODECS), st.binary(min_size=1, max_size=3000), st.data())
def test_mutated_streams_only_raise_decode_error(codec, data, draw):
    blob = bytearray(compress(codec, data))
    for _ in range(draw.draw(st.integers(1, 3))):
        blob[draw.draw(st.integers(0, len(blob) - 1))] = draw.draw(st.integers(0, 255))
    try:
        out = c.decompress(codec, bytes(blob), 1 << 16)
    except DecodeError:
        return
    assert len(out) <= 1 << 16


# --- bombs: 1 GiB of zeros in a small payload ----------------------------------------------------------

GIB = 1 << 30


def gzip_zeros(mib: int) -> bytes:
    """A one-member gzip stream of `mib` MiB of zeros, built from one full-flushed 1 MiB block repeated:
    after Z_FULL_FLUSH the compressor keeps no history, so every further MiB compresses identically."""
    mb = bytes(1 << 20)
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = co.compress(mb) + co.flush(zlib.Z_FULL_FLUSH)
    block = co.compress(mb) + co.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(mb, crc)
    final = b"\x03\x00"  # a final, empty block with fixed Huffman codes
    return head + block * (mib - 1) + final + struct.pack("<II", crc, (mib << 20) & 0xFFFFFFFF)


def zstd_zeros(size: int, declare: bool) -> bytes:
    mb = bytes(1 << 20)
    cctx = zstandard.ZstdCompressor(write_content_size=declare)
    cobj = cctx.compressobj(size=size if declare else -1)
    return b"".join([cobj.compress(mb) for _ in range(size >> 20)] + [cobj.flush()])


def lz4_zeros(size: int) -> bytes:
    mb = bytes(1 << 20)
    co = lz4.frame.LZ4FrameCompressor()
    return b"".join([co.begin()] + [co.compress(mb) for _ in range(size >> 20)] + [co.flush()])


def test_gzip_zeros_helper_is_valid():
    assert gzip.decompress(gzip_zeros(8)) == bytes(8 << 20)


def _peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["gzip", "zstd-declared", "zstd-undeclared", "lz4"])
def test_one_gib_bombs_are_stopped_with_bounded_memory(name):
    blob = {"gzip": lambda: gzip_zeros(1024), "zstd-declared": lambda: zstd_zeros(GIB, True),
            "zstd-undeclared": lambda: zstd_zeros(GIB, False), "lz4": lambda: lz4_zeros(GIB)}[name]()
    codec = {"gzip": c.GZIP, "lz4": c.LZ4}.get(name, c.ZSTD)
    assert len(blob) < 8 << 20

    def run():
        with pytest.raises(c.DecompressedTooLarge):
            c.decompress(codec, blob, 1 << 20)

    # the 1 MiB bound, one read chunk of slack, and python-lz4 keeps a copy of the unread input
    assert _peak(run) < 2 * len(blob) + (6 << 20)


def test_gzip_bomb_at_the_default_bound_stays_near_it():
    blob = gzip_zeros(1024)

    def run():
        with pytest.raises(c.DecompressedTooLarge):
            c.decompress(c.GZIP, blob, 64 << 20)

    assert _peak(run) < 96 << 20  # the 64 MiB bound plus growth slack: far below the 1 GiB it holds


# --- KAFKA-3160: the lz4 header checksum of message format v0 ------------------------------------------

@pytest.mark.parametrize("data,expected", [(b"", 0x02CC5D05), (b"a", 0x550D7456), (b"abc", 0x32D153FF),
                                           (b"Nobody inspects the spammish repetition", 0xE2293B2F)])
def test_xxh32_vectors(data, expected):
    assert c.xxh32(data) == expected


@pytest.mark.parametrize("kwargs", [{}, {"store_size": True}, {"content_checksum": True, "block_size": 7}])
def test_lz4_header_checksum_matches_liblz4(kwargs):
    blob = lz4.frame.compress(os.urandom(100), **kwargs)
    found, good, broken = c.lz4_header_checksums(blob)
    assert found == good != broken or found == good == broken


def _break_header(blob: bytes) -> bytes:
    found, good, broken = c.lz4_header_checksums(blob)
    assert good != broken
    hc_at = 6 + (8 if blob[4] & 0x08 else 0)
    return blob[:hc_at] + bytes([broken]) + blob[hc_at + 1 :]


@pytest.mark.parametrize("store_size", [False, True])
def test_repair_legacy_lz4(store_size):
    blob = lz4.frame.compress(DATA, store_size=store_size)
    broken = _break_header(blob)
    with pytest.raises(DecodeError):
        c.decompress(c.LZ4, broken, 1 << 20)
    fixed, repaired = c.repair_legacy_lz4(broken)
    assert repaired and bytes(fixed) == blob
    assert c.repair_legacy_lz4(blob) == (blob, False)
    assert c.repair_legacy_lz4(b"not lz4") == (b"not lz4", False)
    other = bytearray(blob)
    other[6 + (8 if store_size else 0)] ^= 0x5A  # neither checksum: left alone, lz4 rejects it
    assert c.repair_legacy_lz4(bytes(other)) == (bytes(other), False)


def test_a_codec_library_that_cannot_be_mapped_is_out_of_memory(monkeypatch):
    """Under a memory limit (ulimit -v, a container) a codec library's shared object may not map: that is
    out of memory (one line from the CLI), not an import error with a traceback; other import errors stay."""
    import builtins

    from kwire.native import codec_compression as compression

    real_import = builtins.__import__

    def refuse(message):
        def fake(name, *args, **kwargs):
            if name == "zstandard":
                raise ImportError(message)
            return real_import(name, *args, **kwargs)
        return fake

    monkeypatch.setattr(builtins, "__import__", refuse("zstandard/backend_c.so: failed to map segment from shared object"))
    with pytest.raises(MemoryError):
        compression.unzstd(b"\x28\xb5\x2f\xfd", 1 << 20)
    monkeypatch.setattr(builtins, "__import__", refuse("No module named 'zstandard'"))
    with pytest.raises(ImportError):
        compression.unzstd(b"\x28\xb5\x2f\xfd", 1 << 20)
