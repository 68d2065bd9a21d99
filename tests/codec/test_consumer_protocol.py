"""The consumer protocol embedded in group apis (kwire.codec.consumer_protocol) and the ApiVersions
refusal layouts (kwire.codec.version_refusal): against kio (an independent implementation), on real
captures (checked against what the clients logged), and on the edge cases Kafka's rules define."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.codec.consumer_protocol import (ASSIGNMENT_KEY, SUBSCRIPTION_KEY, decode_assignment, decode_embedded,
                                           decode_subscription)
from kwire.codec.version_refusal import decode_mock_refusal, is_version_refusal
from kwire.errors import DecodeError
from kwire.model import Exchange
from kwire.pipeline import analyze_files
from tests import truthlog

CAPTURES = Path(__file__).resolve().parents[2] / "captures"

kio_sub = pytest.importorskip("kio.schema.consumer_protocol_subscription")
from kio.schema.consumer_protocol_assignment import v0 as asg_v0, v1 as asg_v1, v2 as asg_v2, v3 as asg_v3  # noqa: E402
from kio.schema.consumer_protocol_subscription import v0 as sub_v0, v1 as sub_v1, v2 as sub_v2, v3 as sub_v3  # noqa: E402
from kio.serial import entity_writer  # noqa: E402

SUBS = {0: sub_v0.data, 1: sub_v1.data, 2: sub_v2.data, 3: sub_v3.data}
ASGS = {0: asg_v0.data, 1: asg_v1.data, 2: asg_v2.data, 3: asg_v3.data}

names = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=1, max_size=12)
parts = st.lists(st.integers(0, 2**31 - 1), max_size=4)
user_data = st.none() | st.binary(max_size=8)


def _write(entity, version: int) -> bytes:
    buf = io.BytesIO()
    buf.write(struct.pack(">h", version))
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.lists(names, max_size=3), user_data,
       st.lists(st.tuples(names, parts), max_size=3), st.integers(-1, 100), st.none() | names)
def test_subscription_matches_kio(version, topics, data, owned, generation, rack):
    module = SUBS[version]
    fields = {"topics": tuple(topics), "user_data": data}
    if version >= 1:
        fields["owned_partitions"] = tuple(module.TopicPartition(topic=t, partitions=tuple(p)) for t, p in owned)
    if version >= 2:
        fields["generation_id"] = generation
    if version >= 3:
        fields["rack_id"] = rack
    decoded = decode_subscription(_write(module.ConsumerProtocolSubscription(**fields), version), exact=True)
    assert decoded["Version"] == version
    assert decoded["Topics"] == topics and decoded["UserData"] == data
    if version >= 1:
        assert decoded["OwnedPartitions"] == [{"Topic": t, "Partitions": p} for t, p in owned]
    if version >= 2:
        assert decoded["GenerationId"] == generation
    if version >= 3:
        assert decoded["RackId"] == rack


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3), st.lists(st.tuples(names, parts), max_size=3), user_data)
def test_assignment_matches_kio(version, assigned, data):
    module = ASGS[version]
    entity = module.ConsumerProtocolAssignment(
        assigned_partitions=tuple(module.TopicPartition(topic=t, partitions=tuple(p)) for t, p in assigned),
        user_data=data)
    decoded = decode_assignment(_write(entity, version), exact=True)
    assert decoded == {"Version": version, "AssignedPartitions": [{"Topic": t, "Partitions": p} for t, p in assigned],
                       "UserData": data}


def test_a_newer_version_reads_as_the_newest_known():
    body = _write(asg_v3.data.ConsumerProtocolAssignment(
        assigned_partitions=(asg_v3.data.TopicPartition(topic="t", partitions=(1, 2)),), user_data=None), 3)
    newer = struct.pack(">h", 7) + body[2:] + b"\x00\x00\x00\x2a"  # v7 appended a field kwire does not know
    decoded = decode_assignment(newer)
    assert decoded["Version"] == 7 and decoded["AssignedPartitions"] == [{"Topic": "t", "Partitions": [1, 2]}]
    assert "_trailing_bytes" not in decoded
    with pytest.raises(DecodeError):
        decode_assignment(b"\xff\xff")  # a negative version
    with pytest.raises(DecodeError):
        decode_assignment(b"\x00")


def _join(protocol_type, metadata: bytes, version: int = 5) -> Exchange:
    ex = Exchange(1, "c:1", "b:2", "paired", 1, api_key=11, api="JoinGroup", api_version=version)
    ex.request = {"GroupId": "g", "ProtocolType": protocol_type, "Protocols": [{"Name": "range", "Metadata": metadata}]}
    ex.response = {"ErrorCode": 0, "Members": [{"MemberId": "m", "Metadata": metadata}]}
    return ex


def test_only_the_consumer_protocol_type_is_decoded():
    sub = _write(sub_v0.data.ConsumerProtocolSubscription(topics=("t",), user_data=None), 0)
    ex = _join("consumer", sub)
    decode_embedded(ex)
    assert list(ex.request["Protocols"][0]) == ["Name", "Metadata", SUBSCRIPTION_KEY]  # right after the bytes
    assert ex.request["Protocols"][0][SUBSCRIPTION_KEY]["Topics"] == ["t"]
    assert ex.response["Members"][0][SUBSCRIPTION_KEY]["Version"] == 0
    connect = _join("connect", sub)
    decode_embedded(connect)
    assert SUBSCRIPTION_KEY not in connect.request["Protocols"][0]
    broken = _join("consumer", b"\x00\x01\x7f")
    decode_embedded(broken)
    assert broken.request["Protocols"][0][SUBSCRIPTION_KEY]["Version"] == 1
    assert "error" in broken.request["Protocols"][0][SUBSCRIPTION_KEY]


def test_sync_group_without_a_protocol_type_is_decoded_only_when_it_reads_exactly():
    asg = _write(asg_v0.data.ConsumerProtocolAssignment(assigned_partitions=(), user_data=b"x"), 0)
    ex = Exchange(1, "c:1", "b:2", "paired", 1, api_key=14, api="SyncGroup", api_version=3)
    ex.request = {"GroupId": "g", "Assignments": [{"MemberId": "m", "Assignment": asg},
                                                   {"MemberId": "n", "Assignment": asg + b"\x01"}]}
    ex.response = {"ErrorCode": 0, "Assignment": b""}
    decode_embedded(ex)
    assert ex.request["Assignments"][0][ASSIGNMENT_KEY]["UserData"] == b"x"
    assert ASSIGNMENT_KEY not in ex.request["Assignments"][1]  # maybe another protocol: left as bytes
    assert ASSIGNMENT_KEY not in ex.response  # empty: a member given nothing


def test_real_capture_groups_decode_as_the_clients_logged():
    """produce-consume: the consumer subscribed to the scenario's topic and was assigned its 4
    partitions (the truth log's summary names the topic and partition count)."""
    capture = CAPTURES / "produce-consume-none.pcap"
    summary = truthlog.header(capture.with_name(capture.name + ".truth.log").read_text())
    joins = syncs = 0
    for ex in analyze_files([str(capture)]):
        if ex.api == "JoinGroup":
            for protocol in ex.request["Protocols"]:
                assert protocol[SUBSCRIPTION_KEY]["Topics"] == [summary["topic"]]
            joins += 1
        elif ex.api == "SyncGroup" and ex.response:
            (assigned,) = ex.response[ASSIGNMENT_KEY]["AssignedPartitions"]
            assert assigned["Topic"] == summary["topic"]
            assert sorted(assigned["Partitions"]) == list(range(summary["partitions"]))
            syncs += 1
        assert not (ex.request_error or ex.response_error), ex
    assert joins and syncs


def test_the_mock_refusal_decodes():
    body = bytes.fromhex("0023" "01" "0012" "0000" "0002" "00000000")
    assert decode_mock_refusal(body, 0) == {"ErrorCode": 35, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0,
                                                                          "MaxVersion": 2}],
                                            "ThrottleTimeMs": 0, "_layout": "librdkafka-mock"}
    with pytest.raises(DecodeError):
        decode_mock_refusal(body + b"\x00", 0)
    assert is_version_refusal(18, [35]) and not is_version_refusal(18, [35, 35]) and not is_version_refusal(3, [35])


