"""duplicate_write and produce_retry's resent records on real recordings (captures/problems dup-write-*),
checked against the clients' own view: the reader's records (a record written twice reaches it at
two offsets), the producer's acknowledgements and the proxy's rewritten answers; and the same findings
from any split of the traffic, merged."""

from __future__ import annotations

import struct
from collections import defaultdict
from pathlib import Path

import pytest

from kwire.analytics import Aggregator, resend_state
from kwire.capture.files import read_captures
from kwire.codec.record_prints import batch_heads
from kwire.model import PAIRED
from kwire.pipeline import analyze_files
from tests import problems as P
from tests.spark.rotate import interleaved_copies

WRITTEN_TWICE = ("dup-write-librdkafka", "dup-write-kafka-python")
ALL = WRITTEN_TWICE + ("dup-write-idempotent",)
ERROR_NAMES = {6: "NOT_LEADER_OR_FOLLOWER"}  # Kafka's error code table, for the codes the proxy writes


def read_twice(name: str) -> dict[str, tuple]:
    """key -> (topic, partition, sorted offsets) of every record the reader got at more than one offset."""
    seen: dict[tuple, list] = defaultdict(list)
    for e in P.of(name, "consumed", "kwire-payments-reader"):
        seen[(e["topic"], e["partition"], e["key"], e["value"], e["timestamp"])].append(e["offset"])
    return {k[2]: (k[0], k[1], sorted(v)) for k, v in seen.items() if len(v) > 1}


@pytest.mark.parametrize("name", WRITTEN_TWICE)
def test_duplicate_write_names_both_offsets_the_producer_and_the_error(name):
    rewrites = P.of(name, "proxy_produce_error")
    twice = read_twice(name)
    assert rewrites and len(twice) == len(rewrites)  # the consumer's own view: each rewrite, one record twice
    found = P.findings(name, "duplicate_write")
    assert len(found) == len(rewrites)
    assert sorted(tuple(f["offsets"][0]) for f in found) == sorted(tuple(t[2]) for t in twice.values())
    acked = {e["key"]: e["offset"] for e in P.of(name, "acked")}
    for f, rewrite in zip(sorted(found, key=lambda f: f["start"]), sorted(rewrites, key=lambda e: e["ts"])):
        key = next(k for k, t in twice.items() if t[2] == f["offsets"][0])
        topic, partition, offsets = twice[key]
        assert (f["topic"], f["partition"], f["records"], f["read_twice"]) == (topic, partition, 1, 1)
        assert f["client_id"] == rewrite["client_id"] and f["error"] == ERROR_NAMES[rewrite["error_code"]]
        assert f["offsets"] == [[rewrite["stored_base_offset"], acked[key]]]  # broker's first write, producer's ack
        produces = [e for e in f["evidence"] if e["api"] == "Produce"]
        assert produces[0]["correlation_id"] == rewrite["correlation_id"] and len(produces) == 2
        assert {e["client"] for e in produces} == {f["client"]}
        assert any(e["api"] == "Fetch" for e in f["evidence"])
        assert abs(f["start"] - rewrite["ts"]) < 2
    retry = [f for f in P.findings(name, "produce_retry") if f["topic"] == "kwire-payments"]
    assert len(retry) == 1 and retry[0]["records"] == len(twice) and not retry[0]["idempotent"]


def test_idempotent_producer_under_the_same_fault_writes_once():
    name = "dup-write-idempotent"
    assert P.of(name, "proxy_produce_error") and not read_twice(name)
    assert not P.findings(name, "duplicate_write")
    [retry] = P.findings(name, "produce_retry")
    assert retry["idempotent"] and retry["producer_id"] == P.acquired_pid(name, "kwire-safe-payer")
    assert retry["records"] == 0 and "drops its duplicates" in retry["summary"]


def _aggregate(exchanges) -> Aggregator:
    agg = Aggregator()
    for ex in exchanges:
        agg.add_exchange(ex)
    return agg


def _merged(parts) -> list[dict]:
    merged = Aggregator()
    for part in reversed(parts):
        merged.merge(_aggregate(part))
    return merged.document()["findings"]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("split", ["connections apart", "apis apart", "chunks of 1", "chunks of 7", "chunks of 40"])
def test_splits_merge_to_the_same_findings(name, split):
    """Parts that keep each connection's exchanges in capture order (spark: a connection's exchanges
    in batches of consecutive ones; stats --jobs: chunks in capture order, Fetch in the main process)
    merge to the whole's findings, though the failed send, its resend and the Fetches that read them
    fall in different parts."""
    exchanges = list(analyze_files([str(P.capture(name))]))
    if split == "connections apart":
        by_connection: dict = defaultdict(list)
        for ex in exchanges:
            by_connection[(ex.client, ex.broker)].append(ex)
        parts = list(by_connection.values())
    elif split == "apis apart":
        parts = [[ex for ex in exchanges if ex.api == "Produce"], [ex for ex in exchanges if ex.api != "Produce"]]
    else:
        size = int(split.split()[-1])
        parts = [exchanges[i:i + size] for i in range(0, len(exchanges), size)]
    whole = P.document(name)["findings"]
    assert _merged(parts) == whole
    assert any(f["kind"] == "duplicate_write" for f in whole) == (name in WRITTEN_TWICE)


