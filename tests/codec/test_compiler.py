"""The schema compiler: layout per version, compact/tagged encodings, bounds, errors as DecodeError."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.codec.compiler import decoder_for, decoder_source
from kwire.codec.schema import F, message
from kwire.codec.values import RawRecords
from kwire.errors import DecodeError
from tests.codec.test_records_encoder import uvarint

SCHEMA = message(1, "response", "TestResponse", "0-13", "12+", [
    F("ThrottleTimeMs", "int32", "1+"),
    F("SessionId", "int32", "7+"),
    F("Responses", "[]TopicResponse", "0+", fields=[
        F("Topic", "string", "0-12"),
        F("TopicId", "uuid", "13+"),
        F("Partitions", "[]PartitionData", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("HighWatermark", "int64", "0+"),
            F("CurrentLeader", "LeaderIdAndEpoch", "12+", tag=1, fields=[
                F("LeaderId", "int32", "12+"), F("LeaderEpoch", "int32", "12+")]),
            F("Records", "records", "0+", nullable="0+"),
            F("Ids", "[]int32", "0+"),
        ]),
    ]),
    F("Cluster", "string", "12+", nullable="12+", tag=0),
])

V0 = (struct.pack(">i", 1) + struct.pack(">h", 1) + b"t" + struct.pack(">i", 1) + struct.pack(">iq", 0, 5)
      + struct.pack(">i", 3) + b"abc" + struct.pack(">iii", 2, 1, 2))


def v12_bytes(unknown_tag=True):
    partition = (struct.pack(">iq", 3, 9) + uvarint(4) + b"abc" + uvarint(3) + struct.pack(">ii", 5, 6)
                 + uvarint(2 if unknown_tag else 1)
                 + uvarint(1) + uvarint(9) + struct.pack(">ii", 1, 2) + b"\x00"
                 + ((uvarint(7) + uvarint(2) + b"\xaa\xbb") if unknown_tag else b""))
    topic = uvarint(2) + b"t" + uvarint(2) + partition + b"\x00"
    return (struct.pack(">ii", 0, 7) + uvarint(2) + topic
            + uvarint(1) + uvarint(0) + uvarint(3) + uvarint(3) + b"ab")


def test_non_flexible_version_layout():
    body, end = decoder_for(SCHEMA, 0)(V0)
    assert end == len(V0)
    assert body == {"Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": 0, "HighWatermark": 5, "Records": RawRecords(b"abc"), "Ids": [1, 2]}]}]}


def test_flexible_version_with_known_and_unknown_tags():
    data = v12_bytes()
    body, end = decoder_for(SCHEMA, 12)(data)
    assert end == len(data)
    part = body["Responses"][0]["Partitions"][0]
    assert part["CurrentLeader"] == {"LeaderId": 1, "LeaderEpoch": 2}
    assert part["_unknown_tagged_fields"] == {7: "aabb"}
    assert body["Cluster"] == "ab"
    assert body["SessionId"] == 7 and "Topic" in body["Responses"][0]


def test_fields_outside_their_versions_vanish():
    src = decoder_source(SCHEMA, 13)
    assert "'TopicId'" in src and "'Topic'" not in src


def test_every_truncation_is_a_decode_error():
    for data, version in ((V0, 0), (v12_bytes(), 12)):
        decode = decoder_for(SCHEMA, version)
        for cut in range(len(data)):
            with pytest.raises(DecodeError):
                decode(data[:cut])


def test_absurd_array_length_fails_before_allocating():
    data = struct.pack(">i", 2**31 - 1) + b"\x00" * 26
    with pytest.raises(DecodeError, match="cannot fit"):
        decoder_for(SCHEMA, 0)(data)


def test_unknown_version_is_a_decode_error():
    with pytest.raises(DecodeError):
        decoder_for(SCHEMA, 14)


NULLABLE = message(68, "response", "NullableStructResponse", "0", "0+", [
    F("Assignment", "Assignment", "0+", nullable="0+", fields=[F("Epoch", "int32", "0+")]),
])


def test_nullable_struct_marker():
    assert decoder_for(NULLABLE, 0)(b"\xff\x00")[0] == {"Assignment": None}
    assert decoder_for(NULLABLE, 0)(b"\x01" + struct.pack(">i", 4) + b"\x00\x00")[0] == {"Assignment": {"Epoch": 4}}


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.sampled_from([0, 1, 7, 12, 13]))
def test_random_bytes_only_ever_raise_decode_error(data, version):
    try:
        decoder_for(SCHEMA, version)(data)
    except DecodeError:
        pass


def test_a_body_of_too_many_entries_is_refused_by_a_bound_not_as_malformed(monkeypatch):
    """A well-formed DescribeConfigs answer naming 300,000 configs: past KWIRE_MAX_BODY_ENTRIES (250,000)
    the decoder stops with BodyTooLarge (a DecodeError kwire raises by choice) instead of making 300,000
    dicts; below the bound the same shape decodes; numbers in arrays count an eighth."""
    from kwire.codec import compiler
    from kwire.codec.schemas import schema_for
    from kwire.errors import BodyTooLarge

    def answer(n: int) -> bytes:
        config = b"\x02a\x02b\x00\x05\x00\x01\x02\x00\x00"  # Name, Value, ReadOnly, Source, IsSensitive, ...
        count = n + 1
        varint = b""
        while count >= 0x80:
            varint += bytes([count & 0x7F | 0x80])
            count >>= 7
        varint += bytes([count])
        return (b"\x00\x00\x00\x00" + b"\x02" + b"\x00\x00\x00\x04\x021" + varint + config * n + b"\x00" + b"\x00")

    decode = compiler.decoder_for(schema_for(32, "response"), 4)
    body, _ = decode(answer(1000))
    assert len(body["Results"][0]["Configs"]) == 1000
    with pytest.raises(BodyTooLarge, match="more than 250,000 entries.*KWIRE_MAX_BODY_ENTRIES"):
        decode(answer(300_000))
    body, _ = decode(answer(10))  # the budget is per body, not per run
    assert len(body["Results"][0]["Configs"]) == 10
    monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", 16)
    fetch_forgotten = compiler.decoder_for(schema_for(1, "request"), 7)
    # ForgottenTopicsData[].Partitions: 100 int32 count 12 entries (an eighth each), under a bound of 16
    body_bytes = (b"\xff\xff\xff\xff" + b"\x00\x00\x00\x00" * 2 + b"\x00\x00\x00\x01" + b"\x00" + b"\x00\x00\x00\x00" * 2
                  + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x64" + b"\x00\x00\x00\x07" * 100)
    body, _ = fetch_forgotten(body_bytes)
    assert body["ForgottenTopicsData"][0]["Partitions"] == [7] * 100


def test_a_null_struct_counts_one_byte_in_the_room_an_array_needs():
    """A nullable struct that is null is its int8 marker alone: an array of elements holding null ones must not
    be refused as unable to fit (found by tests/codec/test_differential_kio.py: kio wrote this StreamsGroupDescribe
    v0 answer, two groups whose Topology is null, 45 bytes for the array, where kwire counted 25 a group)."""
    from kwire.codec.schemas import all_schemas

    wire = bytes.fromhex("00000c1a0300090005c39dc39801ffffff0900000013ff01913c194800004f010101fff56ef7000c96"
                         "51ff010000000a0000")
    body, end = decoder_for(all_schemas()[(89, "response")], 0)(wire, 0)
    assert end == len(wire)
    assert [g["Topology"] for g in body["Groups"]] == [None, None]
    assert [g["ErrorCode"] for g in body["Groups"]] == [9, 79]
