"""duplicate_write and produce_retry's resent records on real recordings (captures/problems dup-write-*),
checked against the clients' own view: the reader's records (a record written twice reaches it at
two offsets), the producer's acknowledgements and the proxy's rewritten answers; and the same findings
from any split of the traffic, merged."""

from __future__ import annotations

from collections import defaultdict

import pytest

from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files
from tests import problems as P

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
