"""Record sets: v2 batch headers, CRCs, records, control markers, cut batches and garbage."""

from __future__ import annotations

import struct
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.native.codec_records import decode_records, summarize_records

from tests.codec.test_records_encoder import (GZIP, LZ4, NONE, SNAPPY, ZSTD, control_batch, v2_batch, v2_record,
                                   varint)

TS = 1_700_000_000_000


def test_summary_has_every_header_field():
    batch = v2_batch([(b"k", b"v"), (b"k2", b"v2"), (None, b"v3")], base_offset=100, leader_epoch=5,
                     producer_id=4000, producer_epoch=3, base_sequence=17, attributes=0x10, codec=ZSTD)
    out = summarize_records(batch)
    assert out["size"] == len(batch) and out["partial_tail"] == 0 and "error" not in out
    (b,) = out["batches"]
    crc = struct.unpack_from(">I", batch, 17)[0]
    assert b == {
        "BaseOffset": 100, "BatchLength": len(batch) - 12, "PartitionLeaderEpoch": 5, "Magic": 2,
        "Crc": crc, "CrcValid": True,
        "Attributes": {"Compression": "zstd", "TimestampType": "CreateTime", "IsTransactional": True,
                       "IsControl": False, "HasDeleteHorizon": False},
        "LastOffsetDelta": 2, "BaseTimestamp": TS, "MaxTimestamp": TS + 2, "ProducerId": 4000,
        "ProducerEpoch": 3, "BaseSequence": 17, "RecordCount": 3, "LastOffset": 102, "SizeBytes": len(batch),
    }


@pytest.mark.parametrize("bits,field", [(0x08, "TimestampType"), (0x10, "IsTransactional"),
                                        (0x20, "IsControl"), (0x40, "HasDeleteHorizon")])
def test_attribute_bits(bits, field):
    (b,) = summarize_records(v2_batch([(b"k", b"v")], attributes=bits))["batches"]
    assert b["Attributes"][field] in (True, "LogAppendTime")
    others = {k: v for k, v in b["Attributes"].items() if k not in (field, "Compression", "TimestampType")}
    assert not any(others.values())


@pytest.mark.parametrize("codec,name", [(NONE, "none"), (GZIP, "gzip"), (SNAPPY, "snappy"), (LZ4, "lz4"),
                                        (ZSTD, "zstd")])
def test_compression_names(codec, name):
    (b,) = summarize_records(v2_batch([(b"k", b"v")], codec=codec))["batches"]
    assert b["Attributes"]["Compression"] == name


def test_several_batches_and_input_types():
    buf = b"".join(v2_batch([(b"a%d" % i, b"b" * i)] * (i + 1), base_offset=10 * i, codec=i % 5)
                   for i in range(6))
    for form in (buf, bytearray(buf), memoryview(buf), memoryview(b"xx" + buf)[2:]):
        out = decode_records(form)
        assert [b["BaseOffset"] for b in out["batches"]] == [0, 10, 20, 30, 40, 50]
        assert [b["RecordCount"] for b in out["batches"]] == [1, 2, 3, 4, 5, 6]
        assert [len(b["Records"]) for b in out["batches"]] == [1, 2, 3, 4, 5, 6]
        assert sum(b["SizeBytes"] for b in out["batches"]) == len(buf)
        assert all(b["CrcValid"] and "error" not in b for b in out["batches"])


def test_empty_and_null():
    assert summarize_records(b"") == {"size": 0, "batches": [], "partial_tail": 0}
    assert decode_records(None) == {"size": 0, "batches": [], "partial_tail": 0}


