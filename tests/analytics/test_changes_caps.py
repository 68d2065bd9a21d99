"""Changes that cannot be hidden, and a change log within its bounds (issue 49; inputs: tests/hostile3/changes.py).

A destructive request padded past the decoder's entries bound (lowered here so that the inputs stay small)
was `not_kept`: no change, no finding. Now it is read in part and every element is read: the change is
listed and its finding raised with the dangerous entry named, wherever it sits; a request that does not
decode at all is listed by its api; one change of thousands of resources is a bounded entry whose counts
stay whole; the document is the same however the exchanges are split.
"""

from __future__ import annotations

import random

import pytest

from kwire.analytics import Aggregator
from kwire.analytics import changes_read
from kwire.codec import compiler
from kwire.pipeline import analyze_files
from tests.hostile3 import changes as gen

BOUND = 200  # KWIRE_MAX_BODY_ENTRIES for these tests
MAX_RESOURCES = getattr(changes_read, "MAX_RESOURCES", 20)  # resources a change keeps
MAX_DETAIL = getattr(changes_read, "MAX_DETAIL", 20)  # items of each list or map a resource keeps
ALLOW_ALL = "ALLOW User:* ALL on TOPIC:*"


@pytest.fixture
def bound(monkeypatch):
    monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", BOUND)


def _document(path, split: int = 1, seed: int = 0) -> dict:
    exchanges = list(analyze_files([str(path)]))
    random.Random(seed).shuffle(exchanges) if split > 1 else None
    parts = [Aggregator() for _ in range(split)]
    for i, ex in enumerate(exchanges):
        parts[i % split].add_exchange(ex)
    for part in parts[1:]:
        parts[0].merge(part)
    return parts[0].document()


def _admin(doc: dict) -> dict:
    return {f["change"]: f for f in doc["findings"] if f["kind"] == "admin_change"}


@pytest.mark.parametrize("entries", [BOUND - 50, BOUND, BOUND + 1, 4 * BOUND])
@pytest.mark.parametrize("at", ["first", "middle", "last"])
def test_a_padded_destructive_request_is_listed_and_found_whatever_its_size(tmp_path, bound, entries, at):
    path = tmp_path / "padded.pcap"
    gen.padded_acls(path, entries, at)
    doc = _document(path)
    changes = doc["changes"]
    assert changes["count"] == 2 and changes["by_operation"] == {"create_acls": 1, "delete_topics": 1}
    acls, topics = changes["entries"]
    assert acls["resource_count"] == topics["resource_count"] == entries
    assert acls["kind"] == "acl_allow_all" and topics["kind"] == "topic_deleted"
    danger = acls["resources"][acls["makes_kind"][0]]
    assert (danger["principal"], danger["operation"], danger["resource_name"]) == ("User:*", "ALL", "*")
    assert len(acls["resources"]) <= MAX_RESOURCES + 1 and len(topics["resources"]) <= MAX_RESOURCES
    assert sum(changes["by_result"].values()) == 2 * entries  # every resource counted, listed or not
    assert set(changes["by_result"]) <= {"ok", "not_kept"} and changes["failed"] == 0
    found = _admin(doc)
    assert found["acl_allow_all"]["severity"] == "critical" and found["acl_allow_all"]["resources"] == [ALLOW_ALL]
    assert found["acl_allow_all"]["resource_count"] == entries
    assert found["topic_deleted"]["severity"] == "critical" and found["topic_deleted"]["resource_count"] == entries
    if entries > BOUND:
        assert acls["request_outcome"] == topics["request_outcome"] == "kept_in_part"
        assert "kept_in_part" in doc["totals"]["body_outcomes"]


def test_a_padded_request_merges_exactly(tmp_path, bound):
    path = tmp_path / "padded.pcap"
    gen.padded_acls(path, 3 * BOUND, "middle")
    whole = _document(path)
    for split, seed in ((2, 1), (2, 2)):
        parts = _document(path, split, seed)
        assert parts["changes"] == whole["changes"] and parts["findings"] == whole["findings"]