@pytest.mark.parametrize("name", WRITTEN_TWICE)
def test_a_cut_anywhere_near_a_failed_send_merges_to_the_same_findings(name):
    exchanges = list(analyze_files([str(P.capture(name))]))
    whole = P.document(name)["findings"]
    failed = [i for i, ex in enumerate(exchanges) if _failed_produce(ex)]
    assert failed
    for at in sorted({i + d for i in failed for d in range(-3, 12)} & set(range(1, len(exchanges)))):
        assert _merged([exchanges[:at], exchanges[at:]]) == whole, at


def _failed_produce(ex) -> bool:
    return ex.api == "Produce" and any(p.get("ErrorCode") for t in (ex.response or {}).get("Responses") or ()
                                       for p in t.get("PartitionResponses") or ())


# A real librdkafka producer (not idempotent) cut mid-stream: 3,038 Produce exchanges on one
# connection, the last 124 unanswered where the capture ends (tests/kafka).
BUSY = Path(__file__).parents[1] / "kafka" / "data" / "midstream-busy-producer.pcap.gz"


def _classic(packets) -> bytes:
    """Ethernet packets as a little-endian microsecond classic pcap (what interleaved_copies reads)."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)]
    for p in packets:
        sec, usec = divmod(p.ts_ns // 1000, 1_000_000)
        out.append(struct.pack("<IIII", sec, usec, len(p.data), p.wire_len) + p.data)
    return b"".join(out)


def _busy_copies(tmp_path: Path) -> list:
    """Four copies of the busy producer's traffic, interleaved 3 ms apart on their own connections, as
    scripts/spark_archive.sh builds the Spark archive: the same producer (client id) sends every record
    four times, and each record of the 124 unanswered requests is a failed send sent again."""
    one = tmp_path / "busy.pcap"
    one.write_bytes(_classic(read_captures([BUSY])))
    return list(analyze_files([str(interleaved_copies(one, tmp_path / "busy4.pcap", 4))]))


def _unanswered_records(exchanges) -> int:
    """Records of the Produce requests of one copy that got no answer, from their batch headers."""
    client = min(ex.client for ex in exchanges if ex.api == "Produce")
    return sum(head[12] for ex in exchanges if ex.api == "Produce" and ex.client == client and ex.status != PAIRED
               for t in ex.request["TopicData"] for p in t["PartitionData"]
               for _, _, head in batch_heads(p["Records"].data))


def _in_chunks(exchanges, size: int, parts: int) -> list[list]:
    """Each connection's exchanges in chunks of `size` consecutive ones, dealt round robin to `parts`,
    each part in capture order: how kwire spark's decode stage deals a busy connection."""
    by_connection: dict = defaultdict(list)
    for ex in exchanges:
        by_connection[(ex.client, ex.broker)].append(ex)
    dealt: list[list] = [[] for _ in range(parts)]
    chunks = [c[i:i + size] for c in by_connection.values() for i in range(0, len(c), size)]
    for i, chunk in enumerate(chunks):
        dealt[i % parts] += chunk
    return [sorted(part, key=lambda ex: ex.ts_ns) for part in dealt]


def _retry(findings) -> dict:
    [retry] = [f for f in findings if f["kind"] == "produce_retry" and f["records"]]
    return retry


def test_copies_of_a_producer_count_every_record_sent_again(tmp_path):
    exchanges = _busy_copies(tmp_path)
    failed = _unanswered_records(exchanges)
    assert failed == 124
    whole = _aggregate(exchanges).document()["findings"]
    retry = _retry(whole)
    assert retry["records"] == failed and "sample" not in retry["summary"]
    assert _merged(_in_chunks(exchanges, 100, 3)) == whole


@pytest.mark.parametrize("size", [100, 512])
def test_records_read_in_one_part_only_never_crowd_out_failed_ones(tmp_path, monkeypatch, size):
    """Past MAX_RECORDS records of failed sends, the count is over a sample of them: the same in any split.
    A part reads batches the whole does not (a connection's first batch there, to look for resends of
    failures another part saw); they once took places in the sample, and the split counted fewer
    (the Spark archive: 1,261 against 13,263)."""
    monkeypatch.setattr(resend_state, "MAX_RECORDS", 64)
    exchanges = _busy_copies(tmp_path)
    whole = _aggregate(exchanges).document()["findings"]
    assert _merged(_in_chunks(exchanges, size, 3)) == whole
    retry = _retry(whole)
    assert retry["records"] == 64 and "of a sample of 64 records of failed sends" in retry["summary"]
