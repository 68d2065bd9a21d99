"""End-to-end latency on hostile traffic (issue 47, item 4): Produce answers claiming huge offset ranges,
deliveries of offsets never written, share ranges claiming every offset there is. Each must cost what the
answer carried, give the figures the wire supports, and never a traceback: small captures written from kwire's
schemas (tests/render/hostile.py), read through the pipeline and `kwire stats`.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from kwire.analytics import Aggregator
from kwire.analytics.end_to_end_read import share_reads
from kwire.pipeline import analyze_files
from tests.codec.test_records_encoder import v2_batch
from tests.fuzz.conversation import conversation_pcap
from tests.render.hostile import exchange

TOP = 2**63 - 1


def _produce(corr: int, batch: bytes, base_offset: int, partition: int = 0):
    return exchange(0, 9, corr, "writer", {"Acks": -1, "TimeoutMs": 30000, "TopicData": [
        {"Name": "t", "PartitionData": [{"Index": partition, "Records": batch}]}]},
        {"Responses": [{"Name": "t", "PartitionResponses": [
            {"Index": partition, "ErrorCode": 0, "BaseOffset": base_offset}]}]})


def _fetch(corr: int, client: str, offset: int, records: bytes, partition: int = 0):
    return exchange(1, 12, corr, client, {
        "ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 1 << 20, "IsolationLevel": 0, "SessionId": 0,
        "SessionEpoch": -1, "Topics": [{"Topic": "t", "Partitions": [
            {"Partition": partition, "CurrentLeaderEpoch": 0, "FetchOffset": offset, "LastFetchedEpoch": -1,
             "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20}]}], "ForgottenTopicsData": [], "RackId": ""},
        {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": [
            {"PartitionIndex": partition, "ErrorCode": 0, "HighWatermark": TOP, "LastStableOffset": TOP,
             "LogStartOffset": 0, "AbortedTransactions": [], "PreferredReadReplica": -1, "Records": records}]}]})


def _one(**kw) -> bytes:
    return v2_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, **kw)


def _capture(tmp_path):
    """Writes: offsets 0 (one record), 1 (a batch claiming 2**31 - 1 records: offsets 1 to 2**31 - 1), and one
    at the top of the offsets (base 2**63 - 2, claiming 2**31 - 1 records: past what an int64 holds). Reads:
    `honest` fetches offset 0, then a batch claiming every offset to the top (LastOffsetDelta 2**31 - 1 from
    base 1); `liar` is handed offsets never written (base 2**40, and 2**62 claiming 2**31 - 1 more); `greedy` one
    answer of two batches spanning every offset (bases 0 and 2**63 - 1 - 2**31, the last claiming 2**31 - 1 more)."""
    messages = []
    messages += _produce(2, _one(base_sequence=0), 0)
    messages += _produce(3, _one(base_sequence=1, record_count=2**31 - 1, last_offset_delta=2**31 - 2), 1)
    messages += _produce(4, _one(base_sequence=2, record_count=2**31 - 1), TOP - 1)
    messages += _fetch(5, "honest", 0, _one(base_sequence=0))
    messages += _fetch(6, "honest", 1, _one(base_offset=1, base_sequence=1, last_offset_delta=2**31 - 1))
    messages += _fetch(7, "liar", 0, _one(base_offset=2**40, base_sequence=3))
    messages += _fetch(8, "liar", 0, _one(base_offset=2**62, base_sequence=4, last_offset_delta=2**31 - 1))
    span = _one(base_sequence=0) + _one(base_offset=TOP - 2**31, base_sequence=5, last_offset_delta=2**31 - 1)
    messages += _fetch(9, "greedy", 0, span)
    path = tmp_path / "hostile-e2e.pcap"
    path.write_bytes(conversation_pcap(messages))
    return path


def test_huge_claimed_ranges_give_what_the_wire_supports(tmp_path):
    path = _capture(tmp_path)
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    doc = agg.document()["end_to_end"]
    assert doc["bounds"]["writes"]["seen"] == 3
    rows = {row["consumer"]: row for row in doc["consumers"]}
    assert rows["honest"]["deliveries"] == 2 and rows["honest"]["unmatched"] == 0
    assert rows["honest"]["redeliveries"] == 0
    assert rows["liar"]["deliveries"] == 0 and rows["liar"]["unmatched"] == 2
    assert rows["liar"]["latency_ms"]["max"] is None
    assert rows["greedy"]["deliveries"] == 2  # two batches carried: two writes walked, never all three


def test_kwire_stats_on_it_says_it_without_a_traceback(tmp_path):
    path = _capture(tmp_path)
    done = subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", "-j", "0", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert '"end_to_end"' in done.stdout


def _share_answer(ranges: list[tuple[int, int]], records: bytes):
    return SimpleNamespace(response_ts_ns=5, ts_ns=1, correlation_id=7, broker="10.0.0.9:9092", response={"Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": 0, "Records": records,
         "AcquiredRecords": [{"FirstOffset": a, "LastOffset": b, "DeliveryCount": 1} for a, b in ranges]}]}]})


def test_a_share_range_claiming_every_offset_walks_what_was_carried():
    """1,000 ranges each claiming every offset there is, over 2 batches carried: the walk each range is allowed
    adds up to the batches plus one a range, not 1,000 times two billion."""
    two = _one(base_sequence=0) + _one(base_offset=1, base_sequence=1)
    out: list = []
    share_reads(_share_answer([(0, TOP)] * 1000, two), "g", out)
    assert len(out) == 1000
    assert sum(ob[9] for ob in out) <= 2 + 2 * 1000
    out = []
    share_reads(_share_answer([(0, 9), (10, 10)], _one(base_sequence=0)), "g", out)
    assert [ob[9] for ob in out] == [3, 1]  # one batch carried, two ranges: 1 + 2 to share; the first takes them
