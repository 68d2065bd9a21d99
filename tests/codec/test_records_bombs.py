"""A decompression bomb costs only its own batch: an error there, the batches around it decode."""

from __future__ import annotations

import struct

import pytest

from kwire.codec.records import decode_records, summarize_records

from .test_compression import GIB, _peak, gzip_zeros, lz4_zeros, zstd_zeros
from .test_records_encoder import GZIP, LZ4, SNAPPY, ZSTD, legacy_wrapper, v2_batch

BOMBS = {
    "gzip": (GZIP, lambda: gzip_zeros(1024)),
    "zstd": (ZSTD, lambda: zstd_zeros(GIB, True)),
    "zstd-unsized": (ZSTD, lambda: zstd_zeros(GIB, False)),
    "lz4": (LZ4, lambda: lz4_zeros(GIB)),
    "snappy": (SNAPPY, lambda: bytes([0x80, 0x80, 0x80, 0x80, 0x04]) + b"\x00" * 64),  # claims 1 GiB
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_v2_bomb_between_good_batches(name):
    codec, make = BOMBS[name]
    bomb = v2_batch(payload=make(), codec=codec, record_count=1, base_offset=1)
    buf = v2_batch([(b"a", b"b")], base_offset=0, codec=codec) + bomb + \
        v2_batch([(b"c", b"d")], base_offset=2, codec=codec)
    out = {}

    def run():
        out.update(decode_records(buf, max_decompressed=1 << 20))

    peak = _peak(run)
    first, middle, last = out["batches"]
    assert "exceeds the limit" in middle["error"] and middle["Records"] == [] and middle["CrcValid"]
    assert first["Records"][0]["Value"] == "b" and last["Records"][0]["Value"] == "d"
    assert "error" not in first and "error" not in last and "error" not in out
    assert peak < 2 * len(buf) + (8 << 20)


def test_legacy_wrapper_bomb():
    bomb = legacy_wrapper(1, 0, b"", GZIP, compressed=gzip_zeros(1024))
    (e,) = decode_records(bomb, max_decompressed=1 << 20)["batches"]
    assert "exceeds the limit" in e["error"]


def test_summary_does_not_touch_the_bomb():
    bomb = v2_batch(payload=zstd_zeros(GIB, False), codec=ZSTD, record_count=10**9)

    def run():
        (b,) = summarize_records(bomb)["batches"]
        assert b["RecordCount"] == 10**9 and b["CrcValid"]

    assert _peak(run) < 64 << 10


def test_huge_record_count_in_small_batch_is_cheap():
    batch = v2_batch([(b"k", b"v")], record_count=2**31 - 1)
    (b,) = decode_records(batch)["batches"]
    assert len(b["Records"]) == 1 and "record 1" in b["error"]
    assert struct.unpack_from(">i", batch, 57)[0] == 2**31 - 1