def test_records_decoded():
    batch = v2_batch([(b"key", b"value", [(b"h1", b"x"), (b"h2", None)]), (None, None),
                      (b"\xff\xfe", "ünï".encode()), (b"", b"")], base_offset=7)
    (b,) = decode_records(batch)["batches"]
    r = b["Records"]
    assert [x["Offset"] for x in r] == [7, 8, 9, 10]
    assert [x["Timestamp"] for x in r] == [TS, TS + 1, TS + 2, TS + 3]
    assert [x["OffsetDelta"] for x in r] == [0, 1, 2, 3] and [x["TimestampDelta"] for x in r] == [0, 1, 2, 3]
    assert r[0]["Key"] == "key" and r[0]["Value"] == "value"
    assert r[0]["Headers"] == [{"Key": "h1", "Value": "x"}, {"Key": "h2", "Value": None}]
    assert r[1]["Key"] is None and r[1]["Value"] is None and r[1]["Headers"] == []
    assert r[2]["Key"] == {"hex": "fffe"} and r[2]["Value"] == "ünï"
    assert r[3]["Key"] == "" and r[3]["Value"] == ""
    assert all(x["Attributes"] == 0 for x in r)


def test_negative_deltas_and_big_varints():
    big = b"x" * 100_000  # multi-byte length varints
    batch = v2_batch([(b"k", big, (), -5), (b"k" * 300, b"v", (), 10**10)], base_ts=TS)
    (b,) = decode_records(batch)["batches"]
    assert [x["Timestamp"] for x in b["Records"]] == [TS - 5, TS + 10**10]
    assert b["Records"][0]["Value"] == big.decode() and b["Records"][1]["Key"] == "k" * 300


def test_log_append_time_uses_max_timestamp():
    batch = v2_batch([(b"k", b"v"), (b"k", b"w")], attributes=0x08, max_ts=TS + 999)
    (b,) = decode_records(batch)["batches"]
    assert [x["Timestamp"] for x in b["Records"]] == [TS + 999, TS + 999]
    assert [x["TimestampDelta"] for x in b["Records"]] == [0, 1]


@pytest.mark.parametrize("kind,name", [(0, "ABORT"), (1, "COMMIT")])
def test_control_markers(kind, name):
    buf = v2_batch([(b"k", b"v")], producer_id=7) + control_batch(kind, 42, base_offset=1)
    out = decode_records(buf)
    data, marker = out["batches"]
    assert "Control" not in data["Records"][0]
    assert marker["Attributes"]["IsControl"] and marker["Attributes"]["IsTransactional"]
    assert marker["Records"][0]["Control"] == {"ControlType": name, "Version": 0, "CoordinatorEpoch": 42}
    assert marker["Records"][0]["Offset"] == 1


def test_other_control_types_and_short_control_key():
    leader_change = v2_batch([(struct.pack(">hh", 0, 2), b"\x00\x00")], attributes=0x20)
    short = v2_batch([(b"\x00", b"")], attributes=0x20)
    a, b = decode_records(leader_change + short)["batches"]
    assert a["Records"][0]["Control"] == {"ControlType": "LEADER_CHANGE", "Version": 0}
    assert b["Records"][0]["Control"]["ControlType"] == "UNKNOWN" and "error" in b["Records"][0]["Control"]


def test_crc_mismatch_is_flagged_and_still_decoded():
    good = v2_batch([(b"k", b"v")])
    bad = bytearray(v2_batch([(b"k", b"v")], base_offset=1))
    bad[-2] ^= 0x01  # the value "v" (the last byte is the header count): still parses, CRC now wrong
    out = decode_records(good + bytes(bad))
    assert [b["CrcValid"] for b in out["batches"]] == [True, False]
    assert out["batches"][1]["Records"][0]["Value"] == "w"
    assert "error" not in out["batches"][1] and "error" not in out
    assert [b["CrcValid"] for b in summarize_records(good + bytes(bad))["batches"]] == [True, False]


def test_crc_covers_attributes_to_end():
    batch = bytearray(v2_batch([(b"k", b"v")]))
    batch[12] ^= 0xFF  # PartitionLeaderEpoch is outside the CRC
    assert summarize_records(bytes(batch))["batches"][0]["CrcValid"]
    batch[21] ^= 0x01  # Attributes are inside
    assert not summarize_records(bytes(batch))["batches"][0]["CrcValid"]


# --- broken records inside a good frame: an error on the batch, never an exception ------------------

