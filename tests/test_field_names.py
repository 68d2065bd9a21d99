"""Every Kafka field name kwire's code looks up is a name Kafka's definitions give a field.

Bodies are dicts keyed by Kafka's field names, and the schemas are generated from Kafka's own
definitions: when Kafka renames a field (TxnOffsetCommit's GenerationId became
GenerationIdOrMemberEpoch), code that still reads the old name silently reads None. This test reads
kwire's source (outside the generated schemas) for the PascalCase names it subscripts, gets, pops or
tests with `in`, and requires each to be a field of some schema (the api schemas and the consumer
protocol's), or one of the keys kwire's own record-batch decoder writes. It checks names, not which
api a lookup is applied to: a lookup of a name that survives in another api is not caught here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import kwire.codec.consumer_protocol as consumer_protocol
from kwire.codec.schema import MessageSchema
from kwire.codec.schemas import all_schemas

PACKAGE = Path(__file__).resolve().parents[1] / "kwire"
PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")
# Keys of kwire's own record-batch summaries and records (kwire.native.codec_records, records_v2, records_legacy),
# which no Kafka message defines; and a text kwire.spark.session searches Spark's output for.
OWN_KEYS = {"Attributes", "BaseTimestamp", "BatchLength", "Compression", "Control", "CrcValid", "DecompressedSize",
            "IsControl", "IsTransactional", "KeySize", "Lz4BrokenHeaderChecksum", "Magic", "RecordCount",
            "SizeBytes", "TimestampType", "ValueSize", "Traceback"}


def schema_field_names() -> set[str]:
    names: set[str] = set()

    def walk(fields):
        for f in fields:
            names.add(f.name)
            if f.fields:
                walk(f.fields)

    for schema in all_schemas().values():
        walk(schema.fields)
    for value in vars(consumer_protocol).values():
        if isinstance(value, MessageSchema):
            walk(value.fields)
    return names


def looked_up(tree: ast.AST):
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "pop", "setdefault") and node.args and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant)
              and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops)):
            key = node.left.value
        if isinstance(key, str) and PASCAL.match(key):
            yield key, node.lineno


def test_every_field_name_looked_up_is_a_schema_field():
    known = schema_field_names() | OWN_KEYS
    seen, unknown = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "codec/schemas" in path.as_posix():
            continue
        for key, line in looked_up(ast.parse(path.read_text())):
            seen += 1
            if key not in known:
                unknown.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {key!r}")
    assert seen > 100, "the scan found too few lookups to mean anything"
    assert not unknown, "names no schema defines:\n" + "\n".join(unknown)


def test_the_scan_catches_a_renamed_field():
    code = 'def f(request):\n    return request.get("GenerationIdOrMemberEpochX"), request["MemberId"]\n'
    found = dict(looked_up(ast.parse(code)))
    assert set(found) == {"GenerationIdOrMemberEpochX", "MemberId"}
    assert "GenerationIdOrMemberEpochX" not in schema_field_names() and "MemberId" in schema_field_names()
