"""kwire.query: the exchange filters of inspect and stats, on real captures and on crafted bodies."""

from __future__ import annotations

from pathlib import Path

from kwire.model import Exchange
from kwire.pipeline import analyze_files
from kwire.query import ExchangeFilter, topics_of

CAPTURES = Path(__file__).parent.parent / "captures"


def _ex(api_key, api, version, request=None, response=None) -> Exchange:
    return Exchange(1, "c", "b", "paired", 1, api_key=api_key, api=api, api_version=version,
                    request=request, response=response)


def test_topic_matches_topic_fields_only():
    join = _ex(11, "JoinGroup", 5, request={"GroupId": "g", "SessionTimeoutMs": 1, "RebalanceTimeoutMs": 1,
                                             "MemberId": "", "GroupInstanceId": None, "ProtocolType": "consumer",
                                             "Protocols": [{"Name": "range", "Metadata": b""}]})
    configs = _ex(32, "DescribeConfigs", 4, response={"ThrottleTimeMs": 0, "Results": [{
        "ErrorCode": 0, "ErrorMessage": None, "ResourceType": 2, "ResourceName": "orders",
        "Configs": [{"Name": "retention.ms", "Value": "1"}]}]})
    assert not ExchangeFilter(topics=frozenset({"range"}))(join)
    assert not ExchangeFilter(topics=frozenset({"retention.ms"}))(configs)
    assert topics_of(join) == set()


def test_topic_matches_produce_v13_by_the_name_metadata_gave_its_id():
    produce = _ex(0, "Produce", 13, request={"TransactionalId": None, "Acks": 1, "TimeoutMs": 1, "TopicData": [
        {"TopicId": "abc", "TopicName": "orders", "PartitionData": []}]})
    assert ExchangeFilter(topics=frozenset({"orders"}))(produce)
    assert ExchangeFilter(topics=frozenset({"abc"}))(produce)
    assert not ExchangeFilter(topics=frozenset({"other"}))(produce)


def test_topic_filter_on_a_real_capture():
    exchanges = list(analyze_files([CAPTURES / "produce-consume-zstd.pcap"]))
    topics = set().union(*(topics_of(ex) for ex in exchanges))
    assert topics, "the capture names its topic"
    assert "AAAAAAAAAAAAAAAAAAAAAA" not in topics  # the zero id (no topic) is nobody's
    topic = next(t for t in topics if t.startswith("kwire-"))
    keep = ExchangeFilter(topics=frozenset({topic}))
    kept = [ex for ex in exchanges if keep(ex)]
    assert kept and {ex.api for ex in kept} >= {"Produce", "Fetch"}
    assert all(topic in topics_of(ex) for ex in kept)


# ---- selection: partitions, hosts --------------------------------------------------------------------


def test_partitions_under_each_topic_struct():
    from kwire.query import topic_partitions

    offset_fetch = _ex(9, "OffsetFetch", 8, request={"Groups": [{"GroupId": "g", "Topics": [
        {"Name": "orders", "PartitionIndexes": [4, 5]}, {"Name": "audit", "PartitionIndexes": [0]}]}]})
    assert [(t.label, t.partitions) for t in topic_partitions(offset_fetch)] == [("orders", (4, 5)), ("audit", (0,))]
    assert ExchangeFilter(partitions=frozenset({5}))(offset_fetch)
    assert not ExchangeFilter(partitions=frozenset({5}), topics=frozenset({"audit"}))(offset_fetch)
    assert ExchangeFilter(partitions=frozenset({0}), topics=frozenset({"audit"}))(offset_fetch)
    produce = _ex(0, "Produce", 13, request={"TransactionalId": None, "Acks": 1, "TimeoutMs": 1, "TopicData": [
        {"TopicId": "abc", "TopicName": "orders", "PartitionData": [{"Index": 2, "Records": None}]}]},
        response={"Responses": [{"TopicId": "abc", "PartitionResponses": [{"Index": 3, "ErrorCode": 0}]}]})
    (entry,) = topic_partitions(produce)
    assert entry.names == {"abc", "orders"} and entry.partitions == (2, 3)
    assert ExchangeFilter(partitions=frozenset({3}), topics=frozenset({"orders"}))(produce)
    join = _ex(11, "JoinGroup", 5, request={"GroupId": "g", "Protocols": [{"Name": "range", "Metadata": b""}]})
    assert topic_partitions(join) == [] and not ExchangeFilter(partitions=frozenset({0}))(join)


def test_hosts():
    import pytest

    from kwire.query import parse_host

    ex = Exchange(1, "10.0.0.7:50412", "[fd00::2]:9092", "paired", 1, api_key=18, api="ApiVersions", api_version=3)
    for spec, hit in (("10.0.0.7", True), ("10.0.0.7:50412", True), ("10.0.0.7:50413", False), ("10.0.0.0/8", True),
                      ("fd00::2", True), ("[fd00::2]:9092", True), ("[fd00::2]:9093", False), ("fd00::/8", True),
                      ("10.0.0.8", False), ("::1", False)):
        assert ExchangeFilter(hosts=(parse_host(spec),))(ex) is hit, spec
    for bad in ("kafka-1", "10.0.0.7:", "10.0.0.7:70000", "[fd00::2", "[fd00::2]x", "1.2.3.4.5"):
        with pytest.raises(ValueError):
            parse_host(bad)


def test_min_latency_keeps_requests_unanswered_for_longer_than_the_bound():
    waited = Exchange(1, "c", "b", "no_response", 9, api_key=1, api="Fetch", api_version=12,
                      request_ts_ns=1_000_000_000, given_up_ts_ns=1_800_000_000)
    assert waited.unanswered_ms == 800.0
    assert ExchangeFilter(min_latency_ms=500)(waited)
    assert not ExchangeFilter(min_latency_ms=900)(waited)
    fast = Exchange(1, "c", "b", "paired", 8, api_key=1, api="Fetch", api_version=12,
                    request_ts_ns=1_000_000_000, response_ts_ns=1_001_000_000)
    assert not ExchangeFilter(min_latency_ms=500)(fast)


def test_unanswered_requests_of_a_real_capture_know_how_long_they_waited():
    exchanges = list(analyze_files([CAPTURES / "produce-consume-zstd.pcap"]))
    unanswered = [ex for ex in exchanges if ex.status == "no_response"]
    assert unanswered, "the capture ends with requests in flight"
    from kwire.capture.files import read_captures

    end = max(p.ts_ns for p in read_captures([CAPTURES / "produce-consume-zstd.pcap"]))  # the last packet
    for ex in unanswered:
        assert ex.given_up_ts_ns is not None and ex.request_ts_ns <= ex.given_up_ts_ns <= end
    longest = max(ex.unanswered_ms for ex in unanswered)
    kept = [ex for ex in exchanges if ExchangeFilter(min_latency_ms=longest)(ex)]
    assert any(ex.status == "no_response" for ex in kept)