def test_record_count_larger_than_records():
    out = decode_records(v2_batch([(b"k", b"v")], record_count=3) + v2_batch([(b"a", b"b")], base_offset=1))
    first, second = out["batches"]
    assert len(first["Records"]) == 1 and "record 1" in first["error"]
    assert second["Records"][0]["Key"] == "a" and "error" not in second and "error" not in out


def test_record_count_smaller_than_records():
    (b,) = decode_records(v2_batch([(b"k", b"v"), (b"k", b"w")], record_count=1))["batches"]
    assert len(b["Records"]) == 1 and "bytes left after 1 records" in b["error"]


@pytest.mark.parametrize("payload", [
    varint(100) + b"\x00" * 10,  # record longer than the batch
    varint(2) + b"\x00\x00",  # record shorter than any record
    varint(6) + b"\x00\x00\x00" + varint(50) + b"\x00\x00",  # key overruns the record
    varint(6) + b"\x00\x00\x00" + varint(-3) + b"\x00\x00",  # negative key length
    varint(7) + b"\x00\x00\x00\x00\x00" + varint(-1) + b"\x00",  # negative header count
    varint(7) + b"\x00\x00\x00\x00\x00\x00\x00",  # one byte left over in the record
    varint(7) + b"\x00\x00\x00\x00\x00" + varint(1) + b"\x00",  # header cut
    b"\xff\xff\xff\xff\xff\xff",  # varint too long
    varint(-2),
    b"",
])
def test_malformed_records(payload):
    (b,) = decode_records(v2_batch(payload=payload, record_count=1))["batches"]
    assert b["Records"] == [] and b["error"].startswith("record 0")


def test_negative_record_count():
    (b,) = decode_records(v2_batch(payload=b"", record_count=-1))["batches"]
    assert "negative record count" in b["error"]


def test_corrupt_compressed_payload_is_a_batch_error():
    bad = v2_batch(payload=b"not gzip at all", codec=GZIP, record_count=1)
    out = decode_records(bad + v2_batch([(b"k", b"v")], base_offset=1))
    assert out["batches"][0]["error"].startswith("gzip") and out["batches"][0]["Records"] == []
    assert out["batches"][1]["Records"][0]["Value"] == "v"


def test_unknown_codec_is_a_batch_error():
    batch = v2_batch([(b"k", b"v")], attributes=0x06)
    (b,) = decode_records(batch)["batches"]
    assert b["Attributes"]["Compression"] == "unknown(6)" and "unknown compression codec 6" in b["error"]


# --- cut batches at the end of the buffer ------------------------------------------------------------

TWO = v2_batch([(b"key", b"value" * 3, [(b"h", b"v")])], base_offset=5) + \
    v2_batch([(b"k2", b"v2")], base_offset=6, codec=LZ4, producer_id=77)


def test_cut_at_every_offset():
    first = len(TWO) - len(v2_batch([(b"k2", b"v2")], base_offset=6, codec=LZ4, producer_id=77))
    for cut in range(len(TWO) + 1):
        for fn in (summarize_records, decode_records):
            out = fn(TWO[:cut])
            assert "error" not in out, cut
            whole = [b for b in out["batches"] if not b.get("partial")]
            assert sum(b["SizeBytes"] for b in whole) + out["partial_tail"] == cut
            assert len(whole) == (0 if cut < first else 1 if cut < len(TWO) else 2)
            if cut in (0, first, len(TWO)):
                assert out["partial_tail"] == 0 and len(out["batches"]) == len(whole)
                continue
            tail = out["batches"][-1]
            available = cut - (first if cut > first else 0)
            assert tail["partial"] is True and tail["available"] == available == out["partial_tail"]
            assert ("BaseOffset" in tail) == (available >= 8)
            assert ("BatchLength" in tail) == (available >= 12)
            assert ("Magic" in tail) == (available >= 17)
            assert ("RecordCount" in tail) == (available >= 61)
            assert "Records" not in tail and "CrcValid" not in tail
            if available >= 8:
                assert tail["BaseOffset"] == (5 if cut < first else 6)
            if available >= 23:
                assert tail["Attributes"]["Compression"] == ("none" if cut < first else "lz4")
            if available >= 51 and cut > first:
                assert tail["ProducerId"] == 77


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=40) | st.none(), st.binary(max_size=200) | st.none()),
                min_size=1, max_size=8),
       st.integers(0, 4), st.integers(0, 3), st.data())
