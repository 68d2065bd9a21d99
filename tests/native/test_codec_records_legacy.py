"""Legacy message sets (magic 0 and 1): plain messages, CRC-32, compressed wrappers, KAFKA-3160 lz4."""

from __future__ import annotations

import lz4.frame
import pytest

from kwire.native import codec_compression as c
from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import decode_records, summarize_records

from tests.codec.test_records_encoder import GZIP, LZ4, SNAPPY, compress, legacy_message, legacy_wrapper, v2_batch

TS = 1_600_000_000_000


@pytest.mark.parametrize("magic", [0, 1])
def test_plain_messages(magic):
    buf = legacy_message(magic, 10, b"k", b"v", timestamp=TS) + legacy_message(magic, 11, None, b"\xff",
                                                                                 timestamp=TS + 1)
    out = summarize_records(buf)
    assert "error" not in out and out["partial_tail"] == 0
    a, b = out["batches"]
    assert a["Offset"] == a["BaseOffset"] == a["LastOffset"] == 10 and a["RecordCount"] == 1
    assert a["Magic"] == magic and a["CrcValid"] and a["SizeBytes"] + b["SizeBytes"] == len(buf)
    assert a["KeySize"] == 1 and b["KeySize"] == -1 and b["ValueSize"] == 1
    assert a["Attributes"]["Compression"] == "none"
    if magic:
        assert a["Timestamp"] == TS and a["Attributes"]["TimestampType"] == "CreateTime"
    else:
        assert "Timestamp" not in a and "TimestampType" not in a["Attributes"]
    records = [r for e in decode_records(buf)["batches"] for r in e["Records"]]
    assert [(r["Offset"], r["Key"], r["Value"]) for r in records] == [(10, "k", "v"), (11, None, {"hex": "ff"})]
    assert [r["Timestamp"] for r in records] == ([TS, TS + 1] if magic else [None, None])
    assert all(r["Headers"] == [] and r["CrcValid"] for r in records)


def test_sizes_add_up():
    buf = legacy_message(0, 1, b"a", b"b") + legacy_message(1, 2, b"a", b"b")
    out = summarize_records(buf)
    assert [e["SizeBytes"] for e in out["batches"]] == [12 + 14 + 2, 12 + 22 + 2]
    assert sum(e["SizeBytes"] for e in out["batches"]) == len(buf)


@pytest.mark.parametrize("magic", [0, 1])
def test_crc32_mismatch_is_flagged(magic):
    msg = legacy_message(magic, 5, b"k", b"v", crc=0x12345678)
    (e,) = summarize_records(msg)["batches"]
    assert e["Crc"] == 0x12345678 and e["CrcValid"] is False
    (e,) = decode_records(msg)["batches"]
    assert e["Records"][0]["Value"] == "v" and e["Records"][0]["CrcValid"] is False and "error" not in e


def _inner(magic: int, n: int, relative: bool, first: int = 0):
    return b"".join(legacy_message(magic, (i if relative else first + i), b"k%d" % i, b"value %d" % i,
                                   timestamp=TS + i) for i in range(n))


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
def test_v1_wrapper_relative_offsets(codec):
    wrapper = legacy_wrapper(1, 104, _inner(1, 5, relative=True), codec, timestamp=TS + 50)
    (s,) = summarize_records(wrapper)["batches"]
    assert s["Attributes"]["Compression"] == c.codec_name(codec) and s["LastOffset"] == 104
    assert "RecordCount" not in s and "BaseOffset" not in s and s["CrcValid"]
    (e,) = decode_records(wrapper)["batches"]
    assert "error" not in e and "Lz4BrokenHeaderChecksum" not in e
    assert [r["Offset"] for r in e["Records"]] == [100, 101, 102, 103, 104]
    assert [r["Timestamp"] for r in e["Records"]] == [TS + i for i in range(5)]
    assert e["BaseOffset"] == 100 and e["RecordCount"] == 5 and e["Records"][2]["Value"] == "value 2"
    assert e["DecompressedSize"] == len(_inner(1, 5, relative=True))


def test_v1_wrapper_log_append_time_overrides_inner_timestamps():
    wrapper = legacy_wrapper(1, 2, _inner(1, 3, relative=True), GZIP, timestamp=TS + 777, log_append_time=True)
    (e,) = decode_records(wrapper)["batches"]
    assert e["Attributes"]["TimestampType"] == "LogAppendTime"
    assert [r["Timestamp"] for r in e["Records"]] == [TS + 777] * 3


