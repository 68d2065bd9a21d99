"""The group, transaction, SASL, telemetry, share-group and topic-admin schemas against kio.

kio's dataclasses are an independent transcription of Kafka's JSON. For every version kio defines:
- the fields kwire's schema has in that version (every nesting level, snake_case, in order) equal kio's;
- each field's type, nullability and tag agree; flexible versions agree;
- kio's serialisation of random messages (hypothesis) decodes, through kwire's compiled decoder, to the
  same values.
Versions Kafka 4.0 removed (kio no longer has them) are checked on hand-assembled bytes instead.
"""

from __future__ import annotations

import dataclasses
import datetime
import importlib
import io
import pkgutil
import re
import struct
import types
import typing

import pytest

from kwire.codec.schema import Field, MessageSchema
from tests.codec.kio_names import RENAMED_SINCE_KIO
from kwire.codec.schemas import all_schemas
from kwire.kafka.apis import APIS

pytest.importorskip("kio.schema")

MODULES = [
    "find_coordinator", "join_group", "heartbeat", "leave_group", "sync_group", "describe_groups",
    "list_groups", "sasl_handshake", "init_producer_id", "offset_for_leader_epoch", "add_partitions_to_txn",
    "add_offsets_to_txn", "end_txn", "txn_offset_commit", "sasl_authenticate", "describe_cluster",
    "consumer_group_heartbeat", "consumer_group_describe", "get_telemetry_subscriptions", "push_telemetry",
    "share_group_heartbeat", "share_group_describe", "create_topics", "delete_topics", "describe_configs",
]

# kio turns millisecond fields into datetime.timedelta and drops "Ms" from their names.
RENAMES = {
    "ThrottleTimeMs": "throttle_time",                # every response's ThrottleTimeMs (timedelta_i32)
    "TransactionTimeoutMs": "transaction_timeout",    # InitProducerId request (timedelta_i32)
    "SessionTimeoutMs": "session_timeout",            # JoinGroup request (timedelta_i32)
    "RebalanceTimeoutMs": "rebalance_timeout",        # JoinGroup v1+, ConsumerGroupHeartbeat requests
    "HeartbeatIntervalMs": "heartbeat_interval",      # ConsumerGroupHeartbeat, ShareGroupHeartbeat responses
    "SessionLifetimeMs": "session_lifetime",          # SaslAuthenticate v1+ response (timedelta_i64)
    "PushIntervalMs": "push_interval",                # GetTelemetrySubscriptions response (timedelta_i32)
    "TimeoutMs": "timeout",                           # DeleteTopics request
    "timeoutMs": "timeout",                           # CreateTopics request (Kafka spells it camelCase)
}

# kio's kafka_type metadata -> Kafka's type
KIO_TYPES = {"error_code": "int16", "timedelta_i32": "int32", "timedelta_i64": "int64"}


def snake(name: str) -> str:
    """Kafka's name as kio spells it: Enable2Pc -> enable2_pc, V3AndBelowTopics -> v3_and_below_topics."""
    return RENAMES.get(name) or RENAMED_SINCE_KIO.get(name) or re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


# ---- the two sides as comparable rows: (dotted path, type, nullable, tag)


def kwire_rows(fields, version: int, flexible: bool, prefix: str = "") -> list[tuple]:
    rows = []
    for f in fields:
        if not f.present_in(version):
            continue
        path = prefix + snake(f.name)
        kind = ("[]struct" if f.is_array else "struct") if f.is_struct else f.type
        # kio types every uuid as `UUID | None` (the zero uuid reads as None): nullability of uuids is not compared
        nullable = True if f.element_type == "uuid" and not f.is_array else f.nullable_in(version)
        tag = f.tag if flexible and f.tagged_in(version) else None
        rows.append((path, kind, nullable, tag))
        if f.is_struct:
            rows += kwire_rows(f.fields, version, flexible, path + ".")
    return rows


def _unwrap(annotation):
    """-> (optional, array, inner type) of `X`, `X | None`, `tuple[X, ...]`, `tuple[X, ...] | None`."""
    optional = False
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional, annotation = True, args[0]
    array = typing.get_origin(annotation) is tuple
    if array:
        annotation = typing.get_args(annotation)[0]
    return optional, array, annotation


