"""The rules over topics, committed offsets and groups (validate_only_created, offset_metadata_not_kept,
consumer_group_describe_classic): on Tansu's recordings where the clients' own results show the fault, on the
mock's recording of the same calls where they show none, on the Kafka capture, and on observations made here
for the silences and the merges."""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.analytics import tags as T
from kwire.analytics.analysis import Analysis
from kwire.analytics.rules_history import MAX_COMMITS
from kwire.analytics.rules_read_admin import COMMIT, CREATED, DESCRIBED, EXISTS, JOINED, READ, SAID, TXN_COMMIT, VALIDATED
from tests import problems as P
from tests.analytics.test_rules import _document, _rules

ROOT = Path(__file__).resolve().parents[2]
ADMIN_RULES = ("validate_only_created", "offset_metadata_not_kept", "consumer_group_describe_classic")


def _rule(doc: dict, rule: str) -> list[dict]:
    return [f for f in _rules(doc) if f["rule"] == rule]


FAULTY = ["broker-rules", "broker-rules-java"]  # Tansu 0.6.0 with confluent-kafka, with the Java client


@pytest.mark.parametrize("name", FAULTY)
def test_a_validate_only_create_that_made_the_topic(name):
    """Tansu answers the validate-only create, then lists the topic; the admin's second validate-only create
    fails (TOPIC_ALREADY_EXISTS): the client's own results."""
    first, second = P.of(name, "create_topics_validate_only")
    assert first["ok"] and not second["ok"] and "already exists" in second["error"]
    listed = P.first(name, "listed_topics")
    assert listed["has_validated"]
    found = _rule(P.document(name), "validate_only_created")
    assert len(found) == 1 and found[0]["side"] == "broker" and found[0]["count"] == 1
    assert found[0]["detail"].startswith(f"{first['subject']}: ")
    made, seen = found[0]["evidence"]
    assert (made["api"], seen["api"]) == ("CreateTopics", "Metadata")
    assert made["ts"] <= first["ts"] and seen["ts"] <= listed["ts"]


@pytest.mark.parametrize("name", FAULTY)
def test_metadata_committed_and_lost(name):
    committed, read = P.first(name, "offset_committed"), P.first(name, "offset_read")
    # the fault, as the consumer saw it (the Java client reads a null metadata as the empty string)
    assert read["offset"] == committed["offset"] and read["metadata"] in (None, "")
    found = _rule(P.document(name), "offset_metadata_not_kept")
    assert len(found) == 1 and found[0]["count"] == 1
    detail = found[0]["detail"]
    assert detail.startswith(f"{committed['group']} {committed['topic']}[{committed['partition']}]: committed offset "
                             f"{committed['offset']} with metadata '{committed['metadata']}")
    assert detail.endswith("answered it with null")
    assert [e["api"] for e in found[0]["evidence"]] == ["OffsetCommit", "OffsetFetch"]
    assert found[0]["severity"] == "warning"  # the application's metadata is gone


EMPTY_AS_NULL = ["admin/kafka-python-tansu.pcap", "changes/confluent-tansu.pcap", "problems/member-removed.pcap.gz"]


@pytest.mark.parametrize("capture", EMPTY_AS_NULL)
def test_empty_metadata_read_back_as_null_is_info(capture):
    """Tansu answers null for the empty string clients commit by default: a fault, harmless to Kafka's clients."""
    found = _rule(_document(ROOT / "captures" / capture), "offset_metadata_not_kept")
    assert found and all(f["severity"] == "info" and "harmless" in f["summary"] for f in found)
    assert all("with metadata '', OffsetFetch answered it with null" in f["detail"] for f in found)


def _classic_described(name: str) -> str:
    """The group the client listed as classic and then described as a consumer-protocol group (its own results)."""
    described = P.first(name, "describe_consumer_groups")
    group = described["subject"]
    assert described["ok"]
    if name.endswith("-java"):
        assert f"{group}=Classic" in P.first(name, "list_consumer_groups")["result"].split()
        assert described["result"].startswith("type=Consumer ")
    else:
        assert P.first(name, "listed_groups")["groups"][group] == "ConsumerGroupType.CLASSIC"
        assert described["result"]["type"] == "ConsumerGroupType.CONSUMER"
    return group


