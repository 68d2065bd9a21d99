"""scripts/gen_schemas.py: the union of Kafka's definitions across releases, and what it commits.

Small folders of definitions in Kafka's own format (JSON with // comments) check the joining rules: a
version trunk dropped is kept from an older release, a field an older release alone had is kept for
its versions and in its place, a version whose fields changed before release reads as the newest
folder says, comments are stripped but never inside strings. The committed api table, docs page and
schema modules are checked against each other; with KWIRE_KAFKA_DEFS (folders, oldest first, joined
by ':') the committed files are checked against a fresh generation.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path

import pytest

from kwire.codec.schemas import all_schemas, module_name
from kwire.kafka.apis import APIS

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("gen_schemas", ROOT / "scripts" / "gen_schemas.py")
gen = importlib.util.module_from_spec(spec)
sys.modules["gen_schemas"] = gen
spec.loader.exec_module(gen)


def write(folder: Path, name: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(text)


def definition(kind: str, valid: str, fields: list[dict], flexible: str = "none") -> str:
    body = {"apiKey": 99, "type": kind, "name": f"Demo{kind.capitalize()}", "validVersions": valid,
            "flexibleVersions": flexible, "fields": fields}
    return "// a licence header\n// and a comment\n" + json.dumps(body, indent=2).replace(
        '"fields"', '// a comment before the fields\n  "fields"', 1)


def field(name: str, type_: str, versions: str, **extra) -> dict:
    return {"name": name, "type": type_, "versions": versions, "about": "see http://example.com//x", **extra}


def test_comments_are_stripped_but_not_inside_strings():
    text = '{"a": "http://x//y", // gone\n "b": "\\"//\\""}'
    assert json.loads(gen.strip_comments(text)) == {"a": "http://x//y", "b": '"//"'}


def test_dropped_versions_and_fields_are_kept_from_older_releases(tmp_path):
    old, new = tmp_path / "3.9", tmp_path / "trunk"
    old_fields = [field("ReplicaId", "int32", "0+", entityType="brokerId"), field("MaxNumOffsets", "int32", "0"),
                  field("Topics", "[]Topic", "0+", fields=[field("Name", "string", "0+", entityType="topicName")])]
    new_fields = [field("ReplicaId", "int32", "0+", entityType="brokerId"),
                  field("Topics", "[]Topic", "0+", fields=[field("Name", "string", "0+", entityType="topicName"),
                                                           field("Timeout", "int32", "4+", default="-1")])]
    for kind in ("request", "response"):
        write(old, f"Demo{kind.capitalize()}", definition(kind, "0-3", old_fields))
        write(new, f"Demo{kind.capitalize()}", definition(kind, "1-5", new_fields, flexible="4+"))
    messages = gen.build_messages([old, new])
    gen.check(messages, [old, new])
    msg = messages[(99, "request")]
    assert gen.show(msg.valid) == "0-5" and gen.show(msg.flexible) == "4+"
    assert [(f.name, gen.show(f.versions)) for f in msg.fields] == [
        ("ReplicaId", "0+"), ("MaxNumOffsets", "0"), ("Topics", "0+")]
    topic = msg.fields[2].fields
    assert [(f.name, gen.show(f.versions), f.default) for f in topic] == [("Name", "0+", None), ("Timeout", "4+", "-1")]
    source = gen.field_source(msg.fields[0], "")
    assert source == ['F("ReplicaId", "int32", "0+", entity=BROKER_ID),']


def test_a_version_reads_as_its_newest_definition_says(tmp_path):
    # StreamsGroupHeartbeat: v0 shipped in 4.1 with an int32 AcceptableRecoveryLag; 4.4 renamed it
    # AcceptableRecoveryLagLegacy (v0) and added an int64 AcceptableRecoveryLag (v1+)
    early, late = tmp_path / "4.1", tmp_path / "4.4"
    for kind in ("request", "response"):
        write(early, f"Demo{kind.capitalize()}", definition(kind, "0", [field("AcceptableRecoveryLag", "int32", "0+")],
                                                            flexible="0+"))
        write(late, f"Demo{kind.capitalize()}", definition(kind, "0-1", [
            field("AcceptableRecoveryLagLegacy", "int32", "0"), field("AcceptableRecoveryLag", "int64", "1+")],
            flexible="0+"))
    messages = gen.build_messages([early, late])
    gen.check(messages, [early, late])
    assert [(f.name, f.type, gen.show(f.versions)) for f in messages[(99, "response")].fields] == [
        ("AcceptableRecoveryLagLegacy", "int32", "0"), ("AcceptableRecoveryLag", "int64", "1+")]


def test_a_conflict_the_rules_cannot_join_is_refused(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for kind in ("request", "response"):
        write(a, f"Demo{kind.capitalize()}", definition(kind, "0-1", [field("X", "int32", "0+")]))
        write(b, f"Demo{kind.capitalize()}", definition(kind, "2-3", [field("X", "int64", "0+")]))
    with pytest.raises(SystemExit, match="type int64 in one folder, int32 in another"):
        gen.build_messages([a, b])


def test_every_api_key_has_a_module_and_the_table_says_its_versions():
    schemas = all_schemas()
    for key, spec in APIS.items():
        for kind in ("request", "response"):
            schema = schemas[(key, kind)]
            assert (schema.valid.lo, schema.valid.hi) == (spec.min_version, spec.max_version)
        module = importlib.import_module(f"kwire.codec.schemas.{module_name(spec.name)}")
        assert "GENERATED by scripts/gen_schemas.py" in module.__doc__
    assert set(range(0, 95)) <= set(APIS)


def test_docs_apis_page_equals_the_api_table():
    rows = re.findall(r"^\| (\d+) \| (\w+) \| ([\d-]+) \| (\w+) \|", (ROOT / "docs" / "apis.md").read_text(), re.M)
    table = {int(key): (name, versions, flexible) for key, name, versions, flexible in rows}
    assert table == {key: (spec.name, f"{spec.min_version}-{spec.max_version}" if spec.max_version > spec.min_version
                           else str(spec.min_version), "never" if spec.flexible_from is None else str(spec.flexible_from))
                     for key, spec in APIS.items()}


@pytest.mark.skipif(not os.environ.get("KWIRE_KAFKA_DEFS"), reason="needs Kafka's definitions: KWIRE_KAFKA_DEFS")
def test_committed_files_are_what_the_generator_writes():
    folders = [Path(p) for p in os.environ["KWIRE_KAFKA_DEFS"].split(":")]
    label = re.search(r"of\n(.*)\.\n", (ROOT / "kwire/codec/schemas/fetch.py").read_text()).group(1)
    for path, text in gen.outputs(folders, label).items():
        assert path.read_text() == text, path
