"""kwire.codec.marks and the marks of every schema.

The marks are checked against Kafka's naming conventions, which the marks themselves do not use:
a field named TopicId holds a topic id, GroupId a group id, ProducerId a producer id, and so on;
"Name" holds a topic name exactly when its struct is a topic struct (Kafka names those structs
...Topic..., and a topic's config struct ...TopicConfig...). A field marked against the convention,
or left unmarked where the convention says it holds an entity, fails here.
"""

from __future__ import annotations

from kwire.codec.marks import TOPICS, entity_tree, enum_tree, message_tree, pair_tree, values, walk
from kwire.codec.schema import (BROKER_ID, GROUP_ID, PRODUCER_ID, TOPIC_ID, TOPIC_NAME, TRANSACTIONAL_ID,
                                F, message)
from kwire.codec.schemas import all_schemas

KIO_ENTITIES = {"TopicName": TOPIC_NAME, "GroupId": GROUP_ID, "BrokerId": BROKER_ID, "ProducerId": PRODUCER_ID,
                "TransactionalId": TRANSACTIONAL_ID}


def _fields(fields, parent_type: str):
    for f in fields:
        yield f, parent_type
        if f.fields is not None:
            yield from _fields(f.fields, f.element_type)


def _marks_of(fields, version: int, prefix: str = "") -> dict:
    out = {}
    for f in fields:
        if f.present_in(version):
            if f.fields is not None:
                out.update(_marks_of(f.fields, version, prefix + f.name + "."))
            elif f.entity is not None and f.entity != TOPIC_ID:
                out[prefix + f.name] = f.entity
    return out


def _kio_marks(cls, kwire_fields, version: int, prefix: str = "") -> dict:
    """The entity marks kio's dataclass `cls` carries, under kwire's field paths."""
    import dataclasses
    import typing

    from tests.codec.kio_names import kio_field
    from tests.codec.test_differential_kio import _unwrap, snake

    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    out = {}
    for f in kwire_fields:
        name = kio_field(f.name, snake(f.name), names)
        if not f.present_in(version) or name not in names:
            continue
        inner = _unwrap(hints[name])[0]
        if f.fields is not None and dataclasses.is_dataclass(inner):
            out.update(_kio_marks(inner, f.fields, version, prefix + f.name + "."))
        elif getattr(inner, "__name__", None) in KIO_ENTITIES:
            out[prefix + f.name] = KIO_ENTITIES[inner.__name__]
    return out


def test_entity_marks_equal_kios_on_every_message_both_define():
    """The generated schemas take their marks from Kafka's entityType; kio's generator types the same
    fields TopicName, GroupId, BrokerId, ProducerId, TransactionalId from the same definitions (Kafka
    4.3): every message and version both define carries the same marks in the same places."""
    import pytest
    pytest.importorskip("kio.schema")
    from tests.codec.test_differential_kio import CASES, _kio_entity

    compared, wrong = 0, []
    for api_key, kind, package, version in CASES:
        cls = _kio_entity(package, version, kind)
        schema = all_schemas()[(api_key, kind)]
        mine, theirs = _marks_of(schema.fields, version), _kio_marks(cls, schema.fields, version)
        compared += 1
        if mine != theirs:
            wrong.append(f"{schema.name} v{version}: kwire {mine} kio {theirs}")
    assert compared > 500 and not wrong, "\n".join(wrong[:20])


def test_topic_ids_are_marked_by_the_overlay_rule():
    # Kafka leaves topic ids unmarked; kwire.codec.overlay marks every uuid field named TopicId
    for schema in all_schemas().values():
        for f, parent in _fields(schema.fields, schema.name):
            assert (f.entity == TOPIC_ID) == (f.name == "TopicId" and f.type == "uuid"), (schema.name, parent, f.name)


def test_enum_marks_have_integer_fields_and_known_names():
    found = {}
    for schema in all_schemas().values():
        for f, parent in _fields(schema.fields, schema.name):
            if f.enum is not None:
                found[f.name] = dict(f.enum)
    assert found["IsolationLevel"] == {0: "READ_UNCOMMITTED", 1: "READ_COMMITTED"}
    assert found["AcknowledgeTypes"][1] == "ACCEPT" and found["Acks"][-1] == "ALL"
    assert {"KeyType", "ResourceType", "ConfigSource", "ShareAcquireMode", "EndpointType"} <= set(found)


def test_trees_follow_versions_and_walks_find_values():
    fetch = all_schemas()[(1, "response")]
    v12 = entity_tree(fetch, 12, TOPICS)
    v13 = entity_tree(fetch, 13, TOPICS)
    assert [k for k, _, _ in v12[0][2]] == ["Topic"] and [k for k, _, _ in v13[0][2]] == ["TopicId"]
    body = {"Responses": [{"TopicId": "a", "Partitions": []}, {"TopicId": "b", "Partitions": []}]}
    assert list(values(body, v13)) == ["a", "b"]
    assert [key for _, key, _ in walk({"Responses": None}, v13)] == []
    assert message_tree(1, "response", 99, TOPICS) == () and message_tree(1, "response", None, TOPICS) == ()
    assert pair_tree(fetch, 13) == ()
    assert enum_tree(all_schemas()[(1, "request")], 3) == ()  # IsolationLevel came in v4
    assert [k for k, _, _ in enum_tree(all_schemas()[(1, "request")], 4)] == ["IsolationLevel"]


def test_arrays_of_marked_values_are_walked_element_by_element():
    schema = message(-1, "data", "T", "0", "none", [
        F("Groups", "[]string", "0", entity=GROUP_ID),
        F("Inner", "Inner", "0", fields=[F("GroupId", "string", "0", entity=GROUP_ID)]),
    ])
    tree = entity_tree(schema, 0, frozenset({GROUP_ID}))
    assert list(values({"Groups": ["a", "b"], "Inner": {"GroupId": "c"}}, tree)) == ["a", "b", "c"]


def test_carries_records_matches_the_bodies_of_the_captures():
    """Every decoded body holding a record set (RawRecords) is of an api carries_records names, and
    the apis Kafka documents as carrying records are named (checked against the bodies, not the schemas)."""
    from pathlib import Path

    from kwire.codec.marks import carries_records
    from kwire.codec.values import RawRecords
    from kwire.pipeline import analyze_files

    def holds_records(node) -> bool:
        if type(node) is RawRecords:
            return True
        if type(node) is dict:
            return any(holds_records(v) for v in node.values())
        if type(node) is list:
            return any(holds_records(v) for v in node)
        return False

    captures = sorted(str(p) for p in (Path(__file__).parents[2] / "captures").glob("*.pcap"))
    seen = set()
    for ex in analyze_files(captures):
        if holds_records(ex.request) or holds_records(ex.response):
            seen.add(ex.api_key)
    assert seen and all(carries_records(key) for key in seen)
    # Produce, Fetch, ShareFetch, and FetchSnapshot (KRaft: a snapshot's bytes, typed "records" by Kafka)
    assert {key for key in range(100) if carries_records(key)} == {0, 1, 59, 78}
    assert not carries_records(None) and not carries_records(-5)