@pytest.mark.parametrize("name", FAULTY)
def test_a_classic_group_described_as_a_consumer_group(name):
    group = _classic_described(name)
    found = _rule(P.document(name), "consumer_group_describe_classic")
    assert len(found) == 1 and found[0]["detail"].startswith(f"{group}: ListGroups said GroupType classic")
    assert [e["api"] for e in found[0]["evidence"]] == ["ListGroups", "ConsumerGroupDescribe"]


@pytest.mark.parametrize("name", ["admin/confluent-tansu.pcap", "changes/confluent-tansu.pcap"])
def test_the_committed_tansu_captures_show_the_classic_group_described(name):
    path = ROOT / "captures" / name
    truth = [line for line in Path(f"{path}.truth.jsonl").read_text().splitlines() if '"describe_consumer_groups"' in line]
    assert truth and '"type": "CONSUMER"' in truth[0]  # what the client made of Tansu's answer
    assert len(_rule(_document(path), "consumer_group_describe_classic")) == 1


def test_the_mock_breaks_none_of_them():
    """The same calls on the mock: the metadata comes back as committed, the topic is never listed."""
    assert P.first("broker-rules-mock", "offset_read")["metadata"] == P.first("broker-rules-mock", "offset_committed")[
        "metadata"]
    assert not any(e["has_validated"] for e in P.of("broker-rules-mock", "listed_topics"))
    assert [f for f in _rules(P.document("broker-rules-mock")) if f["rule"] in ADMIN_RULES] == []


def test_apache_kafka_breaks_none_of_them():
    doc = _document(ROOT / "captures" / "kraft" / "kraft-quorum.pcap")
    assert [f for f in _rules(doc) if f["rule"] in ADMIN_RULES] == []


# ---- observations made here: the silences, the bounds, the merges

EV = ("10.0.0.1:5000", "10.0.0.2:9092")


def _ev(ts, corr, api):
    return (ts, *EV, corr, api)


def _row(ts, corr, api):
    return {"ts_ns": ts, "request_ts_ns": ts, "response_ts_ns": ts + 1, "client": EV[0], "broker": EV[1],
            "client_id": "c", "api_key": 0, "api": api, "api_version": 0, "correlation_id": corr, "status": "paired",
            "connection_id": 1, "error_codes": [], "latency_ns": 1, "evidence": _ev(ts, corr, api)}


def _feed(analysis, obs):
    for ob in obs:
        ts, corr, api = ob[-1][0], ob[-1][3], ob[-1][4]
        analysis.add(_row(ts, corr, api), [ob])


def _topic(what, ts, corr, name="t", answered=True):
    api = "Metadata" if what in (EXISTS, "auto") else "CreateTopics"
    return (T.RULE_TOPIC, what, ts, ts + 1 if answered else None, (name,), _ev(ts, corr, api))


def _found(analysis, rule):
    return [f for f in analysis.findings({}, None, None) if f.get("rule") == rule]


def test_a_topic_created_in_between_or_listed_before_is_no_finding():
    broken = [_topic(VALIDATED, 100, 1), _topic(EXISTS, 200, 2)]
    assert len(_found(_fed(broken), "validate_only_created")) == 1
    assert _found(_fed(broken + [_topic(CREATED, 150, 3, answered=False)]), "validate_only_created") == []
    assert _found(_fed(broken + [_topic("auto", 150, 3, answered=False)]), "validate_only_created") == []
    assert _found(_fed([_topic(EXISTS, 50, 2), _topic(VALIDATED, 100, 1)]), "validate_only_created") == []


def _fed(obs) -> Analysis:
    analysis = Analysis()
    _feed(analysis, obs)
    return analysis


def _offset(what, ts, corr, offset, metadata, answered=True):
    api = "OffsetFetch" if what == READ else "TxnOffsetCommit" if what == TXN_COMMIT else "OffsetCommit"
    return (T.RULE_OFFSET, what, "g", ts, ts + 10 if answered else None, (("t", 0, offset, metadata),),
            _ev(ts, corr, api))


