"""kwire.native.codec_budget: one RecordBudget per exchange, drawn on by every records field it decodes.

Record headers count like records; batches past the listed budget are summed, not kept; the run's
decompression gate stops compressed batches from being opened and says so; `count_records` agrees
with the batches it does not list."""

from __future__ import annotations

import random

from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import count_records, decode_records, summarize_records

from tests.native.test_codec_compression import zstd_zeros
from tests.codec.test_records_encoder import GZIP, ZSTD, control_batch, legacy_message, v2_batch


def test_record_headers_count_against_the_entries():
    """The issue's case, scaled down: one record with many empty headers costs its headers."""
    many = v2_batch([(b"k", b"v", [(b"", b"")] * 50_000)])
    budget = RecordBudget(entries=10_000)
    (entry,) = decode_records(many, budget)["batches"]
    assert entry["Records"] == [] and "record budget" in entry["error"]
    assert budget.entries == 10_000  # nothing was made
    small = v2_batch([(b"k", b"v", [(b"h", b"x")] * 3)] * 4)  # 4 records and 12 headers: 16 entries
    budget = RecordBudget(entries=16)
    out = decode_records(small + small, budget)
    assert [len(b["Records"]) for b in out["batches"]] == [4, 0] and budget.entries == 0
    assert out["batches"][0]["Records"][0]["Headers"] == [{"Key": "h", "Value": "x"}] * 3


def test_one_budget_across_the_fields_of_an_exchange():
    batch = v2_batch([(b"k", b"v" * 1000)] * 10, codec=GZIP)
    budget = RecordBudget(data=15_000)
    first = decode_records(batch, budget)  # ~10 KB of record data
    second = decode_records(batch, budget)  # a second field of the same exchange: the budget is spent
    assert len(first["batches"][0]["Records"]) == 10 and "budget" not in first
    assert second["batches"][0]["Records"] == [] and "record data budget" in second["batches"][0]["error"]
    assert "1 batch cut" in second["budget"]


def test_batches_past_the_listed_budget_are_summed():
    rng = random.Random(12)
    batches = [v2_batch([(b"k", b"v")] * rng.randint(1, 5), base_offset=i * 10) for i in range(40)]
    batches.append(control_batch(0, 1, base_offset=400))
    buf = b"".join(batches)
    budget = RecordBudget(batches=25)
    out = summarize_records(b"".join(batches[:15]), budget)  # one field lists what it can ...
    listed = len(out["batches"])
    rest = summarize_records(buf, budget)  # ... the next field of the exchange lists the remainder
    assert listed + len(rest["batches"]) == 25
    unlisted = rest["unlisted"]
    whole = summarize_records(buf, RecordBudget(batches=1000))["batches"]
    tail = whole[len(rest["batches"]):]
    assert unlisted["batches"] == len(tail) == 41 - len(rest["batches"])
    assert unlisted["records"] == sum(b["RecordCount"] for b in tail if not b["Attributes"]["IsControl"])
    assert unlisted["bytes"] == sum(b["SizeBytes"] for b in tail)
    assert unlisted["first_offset"] == tail[0]["BaseOffset"] and unlisted["last_offset"] == tail[-1]["LastOffset"]
    assert unlisted["crc_invalid"] == 0 and "summed in \"unlisted\"" in rest["budget"]
    assert count_records(buf) == sum(b["RecordCount"] for b in whole if not b["Attributes"]["IsControl"])


def test_unlisted_counts_crc_failures_and_legacy_entries():
    bad = bytearray(v2_batch([(b"k", b"v")]))
    bad[-1] ^= 1
    buf = v2_batch([(b"k", b"v")]) + bytes(bad) + legacy_message(1, 7, b"k", b"v")
    out = summarize_records(buf, RecordBudget(batches=1))
    assert len(out["batches"]) == 1
    assert out["unlisted"]["batches"] == 2 and out["unlisted"]["crc_invalid"] == 1
    assert out["unlisted"]["records"] == 2 and out["unlisted"]["last_offset"] == 7
    assert count_records(buf) == 3


def test_the_run_gate_stops_compressed_batches_and_says_so():
    compressed = v2_batch([(b"k", b"v")], codec=ZSTD)
    plain = v2_batch([(b"k", b"v")])
    budget = RecordBudget(run_open=False)
    out = decode_records(compressed + plain, budget)
    first, second = out["batches"]
    assert first["Records"] == [] and "decompression budget of this run" in first["error"]
    assert second["Records"][0]["Value"] == "v"
    assert budget.gated and budget.decompressed == 0 and "decompression budget of this run" in out["budget"]
    opened = RecordBudget()
    decode_records(compressed, opened)
    assert opened.gated and opened.decompressed > 0
    untouched = RecordBudget()
    decode_records(plain, untouched)
    assert not untouched.gated


def test_a_failed_decompression_is_charged_what_it_made():
    bomb = v2_batch(payload=zstd_zeros(8 << 20, False), codec=ZSTD, record_count=1)
    budget = RecordBudget(data=1 << 20)
    (entry,) = decode_records(bomb, budget)["batches"]
    assert "exceeds the limit" in entry["error"]
    assert budget.decompressed > 1 << 20 and budget.data == 0
