"""Facts of one exchange: the flat row, partition rows (fetch, produce, share), topic names."""

import random
import tracemalloc
from pathlib import Path

from kwire.native.exchange_facts import (EXCHANGE_COLUMNS, PARTITION_COLUMNS, exchange_row, ns_to_ms, ns_to_s,
                                   partition_rows, records_facts, topic_names)
from kwire.analytics.figures import ms
from kwire.analytics.observe import evidence
from kwire.model import NO_RESPONSE, PAIRED, Exchange
from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import summarize_records
from kwire.pipeline import analyze_files
from tests.codec.test_records_encoder import control_batch, legacy_message, legacy_wrapper, v2_batch

QUICK = str(Path(__file__).parents[1] / "analytics" / "data" / "quick.pcap")


def _ex(**kw):
    base = dict(connection_id=1, client="10.0.0.1:5000", broker="10.0.0.2:9092", status=PAIRED, correlation_id=7,
                api_key=1, api="Fetch", api_version=16, client_id="c", request_ts_ns=1_000, response_ts_ns=3_500,
                request_size=100, response_size=200)
    base.update(kw)
    return Exchange(**base)


def test_exchange_row_basics():
    ex = _ex(response={"ErrorCode": 0, "Responses": [{"Partitions": [{"ErrorCode": 6}, {"ErrorCode": 1},
                                                                      {"ErrorCode": 6}]}]})
    row = exchange_row(ex)
    # the columns, then the connection, the exact latency and the evidence (not columns)
    assert tuple(row) == EXCHANGE_COLUMNS + ("connection_id", "latency_ns", "evidence")
    assert row["connection_id"] == ex.connection_id
    assert row["evidence"] == evidence(ex) == (1_000, ex.client, ex.broker, ex.correlation_id, "Fetch")
    assert row["latency_ns"] == 2_500 and row["latency_ms"] == 0.0025
    assert row["error_codes"] == ["NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER", "OFFSET_OUT_OF_RANGE"]
    assert row["failed"] is True
    assert row["ts_ns"] == 1_000


def _ns_samples() -> list[int]:
    """Integers over the whole of int64: each power of two and its neighbours, below and above each, random ones,
    and dense runs where doubles near ns / 1e6 and ns / 1e9 come to lie farther apart than the last decimal kept
    (2**33 ms, 2**23 s), where the reasoning in kwire.native.exchange_facts changes from one case to the other."""
    rng = random.Random(7)
    samples = list(range(-3000, 3000)) + [rng.randrange(-2**62, 2**62) for _ in range(20000)]
    for e in range(64):
        samples += [2**e + d for d in (-2, -1, 0, 1, 2)] + [rng.randrange(2**e + 1) for _ in range(200)]
    for edge in (2**32 * 10**6, 2**33 * 10**6, 2**22 * 10**9, 2**23 * 10**9, 2**24 * 10**9):
        samples += range(edge - 20000, edge + 20000)
    return samples


def test_latency_ms_is_rounded_to_the_nanosecond():
    """ns_to_ms and figures.ms are round(ns / 1e6, 6), whatever the latency (a division: it never differs)."""
    for ns in _ns_samples():
        assert ns_to_ms(ns) == round(ns / 1e6, 6), ns
        assert ns_to_ms(-ns) == round(-ns / 1e6, 6), -ns
        assert ms(ns) == round(ns / 1e6, 6), ns
    assert ms(None) is None


def test_seconds_are_rounded_to_the_nanosecond():
    """ns_to_s is round(ns / 1e9, 9), the deprecated instants in epoch seconds, for every int64."""
    for ns in _ns_samples():
        assert ns_to_s(ns) == round(ns / 1e9, 9), ns
        assert ns_to_s(-ns) == round(-ns / 1e9, 9), -ns


def test_unanswered_has_no_latency():
    row = exchange_row(_ex(status=NO_RESPONSE, response_ts_ns=None, response_size=None))
    assert row["latency_ns"] is None and row["latency_ms"] is None
    assert row["failed"] is True and row["error_codes"] == []


def test_real_capture_fetch_and_produce_rows():
    rows = {}
    names = []
    for ex in analyze_files([QUICK]):
        for r in partition_rows(ex):
            assert tuple(r) == PARTITION_COLUMNS
            rows.setdefault(r["api"], []).append(r)
        names += topic_names(ex)
    produced = sorted((r["partition"], r["records"]) for r in rows["Produce"])
    assert produced == [(0, 13), (1, 12), (2, 13), (3, 12)]  # the 50 records of the script
    fetched = sorted((r["partition"], r["records"], r["lag"]) for r in rows["Fetch"])
    assert fetched == [(0, 13, 13), (1, 12, 12), (2, 13, 13), (3, 12, 12)]
    assert all(r["topic"] == "t1" for r in rows["Fetch"] + rows["Produce"])
    assert {name for _, name in names} == {"t1"}


def test_records_facts_skips_control_and_cut_batches():
    assert records_facts(None) == (0, 0)
    assert records_facts(b"") == (0, 0)
    assert records_facts(b"\x00" * 7) == (7, 0)  # a cut batch: bytes count, records do not