def test_metadata_is_compared_with_the_last_commit_only_when_nothing_may_be_between():
    lost = [_offset(COMMIT, 100, 1, 5, "m"), _offset(READ, 200, 2, 5, None)]
    assert len(_found(_fed(lost), "offset_metadata_not_kept")) == 1
    assert _found(_fed([_offset(COMMIT, 100, 1, 5, "m"), _offset(READ, 200, 2, 5, "m")]),
                  "offset_metadata_not_kept") == []
    assert _found(_fed([_offset(COMMIT, 100, 1, 5, None), _offset(READ, 200, 2, 5, "")]),
                  "offset_metadata_not_kept") == []  # null committed: Kafka keeps the empty string
    assert _found(_fed(lost + [_offset("uncertain", 150, 3, 6, None, answered=False)]),
                  "offset_metadata_not_kept") == []  # a commit nobody answered may have applied
    assert _found(_fed(lost + [_offset(COMMIT, 195, 3, 5, "m")]), "offset_metadata_not_kept") == []  # answered
    # while the OffsetFetch was asked
    aborted = [_offset(COMMIT, 50, 3, 5, ""), _offset(TXN_COMMIT, 100, 1, 5, "m"), _offset(READ, 200, 2, 5, "")]
    assert _found(_fed(aborted), "offset_metadata_not_kept") == []  # the transaction may have aborted


def test_commits_past_the_first_ones_kept_silence_the_reads_after_them():
    commits = [_offset(COMMIT, 100 + 20 * n, n + 1, n, "m") for n in range(MAX_COMMITS + 1)]
    # the read gives the last kept commit's offset; the commit dropped (offset MAX_COMMITS) came between
    read = _offset(READ, 10_000, 99, MAX_COMMITS - 1, None)
    assert _found(_fed(commits + [read]), "offset_metadata_not_kept") == []
    fewer = [_offset(READ, 10_000, 99, MAX_COMMITS - 2, None)]  # nothing dropped: the last commit is known
    assert len(_found(_fed(commits[:MAX_COMMITS - 1] + fewer), "offset_metadata_not_kept")) == 1


def _group(what, ts, corr, value):
    api = {SAID: "ListGroups", JOINED: "ConsumerGroupHeartbeat", DESCRIBED: "ConsumerGroupDescribe"}[what]
    return (T.RULE_GROUP, what, ts, None if what == JOINED else ts + 1, (("g", value),), _ev(ts, corr, api))


def test_a_group_described_is_classic_only_by_the_brokers_own_listing():
    broken = [_group(SAID, 100, 1, "classic"), _group(DESCRIBED, 200, 2, "Empty")]
    assert len(_found(_fed(broken), "consumer_group_describe_classic")) == 1
    assert _found(_fed(broken + [_group(JOINED, 150, 3, None)]), "consumer_group_describe_classic") == []
    assert _found(_fed(broken + [_group(SAID, 150, 3, "consumer")]), "consumer_group_describe_classic") == []
    assert _found(_fed([_group(DESCRIBED, 200, 2, "Empty")]), "consumer_group_describe_classic") == []


def test_the_findings_are_the_same_whichever_way_the_observations_are_split():
    obs = [_topic(VALIDATED, 100, 1), _offset(COMMIT, 110, 2, 5, "m"), _group(SAID, 120, 3, "classic"),
           _topic(EXISTS, 200, 4), _offset(READ, 210, 5, 5, None), _group(DESCRIBED, 220, 6, "Empty")]
    whole = _fed(obs)
    for cut in range(1, len(obs)):
        first, second = _fed(obs[cut:]), _fed(obs[:cut])  # the later half first
        first.merge(second)
        for rule in ("validate_only_created", "offset_metadata_not_kept", "consumer_group_describe_classic"):
            assert _found(first, rule) == _found(whole, rule) and len(_found(whole, rule)) == 1, (cut, rule)