@pytest.mark.parametrize("codec", [GZIP, SNAPPY])
def test_v0_wrapper_absolute_offsets(codec):
    wrapper = legacy_wrapper(0, 22, _inner(0, 3, relative=False, first=20), codec)
    (e,) = decode_records(wrapper)["batches"]
    assert [r["Offset"] for r in e["Records"]] == [20, 21, 22] and "error" not in e


def test_raw_snappy_wrapper_too():
    inner = _inner(1, 2, relative=True)
    wrapper = legacy_wrapper(1, 1, inner, SNAPPY, compressed=compress(SNAPPY, inner))
    (e,) = decode_records(wrapper)["batches"]
    assert [r["Key"] for r in e["Records"]] == ["k0", "k1"]


def _broken_lz4(data: bytes) -> bytes:
    blob = lz4.frame.compress(data, store_size=False)
    found, good, broken = c.lz4_header_checksums(blob)
    assert found == good != broken
    return blob[:6] + bytes([broken]) + blob[7:]


def test_v0_lz4_wrapper_with_kafka_3160_checksum():
    inner = _inner(0, 3, relative=False, first=7)
    wrapper = legacy_wrapper(0, 9, inner, LZ4, compressed=_broken_lz4(inner))
    (e,) = decode_records(wrapper)["batches"]
    assert e["Lz4BrokenHeaderChecksum"] is True and "error" not in e
    assert [r["Offset"] for r in e["Records"]] == [7, 8, 9]


def test_mixed_with_v2_batches():
    buf = legacy_message(0, 0, b"a", b"b") + legacy_wrapper(1, 3, _inner(1, 3, relative=True), GZIP) + \
        v2_batch([(b"c", b"d")], base_offset=4)
    out = decode_records(buf)
    assert [e["Magic"] for e in out["batches"]] == [0, 1, 2]
    assert [r["Offset"] for e in out["batches"] for r in e["Records"]] == [0, 1, 2, 3, 4]


def test_wrapper_problems_are_errors_on_the_entry():
    nested = legacy_wrapper(1, 0, legacy_wrapper(1, 0, _inner(1, 1, relative=True), GZIP), GZIP)
    null_value = legacy_message(1, 1, None, None, attributes=GZIP)
    corrupt = legacy_wrapper(1, 2, b"", GZIP, compressed=b"definitely not gzip")
    cut_inner = legacy_wrapper(1, 3, _inner(1, 2, relative=True)[:-3], GZIP)
    bad_magic_inner = legacy_wrapper(1, 4, b"\x00" * 16 + b"\x07" + b"\x00" * 20, GZIP)
    tail = legacy_message(1, 5, b"k", b"v")
    out = decode_records(nested + null_value + corrupt + cut_inner + bad_magic_inner + tail)
    errors = [e.get("error") for e in out["batches"]]
    assert "itself compressed" in errors[0]
    assert "null value" in errors[1]
    assert errors[2].startswith("gzip")
    assert "cut" in errors[3] and len(out["batches"][3]["Records"]) == 1
    assert "unknown magic 7" in errors[4]
    assert errors[5] is None and out["batches"][5]["Records"][0]["Value"] == "v"
    assert "error" not in out


def test_bad_key_length_inside_a_message():
    msg = bytearray(legacy_message(1, 0, b"k", b"v"))
    msg[26:30] = (1000).to_bytes(4, "big")  # key length past the message
    for fn in (summarize_records, decode_records):
        (e,) = fn(bytes(msg))["batches"]
        assert "key length 1000" in e["error"]


def test_cut_legacy_message():
    msg = legacy_message(1, 42, b"key", b"value")
    for cut in range(1, len(msg)):
        out = summarize_records(msg[:cut])
        assert out["partial_tail"] == cut and "error" not in out
        tail = out["batches"][0]
        assert tail["partial"] and ("Crc" in tail) == (cut >= 17) and ("Magic" in tail) == (cut >= 17)
        if cut >= 18:
            assert tail["Attributes"] == {"Compression": "none", "TimestampType": "CreateTime"}


@pytest.mark.parametrize("magic,size", [(0, 13), (1, 21)])
def test_too_small_message_size(magic, size):
    msg = bytearray(legacy_message(magic, 0, None, None))
    msg[8:12] = size.to_bytes(4, "big")
    out = summarize_records(bytes(msg))
    assert "smaller" in out["error"]


def test_decompression_bound_applies_to_wrappers():
    inner = _inner(1, 50, relative=True)
    wrapper = legacy_wrapper(1, 49, inner, GZIP)
    (e,) = decode_records(wrapper, RecordBudget(data=len(inner) - 1))["batches"]
    assert "exceeds the limit" in e["error"] and e["Records"] == []
    (e,) = decode_records(wrapper, RecordBudget(data=len(inner)))["batches"]
    assert e["RecordCount"] == 50
