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