def kio_rows(cls, prefix: str = "") -> list[tuple]:
    rows = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        optional, array, inner = _unwrap(hints[f.name])
        path = prefix + f.name
        if dataclasses.is_dataclass(inner):
            rows.append((path, "[]struct" if array else "struct", optional, f.metadata.get("tag")))
            rows += kio_rows(inner, path + ".")
        else:
            kind = KIO_TYPES.get(f.metadata["kafka_type"], f.metadata["kafka_type"])
            rows.append((path, ("[]" if array else "") + kind, optional, f.metadata.get("tag")))
    return rows


def kio_versions(package: str) -> list[int]:
    pkg = importlib.import_module(f"kio.schema.{package}")
    return sorted(int(m.name[1:]) for m in pkgutil.iter_modules(pkg.__path__) if re.fullmatch(r"v\d+", m.name))


def kio_entity(package: str, version: int, kind: str):
    module = importlib.import_module(f"kio.schema.{package}.v{version}.{kind}")
    return getattr(module, "".join(p.capitalize() for p in package.split("_")) + kind.capitalize())


def schema_of(module: str, kind: str) -> MessageSchema:
    return getattr(importlib.import_module(f"kwire.codec.schemas.{module}"), kind.upper())


CASES = [(m, kind, v) for m in MODULES for kind in ("request", "response") for v in kio_versions(m)]
IDS = [f"{m}-{k}-v{v}" for m, k, v in CASES]


@pytest.mark.parametrize("module,kind,version", CASES, ids=IDS)
def test_fields_match_kio(module, kind, version):
    schema = schema_of(module, kind)
    assert version in schema.valid, f"kio knows {schema.name} v{version}, kwire does not"
    cls = kio_entity(module, version, kind)
    assert cls.__flexible__ == schema.is_flexible(version)
    mine = kwire_rows(schema.fields, version, schema.is_flexible(version))
    theirs = kio_rows(cls)
    assert {r[0] for r in mine} == {r[0] for r in theirs}  # the same field names
    assert [r[0] for r in mine] == [r[0] for r in theirs]  # in the same order
    assert mine == theirs  # with the same types, nullability and tags


@pytest.mark.parametrize("module", MODULES)
def test_versions_agree_with_api_table_and_kio(module):
    for kind in ("request", "response"):
        schema = schema_of(module, kind)
        spec = APIS[schema.api_key]
        assert all_schemas()[(schema.api_key, kind)] is schema
        assert schema.name == f"{spec.name}{kind.capitalize()}"
        assert (schema.valid.lo, schema.valid.hi) == (spec.min_version, spec.max_version)
        if spec.flexible_from is None:
            assert not any(schema.is_flexible(v) for v in range(spec.min_version, spec.max_version + 1))
        else:
            assert (schema.flexible.lo, schema.flexible.hi) == (spec.flexible_from, None)
        assert schema.valid.hi >= max(kio_versions(module))  # kwire's Kafka may be newer than kio's


def _paths(module: str, kind: str, version: int) -> list[str]:
    schema = schema_of(module, kind)
    return [r[0] for r in kwire_rows(schema.fields, version, schema.is_flexible(version))]


def test_find_coordinator_batching_from_v4():
    assert _paths("find_coordinator", "request", 3) == ["key", "key_type"]
    assert _paths("find_coordinator", "request", 4) == ["key_type", "coordinator_keys"]
    assert "coordinators.key" in _paths("find_coordinator", "response", 4)
    assert "node_id" in _paths("find_coordinator", "response", 3)
    assert "node_id" not in _paths("find_coordinator", "response", 4)


