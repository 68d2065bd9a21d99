"""kwire.native.exchange_enrich: topic ids get their names in every api and version, found by the schemas' marks.

The checks here do not use the marks: they look for Kafka's own field names ("TopicId", and "Topic",
"Name", "TopicName" beside it) in bodies decoded from random valid encodings of every (api, kind,
version) kwire has a schema for. So a schema whose topic id is left unmarked, or an api the Enricher
skips, fails here.
"""

from __future__ import annotations

import random

import pytest

from kwire.codec.compiler import decoder_for
from kwire.codec.schemas import all_schemas
from kwire.native.exchange_enrich import Enricher, enriched, topic_pairs
from kwire.kafka.apis import APIS
from kwire.model import Exchange
from tests.fuzz.targets import encode

CASES = [(schema, v) for schema in all_schemas().values()
         for v in range(schema.valid.lo, schema.valid.hi + 1)]


def _dicts(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _dicts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _dicts(item)


def _topic_ids(body) -> set[str]:
    return {d["TopicId"] for d in _dicts(body) if isinstance(d.get("TopicId"), str)}


def _metadata_naming(ids) -> Exchange:
    topics = [{"ErrorCode": 0, "Name": f"topic-{tid}", "TopicId": tid, "Partitions": []} for tid in sorted(ids)]
    return Exchange(1, "c", "b", "paired", 1, api_key=3, api="Metadata", api_version=12,
                    request={"Topics": None}, response={"Brokers": [], "Topics": topics})


def _decoded(schema, version, seed):
    body = encode(schema, version, random.Random(seed))
    decoded, _ = decoder_for(schema, version)(body)
    return decoded


def _exchange(schema, version, decoded) -> Exchange:
    side = {"request": decoded} if schema.kind == "request" else {"response": decoded}
    return Exchange(2, "c", "b", "paired", 2, api_key=schema.api_key, api=APIS[schema.api_key].name,
                    api_version=version, **side)


@pytest.mark.parametrize("schema,version", CASES, ids=[f"{s.name}-v{v}" for s, v in CASES])
def test_every_topic_id_gets_the_name_a_metadata_answer_gave_it(schema, version):
    for seed in range(6):
        decoded = _decoded(schema, version, seed)
        ids = _topic_ids(decoded)
        enricher = Enricher()
        enricher.enrich(_metadata_naming(ids))
        # structs that name their topic themselves (TopicName is a field of the group describes)
        named_by_wire = {id(d) for d in _dicts(decoded)
                         if d.get("Topic") or d.get("Name") or "TopicName" in d}
        ex = _exchange(schema, version, decoded)
        enricher.enrich(ex)
        body = ex.request if schema.kind == "request" else ex.response
        for d in _dicts(body):
            tid = d.get("TopicId")
            if isinstance(tid, str) and id(d) not in named_by_wire:
                assert d.get("TopicName") == f"topic-{tid}", (schema.name, version, d)
        if ids:
            assert enriched(schema.api_key, version), (schema.name, version)


@pytest.mark.parametrize("schema,version", CASES, ids=[f"{s.name}-v{v}" for s, v in CASES])
def test_what_the_enricher_touches_is_declared_enriched(schema, version):
    """kwire.parallel decodes exchanges that are not `enriched` in worker processes, away from the
    Enricher's state: the Enricher must leave them alone."""
    for seed in range(4):
        decoded = _decoded(schema, version, seed)
        enricher = Enricher()
        enricher.topic_names.update({tid: "t" for tid in _topic_ids(decoded)})
        ex = _exchange(schema, version, decoded)
        before = (repr(ex.request), repr(ex.response), dict(enricher.topic_names), dict(enricher.fetch_offsets))
        enricher.enrich(ex)
        after = (repr(ex.request), repr(ex.response), dict(enricher.topic_names), dict(enricher.fetch_offsets))
        if before != after or ex.extra:
            assert enriched(schema.api_key, version), (schema.name, version)


def test_answers_that_state_name_and_id_teach_them():
    assert topic_pairs(3, 12, {"Topics": [{"Name": "t", "TopicId": "abc", "Partitions": []},
                                          {"Name": "z", "TopicId": "AAAAAAAAAAAAAAAAAAAAAA"}]}) == [("abc", "t")]
    # CreateTopics v7 answers with both; v4 has no ids
    assert topic_pairs(19, 7, {"Topics": [{"Name": "new", "TopicId": "xyz"}]}) == [("xyz", "new")]
    assert topic_pairs(19, 4, {"Topics": [{"Name": "new"}]}) == []
    # a Fetch answer names topics by id only: it teaches nothing
    assert topic_pairs(1, 13, {"Responses": [{"TopicId": "abc", "Partitions": []}]}) == []


def test_produce_v13_and_the_heartbeats_get_names():
    enricher = Enricher()
    enricher.enrich(_metadata_naming({"abc"}))
    produce = Exchange(3, "c", "b", "paired", 3, api_key=0, api="Produce", api_version=13,
                       request={"TransactionalId": None, "Acks": -1, "TimeoutMs": 1,
                                "TopicData": [{"TopicId": "abc", "PartitionData": []}]})
    enricher.enrich(produce)
    assert produce.request["TopicData"][0] == {"TopicId": "abc", "TopicName": "topic-abc", "PartitionData": []}
    heartbeat = Exchange(4, "c", "b", "paired", 4, api_key=68, api="ConsumerGroupHeartbeat", api_version=0,
                         response={"Assignment": {"TopicPartitions": [{"TopicId": "abc", "Partitions": [0]}]}})
    enricher.enrich(heartbeat)
    assert heartbeat.response["Assignment"]["TopicPartitions"][0]["TopicName"] == "topic-abc"
    assert not enriched(0, 9) and enriched(0, 13) and enriched(1, 4) and not enriched(12, 4)