def test_a_change_request_that_does_not_decode_is_listed_by_its_api(tmp_path):
    path = tmp_path / "unreadable.pcap"
    gen.unreadable(path)
    doc = _document(path)
    entries = doc["changes"]["entries"]
    assert [(e["api"], e["operation"], e["kind"], e["request_outcome"]) for e in entries] == [
        ("DeleteTopics", "delete_topics", "topic_deleted", "malformed"),
        ("CreateAcls", "create_acls", "acl_allow_all", "malformed")]
    for e in entries:
        assert e["client_id"] == "ops-tool" and e["result"] == ["ok"] and e["resource_count"] is None
        assert e["resources"][0]["type"] == "request" and "malformed at" in e["resources"][0]["not_read"]
    found = _admin(doc)
    assert set(found) == {"topic_deleted", "acl_allow_all"}
    for f in found.values():
        assert f["severity"] == "critical" and f["not_read"] == 1 and "could not read" in f["summary"]
        assert "it may have" in f["summary"]


def test_one_change_of_thousands_of_resources_is_a_bounded_entry(tmp_path):
    path = tmp_path / "huge.pcap"
    gen.huge_acls(path, 1)  # 3,000 bindings
    doc = _document(path)
    (change,) = doc["changes"]["entries"]
    assert len(change["resources"]) == len(change["result"]) == MAX_RESOURCES
    assert change["resource_count"] == 3_000 and change["unlisted_results"] == {"ok": 3_000 - MAX_RESOURCES}
    assert doc["changes"]["by_result"] == {"ok": 3_000} and change["kind"] is None and change["makes_kind"] == []


def test_a_resource_keeps_a_bounded_detail(tmp_path):
    """An OffsetDelete of a topic's 5,000 partitions and a CreateTopics whose assignment names 5,000 replicas:
    each resource lists MAX_DETAIL items of each list or map, at any depth, and counts the rest."""
    from tests.render.hostile import exchange

    frames = exchange(47, 0, 1, "ops-tool", {"GroupId": "g", "Topics": [
        {"Name": "t", "Partitions": [{"PartitionIndex": p} for p in range(5_000)]}]},
        {"ErrorCode": 0, "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0}]}]})
    frames += exchange(19, 7, 2, "ops-tool", {"Topics": [{"Name": "big", "NumPartitions": -1, "ReplicationFactor": -1,
                                                        "Assignments": [{"PartitionIndex": 0,
                                                                         "BrokerIds": list(range(5_000))}]
                                                        + [{"PartitionIndex": p, "BrokerIds": [1, 2]}
                                                           for p in range(1, 100)],
                                                        "Configs": []}], "timeoutMs": 1000},
                       {"Topics": [{"Name": "big", "ErrorCode": 0}]})
    path = tmp_path / "detail.pcap"
    gen._write(path, [frames])
    deleted, created = _document(path)["changes"]["entries"]
    (res,) = deleted["resources"]
    assert res["partitions"] == list(range(MAX_DETAIL)) and res["unlisted"] == {"partitions": 5_000 - MAX_DETAIL}
    (res,) = created["resources"]
    assert len(res["assignments"]) == MAX_DETAIL and res["assignments"]["0"] == list(range(MAX_DETAIL))
    assert res["unlisted"] == {"assignments": 100 - MAX_DETAIL, "assignments.0": 5_000 - MAX_DETAIL}


def test_the_apis_read_in_part_are_the_ones_the_change_log_reads():
    from kwire.analytics.changes_apis import READERS
    from kwire.codec.overlay import READ_IN_PART

    assert READ_IN_PART == set(READERS)


def test_padded_requests_give_one_document_whatever_the_workers(tmp_path, bound, monkeypatch):
    """Read in part in worker processes (forked: the lowered bound holds there too) and merged: the document
    one process makes."""
    from tests.test_parallel import same_document_whatever_the_workers

    path = tmp_path / "padded.pcap"
    gen.padded_acls(path, 4 * BOUND, "middle")
    doc = same_document_whatever_the_workers(path, monkeypatch)
    assert '"kept_in_part"' in doc and '"acl_allow_all"' in doc