@pytest.mark.parametrize("name", ["produce-consume-none.pcap", "share-consumer.pcap", "kcat-snappy.pcap"])
def test_refusals_in_real_captures_decode_without_error(name):
    refusals = 0
    for ex in analyze_files([str(CAPTURES / name)]):
        if ex.api == "ApiVersions" and ex.response and ex.response.get("ErrorCode") == 35:
            assert ex.response_error is None and ex.response["ApiKeys"]
            refusals += 1
    assert refusals


def test_describe_groups_members_are_decoded_by_their_group_protocol_type():
    sub = _write(sub_v1.data.ConsumerProtocolSubscription(
        topics=("t",), user_data=None, owned_partitions=(sub_v1.data.TopicPartition(topic="t", partitions=(0,)),)), 1)
    asg = _write(asg_v1.data.ConsumerProtocolAssignment(
        assigned_partitions=(asg_v1.data.TopicPartition(topic="t", partitions=(0, 1)),), user_data=None), 1)
    member = {"MemberId": "m", "ClientId": "c", "MemberMetadata": sub, "MemberAssignment": asg}
    ex = Exchange(1, "c:1", "b:2", "paired", 1, api_key=15, api="DescribeGroups", api_version=5)
    ex.request = {"Groups": ["g", "h", "e"]}
    ex.response = {"Groups": [{"GroupId": "g", "ProtocolType": "consumer", "Members": [dict(member)]},
                              {"GroupId": "h", "ProtocolType": "connect", "Members": [dict(member)]},
                              {"GroupId": "e", "ProtocolType": "", "Members": []}]}
    decode_embedded(ex)
    decoded = ex.response["Groups"][0]["Members"][0]
    assert decoded[SUBSCRIPTION_KEY]["OwnedPartitions"] == [{"Topic": "t", "Partitions": [0]}]
    assert decoded[ASSIGNMENT_KEY]["AssignedPartitions"] == [{"Topic": "t", "Partitions": [0, 1]}]
    assert list(decoded).index(SUBSCRIPTION_KEY) == list(decoded).index("MemberMetadata") + 1
    assert SUBSCRIPTION_KEY not in ex.response["Groups"][1]["Members"][0]