def test_cut_anywhere(records, codec, n_batches, data):
    buf = b"".join(v2_batch(records, base_offset=i * 100, codec=codec) for i in range(n_batches + 1))
    cut = data.draw(st.integers(0, len(buf)))
    out = decode_records(buf[:cut])
    assert "error" not in out
    whole = [b for b in out["batches"] if not b.get("partial")]
    assert sum(b["SizeBytes"] for b in whole) + out["partial_tail"] == cut
    for b in whole:
        assert b["CrcValid"] and "error" not in b
        assert [r["Value"] for r in b["Records"]] == [None if v is None else _shown(v) for _, v in records]


def _shown(raw: bytes):
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return {"hex": raw.hex()}


# --- garbage -------------------------------------------------------------------------------------------

def test_unknown_magic_stops_with_an_error():
    good = v2_batch([(b"k", b"v")])
    bad = bytearray(v2_batch([(b"k", b"v")], base_offset=1))
    bad[16] = 7
    out = summarize_records(good + bytes(bad) + good)
    assert len(out["batches"]) == 2 and out["batches"][0]["CrcValid"]
    err = out["batches"][1]
    assert err["error"] == "unknown magic 7" and err["at"] == len(good) and err["BaseOffset"] == 1
    assert out["unparsed"] == len(bad) + len(good) and "byte %d" % len(good) in out["error"]


def test_unknown_magic_on_a_cut_batch_is_garbage_too():
    bad = bytearray(v2_batch([(b"k", b"v")]))
    bad[16] = 9
    out = summarize_records(bytes(bad[:30]))
    assert out["batches"][0]["error"] == "unknown magic 9" and out["partial_tail"] == 0


@pytest.mark.parametrize("length", [-1, -(2**31), 0, 13, 48])
def test_absurd_lengths(length):
    buf = struct.pack(">qiibI", 0, length, 0, 2, 0) + b"\x00" * 60
    out = decode_records(buf)
    assert "error" in out and "smaller" in out["batches"][0]["error"]
    assert out["batches"][0]["BatchLength"] == length


def test_huge_length_at_the_end_is_a_cut_batch():
    buf = struct.pack(">qiibI", 3, 2**31 - 1, 0, 2, 0) + b"\x00" * 60
    out = summarize_records(buf)
    assert out["partial_tail"] == len(buf) and out["batches"][0]["BatchLength"] == 2**31 - 1


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_raise(buf):
    for fn in (summarize_records, decode_records):
        out = fn(buf)
        assert out["size"] == len(buf)
        assert "internal" not in out.get("error", "")


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 4), st.data())
def test_mutated_batches_never_raise(codec, data):
    buf = bytearray(v2_batch([(b"key", b"value" * 5, [(b"h", b"x")]), (None, b"v")], codec=codec)
                    + v2_batch([(b"a", b"b")], base_offset=2))
    for _ in range(data.draw(st.integers(1, 4))):
        buf[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
    for fn in (summarize_records, decode_records):
        out = fn(bytes(buf))
        assert "internal" not in out.get("error", "")


def test_summarize_copies_no_payload():
    big = v2_batch([(b"k", b"\x01" * (8 << 20))] * 4, codec=NONE)  # 32 MiB batch
    tracemalloc.start()
    try:
        out = summarize_records(big)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out["batches"][0]["CrcValid"] and out["batches"][0]["RecordCount"] == 4
    assert peak < 256 << 10


def test_record_bytes_layout_matches_the_spec():
    # length, attributes, timestampDelta, offsetDelta, keyLength, key, valueLength, value, headers
    assert v2_record(1, 2, b"k", None) == bytes([14, 0, 4, 2, 2]) + b"k" + bytes([1, 0])  # 7 bytes, zigzag 14