def _counted_from_summaries(data) -> int:
    """The definition records_facts keeps (README, kwire.native.exchange_facts), from the listed summaries."""
    total = 0
    for batch in summarize_records(data, RecordBudget(batches=1 << 30))["batches"]:
        attributes = batch.get("Attributes")
        if batch.get("partial") or "error" in batch or (isinstance(attributes, dict) and attributes.get("IsControl")):
            continue
        total += batch.get("RecordCount") or 0
    return total


def test_records_facts_agree_with_the_batch_summaries():
    rng = random.Random(1212)
    for _ in range(200):
        parts = []
        for i in range(rng.randint(0, 12)):
            kind = rng.random()
            if kind < 0.5:
                parts.append(v2_batch([(b"k", b"v")] * rng.randint(0, 4), base_offset=i, codec=rng.choice((0, 1))))
            elif kind < 0.6:
                parts.append(control_batch(rng.randint(0, 1), 3, base_offset=i))
            elif kind < 0.8:
                parts.append(legacy_message(rng.randint(0, 1), i, b"k", b"v"))
            elif kind < 0.9:
                bad = bytearray(v2_batch([(b"k", b"v")] * 2, base_offset=i))
                bad[-1] ^= 0xFF  # a CRC failure still counts: its header says how many records
                parts.append(bytes(bad))
            else:
                parts.append(legacy_wrapper(1, i, legacy_message(1, 0, b"a", b"b"), 1))
        data = b"".join(parts)
        if rng.random() < 0.3:
            data = data[: rng.randint(0, len(data))]  # a cut tail, or garbage after it
        if rng.random() < 0.1:
            data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
        assert records_facts(data) == (len(data), _counted_from_summaries(data))


def test_records_facts_keep_nothing_per_batch():
    """The issue's case, scaled down: many empty batches once kept one summary dict each."""
    data = v2_batch([]) * 100_000
    tracemalloc.start()
    try:
        assert records_facts(data) == (len(data), 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # summaries of 100,000 batches take ~100 MB


def test_share_fetch_rows_count_acks_and_acquisitions():
    ex = _ex(api_key=78, api="ShareFetch", api_version=1,
             request={"GroupId": "sg", "Topics": [{"TopicId": "X", "TopicName": "t", "Partitions": [
                 {"PartitionIndex": 0, "AcknowledgementBatches": [
                     {"FirstOffset": 10, "LastOffset": 14, "AcknowledgeTypes": [1]},
                     {"FirstOffset": 15, "LastOffset": 17, "AcknowledgeTypes": [2, 3, 0]}]}]}]},
             response={"Responses": [{"TopicId": "X", "TopicName": "t", "Partitions": [
                 {"PartitionIndex": 0, "Records": None}, {"PartitionIndex": 1, "Records": None}]}]})
    ex.extra["share"] = [{"topic": "t", "partition": 0, "acquired": 5, "redelivered": 2},
                         {"topic": "t", "partition": 1, "acquired": 3, "redelivered": 0}]
    rows = {r["partition"]: r for r in partition_rows(ex)}
    assert rows[0]["ack_accept"] == 5 and rows[0]["ack_release"] == 1 and rows[0]["ack_reject"] == 1
    assert rows[0]["ack_gap"] == 1
    assert (rows[0]["acquired"], rows[0]["redelivered"]) == (5, 2)
    assert (rows[1]["acquired"], rows[1]["ack_accept"]) == (3, 0)
    assert rows[0]["group_id"] == "sg" and exchange_row(ex)["group_id"] == "sg"


def test_topic_names_skip_zero_uuid():
    ex = _ex(api_key=3, api="Metadata", api_version=12, response={"Topics": [
        {"TopicId": "AAAAAAAAAAAAAAAAAAAAAA", "Name": "old"}, {"TopicId": "abc", "Name": "t"}, {"Name": "n"}]})
    assert topic_names(ex) == [("abc", "t")]


def test_error_codes_and_failed_agree_with_kwire_query():
    from kwire.kafka.error_codes import error_name
    from kwire.native.exchange_errors import error_codes
    from kwire.query import has_error

    root = Path(__file__).parents[2] / "captures"
    captures = sorted(root.glob("*.pcap*")) + sorted((root / "problems").glob("*.pcap.gz")) + [Path(QUICK)]
    seen = 0
    for capture in captures:
        if capture.name.endswith(".log"):
            continue
        for ex in analyze_files([str(capture)]):
            row = exchange_row(ex)
            expected = sorted(error_name(c) for c in error_codes(ex.response)) if ex.response else []
            if ex.api == "ApiVersions" and expected == ["UNSUPPORTED_VERSION"]:
                assert row["negotiation"]  # version negotiation: neither an error nor a failure
                expected = []
            assert row["error_codes"] == expected
            assert row["failed"] == has_error(ex)
            seen += bool(expected)
    assert seen  # some real errors were compared


def test_error_codes_in_nested_lists():
    # an api kwire has no schema for: the codes are looked for in every value (kwire.native.exchange_errors.error_codes);
    # a known api's are where its schema puts them (tests/render/test_jsonl_fast.py: the same on every capture)
    ex = _ex(api_key=999, api="999", response={"A": [[{"ErrorCode": 3}], [{"X": {"ErrorCode": 0}}]], "B": {"ErrorCode": 1}, "ErrorCode": 0})
    assert exchange_row(ex)["error_codes"] == ["OFFSET_OUT_OF_RANGE", "UNKNOWN_TOPIC_OR_PARTITION"]
