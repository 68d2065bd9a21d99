"""End-to-end latency against the clients' own times, per consumer of a partition, on the recordings of other
clients than the end-to-end one (issue 47): KafkaJS's producer and consumers (captures/problems/end-to-end-kafkajs),
aiokafka's (end-to-end-aiokafka: a group member and an assigned reader), a confluent-kafka ShareConsumer that releases and rejects records (end-to-end-share), the records it is handed again
counted as redeliveries, never as latencies.

The truth (tests/problems.py's client_latencies: the producer's `sent` before each send()/produce() call and its
callback's offset; each consumer's poll returning the record) is the clients', never kwire's output. kwire's figure is
per write (a Produce batch): the latency of a write is compared with the client's time of the write's first record.
"""

from __future__ import annotations

import pytest

from kwire.analytics import Aggregator
from kwire.analytics.end_to_end_doc import deliveries
from kwire.pipeline import analyze_files

from tests import problems as P

FETCH_WAIT_S = 0.5  # KafkaJS's maxWaitTimeInMs (scripts/e2e_kafkajs.js), aiokafka's fetch_max_wait_ms
                    # (scripts/problems_e2e.py); the ShareFetch MaxWaitMs librdkafka asks
SLACK_S = 0.05
SHARE_GROUPS = {"kwire-e2e-workers": "kwire-share-consumer"}  # the share group kwire names -> its client


def _wire(name: str) -> tuple[dict, dict]:
    """consumer client -> {(partition, base offset): latency ns} of its first deliveries, and
    consumer client -> its row of the document's `end_to_end` consumers."""
    agg = Aggregator()
    for ex in analyze_files([str(P.capture(name))]):
        agg.add_exchange(ex)
    per: dict[str, dict] = {}
    for key, found in deliveries(agg.analysis.end_to_end, agg.names):
        if key is not None:
            client = SHARE_GROUPS.get(key[1], key[1])
            per.setdefault(client, {}).update(
                {(key[3], base): ns for base, ns in zip(found["bases"], found["latencies"])})
    rows = {SHARE_GROUPS.get(r["consumer"], r["consumer"]): r for r in agg.document()["end_to_end"]["consumers"]}
    return per, rows


def _compare(name: str, readers: int) -> tuple[dict, dict, dict]:
    clients = P.client_latencies(name)
    wire, rows = _wire(name)
    assert len(clients) == readers, sorted(clients)
    for reader, offsets in clients.items():
        kwire = wire.get(reader)
        assert kwire, reader
        for key, latency_ns in kwire.items():
            assert key in offsets, (reader, key)  # a write's first record: one the client got
            assert abs(latency_ns / 1e9 - offsets[key]) <= FETCH_WAIT_S + SLACK_S, (reader, key, latency_ns, offsets[key])
        for partition in {p for p, _ in offsets}:  # every partition the client read, from its first record
            first = min(o for p, o in offsets if p == partition)
            assert (partition, first) in kwire, (reader, partition)
        assert rows[reader]["unmatched"] == 0
        assert rows[reader]["latency_ms"]["max"] / 1e3 <= max(offsets.values()) + FETCH_WAIT_S + SLACK_S
    return clients, wire, rows


@pytest.mark.parametrize("name", ["end-to-end-kafkajs", "end-to-end-aiokafka"])
def test_consumers_of_two_partitions_match_their_own_times(name):
    clients, wire, rows = _compare(name, 2)
    sends = len(P.of(name, "sent"))
    for reader, offsets in clients.items():
        assert len(offsets) == sends  # each consumer got every record
        assert len(wire[reader]) == sends  # one send a batch: every write delivered once, a latency each
        assert {p for p, _ in wire[reader]} == {0, 1}
        assert rows[reader]["redeliveries"] == 0 and rows[reader]["partitions"] == 2


def test_share_consumer_matches_its_own_times_and_redeliveries_are_not_latencies():
    name = "end-to-end-share"
    clients, wire, rows = _compare(name, 1)
    (reader,) = clients
    got = [e for e in P.of(name, "delivered", reader)]
    again = [e for e in got if e["delivery_count"] > 1]
    assert again and {e["action"] for e in got} >= {"release", "reject", "accept"}
    assert len(clients[reader]) == len({e["offset"] for e in got})  # every record first delivered once
    # every record handed over again (released, so delivered 2 or 3 times) is a redelivery, no latency:
    # each came back in a range of its own, one write
    assert rows[reader]["redeliveries"] == len(again)
    assert rows[reader]["deliveries"] == len(wire[reader])