def test_add_partitions_to_txn_changes_shape_at_v4():
    v3, v4 = _paths("add_partitions_to_txn", "request", 3), _paths("add_partitions_to_txn", "request", 4)
    assert v3[0] == "v3_and_below_transactional_id" and "transactions" not in v3
    assert "transactions.verify_only" in v4 and "transactions.topics.partitions" in v4
    assert not any(p.startswith("v3_and_below") for p in v4)
    assert _paths("add_partitions_to_txn", "response", 3)[:2] == ["throttle_time", "results_by_topic_v3_and_below"]
    assert _paths("add_partitions_to_txn", "response", 4)[:3] == ["throttle_time", "error_code", "results_by_transaction"]


def test_versions_removed_in_kafka_4_keep_their_shape():
    # Facts from Kafka's JSON before 4.0 (kio no longer has these versions).
    assert _paths("offset_for_leader_epoch", "response", 0) == [
        "topics", "topics.topic", "topics.partitions", "topics.partitions.error_code",
        "topics.partitions.partition", "topics.partitions.end_offset"]
    assert "topics.partitions.leader_epoch" in _paths("offset_for_leader_epoch", "response", 1)
    assert "validate_only" not in _paths("create_topics", "request", 0)
    assert "topics.error_message" not in _paths("create_topics", "response", 0)
    assert "topics.error_message" in _paths("create_topics", "response", 1)
    assert _paths("delete_topics", "response", 0) == ["responses", "responses.name", "responses.error_code"]
    configs_v0 = _paths("describe_configs", "response", 0)
    assert "results.configs.is_default" in configs_v0 and "results.configs.config_source" not in configs_v0
    assert "results.configs.is_default" not in _paths("describe_configs", "response", 1)
    for module in ("share_group_heartbeat", "share_group_describe"):  # v0: Kafka 4.0 early access
        for kind in ("request", "response"):
            assert _paths(module, kind, 0) == _paths(module, kind, 1)


def test_secret_bearing_fields_are_marked():
    # kwire's overlay marks them (kwire.codec.overlay.ROLES); the generated modules carry Kafka's facts only
    from kwire.codec.schema import SECRET
    sasl = importlib.import_module("kwire.codec.schemas.sasl_authenticate")
    assert [f.role for f in sasl.REQUEST.fields if f.name == "AuthBytes"] == [SECRET]
    assert [f.role for f in sasl.RESPONSE.fields if f.name == "AuthBytes"] == [SECRET]
    telemetry = importlib.import_module("kwire.codec.schemas.push_telemetry")
    assert not [f for f in telemetry.REQUEST.fields if f.role is not None]


# ---- decoding: kio's bytes through kwire's compiled decoders


def _compiler():
    return pytest.importorskip("kwire.codec.compiler")


def _kafka_uuid_text(raw: bytes) -> str:
    from kwire.kafka.primitives import kafka_uuid
    return kafka_uuid(raw)


def _expected(value, field: Field, version: int):
    """kio's value in the form kwire's decoder produces."""
    if value is None:
        return _kafka_uuid_text(bytes(16)) if field.type == "uuid" else None
    if field.is_struct:
        if field.is_array:
            return [_expected_struct(item, field.fields, version) for item in value]
        return _expected_struct(value, field.fields, version)
    if field.is_array:
        return [_scalar(item, field.element_type) for item in value]
    return _scalar(value, field.type)


def _scalar(value, kafka_type: str):
    if isinstance(value, datetime.timedelta):
        return round(value.total_seconds() * 1000)
    if kafka_type == "uuid":
        return _kafka_uuid_text(value.bytes)
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return value


def _expected_struct(obj, fields, version: int) -> dict:
    out = {}
    for f in fields:
        if f.present_in(version):
            value = getattr(obj, snake(f.name))
            default = next(x.default for x in dataclasses.fields(obj) if x.name == snake(f.name))
            if f.tagged_in(version) and value == default:
                continue  # a tagged field at its default is not on the wire
            out[f.name] = _expected(value, f, version)
    return out


