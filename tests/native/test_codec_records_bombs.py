"""A decompression bomb costs what it made: an error on its batch, and the exchange's record data budget
is spent (what it decompressed before it was stopped counts), so the batches after it are cut, never
decompressed, and the records field says which budget cut them. The batches before it decode."""

from __future__ import annotations

import struct

import pytest

from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import decode_records, summarize_records

from tests.native.test_codec_compression import GIB, _peak, gzip_zeros, lz4_zeros, zstd_zeros
from tests.codec.test_records_encoder import GZIP, LZ4, SNAPPY, ZSTD, legacy_wrapper, v2_batch

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
    budget = RecordBudget(data=1 << 20)

    def run():
        out.update(decode_records(buf, budget))

    peak = _peak(run)
    first, middle, last = out["batches"]
    assert "exceeds the limit" in middle["error"] and middle["Records"] == [] and middle["CrcValid"]
    assert first["Records"][0]["Value"] == "b" and "error" not in first
    if budget.data == 0:  # it made output before it was stopped: that spent the budget
        assert last["Records"] == [] and "record data budget of this exchange used up" in last["error"]
        assert "error" not in out and "2 batches cut" in out["budget"]
    else:  # refused by the size it declares: nothing made, nothing spent
        assert name in ("snappy", "zstd") and last["Records"][0]["Value"] == "d" and "error" not in last
        assert "1 batch cut" in out["budget"]
    assert peak < 2 * len(buf) + (8 << 20)


def test_a_thousand_bombs_cost_one_budget():
    """The issue's case: 1,000 small zstd bombs in one exchange once decompressed 64 MiB each."""
    bomb = v2_batch(payload=zstd_zeros(2 << 20, False), codec=ZSTD, record_count=1)
    budget = RecordBudget(data=1 << 20)
    out = decode_records(bomb * 1000, budget)
    errors = [b["error"] for b in out["batches"]]
    assert "exceeds the limit" in errors[0] and all("budget of this exchange used up" in e for e in errors[1:])
    assert budget.decompressed <= (1 << 20) + (4 << 20)  # the limit plus one chunk of slack
    assert "1,000 batches cut" in out["budget"]


def test_legacy_wrapper_bomb():
    bomb = legacy_wrapper(1, 0, b"", GZIP, compressed=gzip_zeros(1024))
    (e,) = decode_records(bomb, RecordBudget(data=1 << 20))["batches"]
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
