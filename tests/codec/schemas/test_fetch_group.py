"""Structure of the fetch-group schemas against kio's generated dataclasses (an independent transcription).

For every version kio defines, the field names kwire's schema has in that version (every nesting level,
as dotted snake_case paths) must equal kio's dataclass fields; tagged fields must carry the same tags.
Also checks each schema agrees with kwire.kafka.apis on the version range and the flexible versions.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
import types
import typing

import pytest

from kwire.codec.schema import MessageSchema
from kwire.codec.schemas import all_schemas
from kwire.kafka.apis import APIS

kio_schema = pytest.importorskip("kio.schema")

# kwire schema module -> kio package (both snake_case of Kafka's api name)
MODULES = ["fetch", "share_fetch", "share_acknowledge", "offset_fetch", "offset_commit",
           "list_offsets", "produce", "metadata", "api_versions"]

# kio turns millisecond fields into datetime.timedelta and drops the "_ms" suffix from their names.
RENAMES = {
    "max_wait_ms": "max_wait",                                 # Fetch, ShareFetch request MaxWaitMs (timedelta_i32)
    "throttle_time_ms": "throttle_time",                       # every response's ThrottleTimeMs (timedelta_i32)
    "retention_time_ms": "retention_time",                     # OffsetCommit v2-v4 RetentionTimeMs (timedelta_i64)
    "timeout_ms": "timeout",                                   # Produce TimeoutMs, ListOffsets v10+ TimeoutMs
    "acquisition_lock_timeout_ms": "acquisition_lock_timeout",  # ShareFetch v1+, ShareAcknowledge v2+
    "log_append_time_ms": "log_append_time",                   # Produce response LogAppendTimeMs (datetime_i64)
}


def snake(name: str) -> str:
    """Kafka's PascalCase name in kio's snake_case: HighWatermark -> high_watermark, IsrNodes -> isr_nodes."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def kwire_paths(fields, version: int, flexible: bool, prefix: str = "") -> dict[str, int | None]:
    """Dotted snake_case path -> tag (None for a regular field) of every field present in `version`."""
    out: dict[str, int | None] = {}
    for f in fields:
        if not f.present_in(version):
            continue
        name = snake(f.name)
        path = prefix + RENAMES.get(name, name)
        out[path] = f.tag if flexible and f.tagged_in(version) else None
        if f.is_struct:
            out.update(kwire_paths(f.fields, version, flexible, path + "."))
    return out


def _entity_of(annotation):
    """The dataclass inside `X`, `X | None` or `tuple[X, ...]`, else None."""
    origin = typing.get_origin(annotation)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _entity_of(args[0]) if len(args) == 1 else None
    if origin is tuple:
        return _entity_of(typing.get_args(annotation)[0])
    return annotation if dataclasses.is_dataclass(annotation) else None


def kio_paths(cls, prefix: str = "") -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        path = prefix + f.name
        out[path] = f.metadata.get("tag")
        nested = _entity_of(hints[f.name])
        if nested is not None:
            out.update(kio_paths(nested, path + "."))
    return out


def kio_versions(package: str) -> list[int]:
    pkg = importlib.import_module(f"kio.schema.{package}")
    return sorted(int(m.name[1:]) for m in pkgutil.iter_modules(pkg.__path__) if re.fullmatch(r"v\d+", m.name))


def kio_entity(package: str, version: int, kind: str):
    module = importlib.import_module(f"kio.schema.{package}.v{version}.{kind}")
    top = f"{''.join(p.capitalize() for p in package.split('_'))}{kind.capitalize()}"
    return getattr(module, top)


def schema_of(module: str, kind: str) -> MessageSchema:
    return getattr(importlib.import_module(f"kwire.codec.schemas.{module}"), kind.upper())


CASES = [(m, kind, v) for m in MODULES for kind in ("request", "response") for v in kio_versions(m)]


@pytest.mark.parametrize("module,kind,version", CASES, ids=[f"{m}-{k}-v{v}" for m, k, v in CASES])
def test_fields_match_kio(module, kind, version):
    schema = schema_of(module, kind)
    assert version in schema.valid, f"kio knows {schema.name} v{version}, kwire does not"
    cls = kio_entity(module, version, kind)
    assert cls.__flexible__ == schema.is_flexible(version)
    mine = kwire_paths(schema.fields, version, schema.is_flexible(version))
    theirs = kio_paths(cls)
    assert sorted(mine) == sorted(theirs)
    assert mine == theirs  # same tags on tagged fields


@pytest.mark.parametrize("module", MODULES)
def test_versions_agree_with_api_table(module):
    for kind in ("request", "response"):
        schema = schema_of(module, kind)
        spec = APIS[schema.api_key]
        assert all_schemas()[(schema.api_key, kind)] is schema
        assert (schema.valid.lo, schema.valid.hi) == (spec.min_version, spec.max_version)
        assert schema.flexible.lo == spec.flexible_from and schema.flexible.hi is None
        assert schema.name == f"{spec.name}{kind.capitalize()}"


@pytest.mark.parametrize("module", MODULES)
def test_versions_cover_kio(module):
    # kwire's schemas are generated from a newer Kafka trunk than kio 0.6.5's (Kafka 4.3): they define
    # every version kio does, and may define later ones (ApiVersions v5).
    schema = schema_of(module, "request")
    assert schema.valid.lo <= min(kio_versions(module)) and max(kio_versions(module)) <= schema.valid.hi


def test_fetch_v0_to_v3_are_kept_for_old_clients():
    # kio (like Kafka 4.0) no longer defines Fetch v0-v3, so the kio comparison cannot see them.
    schema = schema_of("fetch", "request")
    assert kwire_paths(schema.fields, 0, False) == {
        "replica_id": None, "max_wait": None, "min_bytes": None, "topics": None, "topics.topic": None,
        "topics.partitions": None, "topics.partitions.partition": None, "topics.partitions.fetch_offset": None,
        "topics.partitions.partition_max_bytes": None,
    }
    assert "max_bytes" in kwire_paths(schema.fields, 3, False)


def test_share_fetch_v0_is_the_early_access_shape():
    # ShareFetch v0 (Kafka 4.0 early access) had per-partition PartitionMaxBytes and no MaxRecords.
    req = kwire_paths(schema_of("share_fetch", "request").fields, 0, True)
    assert "topics.partitions.partition_max_bytes" in req and "max_records" not in req
    resp = schema_of("share_fetch", "response")
    assert "acquisition_lock_timeout" not in kwire_paths(resp.fields, 0, True)
    records = next(f for f in resp.fields[4].fields[1].fields if f.name == "Records")
    assert records.nullable_in(0) and not records.nullable_in(1)