@pytest.mark.parametrize("module,kind,version", CASES, ids=IDS)
def test_kio_bytes_decode_to_kio_values(module, kind, version):
    compiler = _compiler()
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st
    from kio.serial import entity_writer

    schema = schema_of(module, kind)
    cls = kio_entity(module, version, kind)
    decode = compiler.decoder_for(schema, version)
    write = entity_writer(cls)

    @hypothesis.settings(max_examples=8, deadline=None, database=None,
                         suppress_health_check=list(hypothesis.HealthCheck))
    @hypothesis.given(st.from_type(cls))
    def roundtrip(obj):
        sink = io.BytesIO()
        write(sink, obj)
        data = sink.getvalue()
        got, end = decode(memoryview(data), 0)
        assert end == len(data)
        assert got == _expected_struct(obj, schema.fields, version)

    roundtrip()


# ---- versions kio lacks: hand-assembled bytes (classic encoding: int16 string lengths, int32 array counts)


def _s(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _n(count: int) -> bytes:
    return struct.pack(">i", count)


def _decode(module: str, kind: str, version: int, data: bytes) -> dict:
    decoded, end = _compiler().decoder_for(schema_of(module, kind), version)(memoryview(data), 0)
    assert end == len(data)
    return decoded


def test_describe_configs_v0_response_decodes():
    data = (struct.pack(">i", 5) + _n(1) + struct.pack(">h", 0) + _s(None) + struct.pack(">b", 2) + _s("orders")
            + _n(1) + _s("retention.ms") + _s("1000") + b"\x00\x01\x00")
    assert _decode("describe_configs", "response", 0, data) == {"ThrottleTimeMs": 5, "Results": [{
        "ErrorCode": 0, "ErrorMessage": None, "ResourceType": 2, "ResourceName": "orders",
        "Configs": [{"Name": "retention.ms", "Value": "1000", "ReadOnly": False, "IsDefault": True,
                     "IsSensitive": False}]}]}


def test_create_topics_v0_decodes():
    request = (_n(1) + _s("orders") + struct.pack(">ih", 3, 1) + _n(0) + _n(1) + _s("cleanup.policy")
               + _s("compact") + struct.pack(">i", 30000))
    assert _decode("create_topics", "request", 0, request) == {"Topics": [{
        "Name": "orders", "NumPartitions": 3, "ReplicationFactor": 1, "Assignments": [],
        "Configs": [{"Name": "cleanup.policy", "Value": "compact"}]}], "timeoutMs": 30000}
    response = _n(1) + _s("orders") + struct.pack(">h", 36)
    assert _decode("create_topics", "response", 0, response) == {"Topics": [{"Name": "orders", "ErrorCode": 36}]}


def test_offset_for_leader_epoch_v0_and_v1_responses_decode():
    head = _n(1) + _s("orders") + _n(1) + struct.pack(">hi", 0, 2)
    assert _decode("offset_for_leader_epoch", "response", 0, head + struct.pack(">q", 42)) == {
        "Topics": [{"Topic": "orders", "Partitions": [{"ErrorCode": 0, "Partition": 2, "EndOffset": 42}]}]}
    assert _decode("offset_for_leader_epoch", "response", 1, head + struct.pack(">iq", 7, 42)) == {
        "Topics": [{"Topic": "orders", "Partitions": [{"ErrorCode": 0, "Partition": 2, "LeaderEpoch": 7,
                                                        "EndOffset": 42}]}]}


def test_delete_topics_v0_decodes():
    request = _n(2) + _s("a") + _s("b") + struct.pack(">i", 1000)
    assert _decode("delete_topics", "request", 0, request) == {"TopicNames": ["a", "b"], "TimeoutMs": 1000}
    response = _n(1) + _s("a") + struct.pack(">h", 0)
    assert _decode("delete_topics", "response", 0, response) == {"Responses": [{"Name": "a", "ErrorCode": 0}]}


def test_share_group_heartbeat_v0_decodes_like_v1():
    # compact string "g", compact string "m", epoch 0, null rack, null topic names, no tagged fields
    data = b"\x02g\x02m" + struct.pack(">i", 0) + b"\x00\x00\x00"
    expected = {"GroupId": "g", "MemberId": "m", "MemberEpoch": 0, "RackId": None, "SubscribedTopicNames": None}
    assert _decode("share_group_heartbeat", "request", 0, data) == expected
    assert _decode("share_group_heartbeat", "request", 1, data) == expected
