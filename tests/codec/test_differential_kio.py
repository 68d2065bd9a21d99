"""Differential test: kwire's compiled decoders against kio, an independent Kafka protocol implementation.

For every (api, version, request/response) that both kwire (kwire.codec.schemas) and kio define,
hypothesis builds random kio entities, kio serialises them (kio.serial.entity_writer), kwire's
compiled decoder decodes the bytes, and every field kio has must equal kwire's value, with the whole
body consumed. Values are compared in kwire's representation:
- uuid: Kafka's base64 text (kwire.kafka.primitives.kafka_uuid); kio's None is the zero uuid.
- records / bytes: the raw bytes.
- timedelta fields: milliseconds. datetime fields: epoch milliseconds, kio's None is -1.
- error codes: the int16.
A tagged field kio left out (it skips default values) must be absent from kwire's dict too, and
kwire must see no tag it does not know.

Where kio and Kafka's schema disagree, Kafka's schema wins and the case gets an explicit, commented
expectation here. None is known today: for every case, kio's field names, order, types, nullability
and tags agree with kwire's schemas (which are transcribed from Kafka's JSON). kio only *represents*
two things differently, mapped in `_expected`: the zero uuid as None, and an int64 millisecond
timestamp's -1 as None (Produce's LogAppendTimeMs). Versions kio no longer defines (Fetch v0-v3,
Produce v0-v2, ShareFetch v0, ...) are outside this test; tests/codec/schemas covers their shape.

The entities come from our own strategy builder, driven by each dataclass field's type annotation and
its `kafka_type` metadata (kio ships hypothesis hooks for its primitive types only), with small sizes
so the whole run stays well under a minute.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import importlib
import io
import pkgutil
import re
import types
import typing
from functools import cache

import pytest

kio_schema = pytest.importorskip("kio.schema")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from kio.serial import entity_writer  # noqa: E402

from kwire.codec.compiler import decoder_for  # noqa: E402
from tests.codec.kio_names import kio_field  # noqa: E402
from kwire.kafka.primitives import kafka_uuid  # noqa: E402
from kwire.codec.schema import Field  # noqa: E402
from kwire.codec.schemas import all_schemas  # noqa: E402
from kwire.kafka.apis import APIS  # noqa: E402

EXAMPLES_PER_MESSAGE = 10
MAX_ITEMS = 3  # elements per array, at every nesting level

ZERO_UUID = kafka_uuid(bytes(16))
TIMEDELTA_TYPES = {"timedelta_i32", "timedelta_i64"}
DATETIME_TYPES = {"datetime_i64"}


def snake(name: str) -> str:
    """Kafka's PascalCase in kio's snake_case: HighWatermark -> high_watermark, IsrNodes -> isr_nodes."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


# ---------------------------------------------------------------------------------------- the cases


def _kio_versions(package: str) -> list[int]:
    pkg = importlib.import_module(f"kio.schema.{package}")
    return sorted(int(m.name[1:]) for m in pkgutil.iter_modules(pkg.__path__) if re.fullmatch(r"v\d+", m.name))


def _kio_entity(package: str, version: int, kind: str):
    module = importlib.import_module(f"kio.schema.{package}.v{version}.{kind}")
    return getattr(module, "".join(p.capitalize() for p in package.split("_")) + kind.capitalize())


def _cases() -> list[tuple[int, str, str, int]]:
    kio_packages = {m.name for m in pkgutil.iter_modules(kio_schema.__path__) if m.ispkg}
    cases = []
    for (api_key, kind), schema in sorted(all_schemas().items()):
        package = snake(APIS[api_key].name)
        if package not in kio_packages:
            continue
        for version in _kio_versions(package):
            cases.append((api_key, kind, package, version))
    return cases


CASES = _cases()
IDS = [f"{all_schemas()[(key, kind)].name}-v{version}" for key, kind, _, version in CASES]


# ---------------------------------------------------------------------------------------- strategies

_TEXT = st.text(st.characters(codec="utf-8"), max_size=12)
_INTS = {
    "int8": st.integers(-(2**7), 2**7 - 1),
    "int16": st.integers(-(2**15), 2**15 - 1),
    "int32": st.integers(-(2**31), 2**31 - 1),
    "int64": st.integers(-(2**63), 2**63 - 1),
    "uint16": st.integers(0, 2**16 - 1),
    "uint32": st.integers(0, 2**32 - 1),
}


def _unwrap(annotation) -> tuple[object, bool, bool]:
    """(inner type, optional, array) of `X`, `X | None`, `tuple[X, ...]`, `tuple[X, ...] | None`."""
    optional = False
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(args) < len(typing.get_args(annotation))
        annotation = args[0]
    if typing.get_origin(annotation) is tuple:
        return typing.get_args(annotation)[0], optional, True
    return annotation, optional, False


def _primitive(kafka_type: str, inner: object) -> st.SearchStrategy:
    if kafka_type in _INTS:
        return _INTS[kafka_type]
    if kafka_type == "bool":
        return st.booleans()
    if kafka_type == "float64":
        return st.floats(allow_nan=False, allow_infinity=False)
    if kafka_type == "string":
        return _TEXT
    if kafka_type == "bytes":
        return st.binary(max_size=16)
    if kafka_type == "records":
        return st.binary(max_size=40).map(inner) if isinstance(inner, type) else st.binary(max_size=40)
    if kafka_type == "uuid":
        return st.uuids()
    if kafka_type == "error_code":
        return st.sampled_from(list(inner))  # the ErrorCode enum
    if kafka_type == "timedelta_i32":
        return st.integers(-(2**31), 2**31 - 1).map(lambda ms: datetime.timedelta(milliseconds=ms))
    if kafka_type == "timedelta_i64":
        # Whole milliseconds within float precision of timedelta.total_seconds().
        return st.integers(-(2**47), 2**47).map(lambda ms: datetime.timedelta(milliseconds=ms))
    if kafka_type == "datetime_i64":
        return st.integers(0, 2**41).map(
            lambda ms: datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc))
    raise AssertionError(f"no strategy for kafka_type {kafka_type!r}")


@cache
def entity_strategy(cls) -> st.SearchStrategy:
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        inner, optional, array = _unwrap(hints[f.name])
        if dataclasses.is_dataclass(inner):
            value = st.deferred(lambda inner=inner: entity_strategy(inner))
        else:
            value = _primitive(f.metadata["kafka_type"], inner)
        if array:
            value = st.lists(value, max_size=MAX_ITEMS).map(tuple)
        if optional:
            value = st.none() | value
        kwargs[f.name] = value
    return st.builds(cls, **kwargs)


# ---------------------------------------------------------------------------------------- comparison


def _field_map(fields: tuple[Field, ...], version: int, kio_cls) -> dict[str, Field]:
    """kio field name -> kwire Field, for the fields present in `version`.

    kio drops the "_ms" suffix of the fields it types as timedelta or datetime (MaxWaitMs -> max_wait);
    that is the only renaming, applied where kio's own metadata says so.
    """
    kio_types = {f.name: f.metadata.get("kafka_type") for f in dataclasses.fields(kio_cls)}
    out = {}
    for f in fields:
        if not f.present_in(version):
            continue
        name = kio_field(f.name, snake(f.name), kio_types)
        if name not in kio_types and name.endswith("_ms") and kio_types.get(name[:-3]) in TIMEDELTA_TYPES | DATETIME_TYPES:
            name = name[:-3]
        out[name] = f
    return out


def _expected(kafka_type: str | None, value):
    """kio's value as kwire represents it."""
    if kafka_type == "uuid":
        # kio models Kafka's zero uuid (Uuid.ZERO_UUID) as None and writes it as 16 zero bytes.
        return ZERO_UUID if value is None else kafka_uuid(value.bytes)
    if kafka_type in DATETIME_TYPES:
        # kio models the -1 of an int64 timestamp (e.g. LogAppendTimeMs, "none") as None.
        return -1 if value is None else round(value.timestamp() * 1000)
    if value is None:
        return None
    if kafka_type in ("records", "bytes"):
        return bytes(value)
    if kafka_type == "error_code" or isinstance(value, enum.Enum):
        return value.value
    if kafka_type in TIMEDELTA_TYPES:
        return round(value.total_seconds() * 1000)
    return value


def _actual(kafka_type: str | None, value):
    if kafka_type == "records" and value is not None:
        return bytes(value)
    return value


def compare(entity, decoded: dict, fields: tuple[Field, ...], version: int, path: str = "") -> None:
    cls = type(entity)
    by_kio_name = _field_map(fields, version, cls)
    assert "_unknown_tagged_fields" not in decoded, f"{path}: kwire saw tags it does not know"
    expected_keys = set()
    for f in dataclasses.fields(cls):
        here = f"{path}.{f.name}" if path else f.name
        assert f.name in by_kio_name, f"{here}: kio has a field kwire's schema lacks in v{version}"
        kf = by_kio_name[f.name]
        value = getattr(entity, f.name)
        if kf.name not in decoded:
            # kio skips a tagged field holding its default value; nothing else may be missing.
            assert f.metadata.get("tag") is not None, f"{here}: missing from kwire's output"
            continue
        expected_keys.add(kf.name)
        got = decoded[kf.name]
        kafka_type = f.metadata.get("kafka_type")
        if kf.is_array:
            if value is None or got is None:
                assert got is None and value is None, f"{here}: {got!r} != {value!r}"
                continue
            assert len(got) == len(value), f"{here}: {len(got)} elements, kio wrote {len(value)}"
            for i, (item, got_item) in enumerate(zip(value, got)):
                if kf.is_struct:
                    compare(item, got_item, kf.fields, version, f"{here}[{i}]")
                else:
                    assert _actual(kafka_type, got_item) == _expected(kafka_type, item), f"{here}[{i}]"
        elif kf.is_struct:
            if value is None or got is None:
                assert got is None and value is None, f"{here}: {got!r} != {value!r}"
                continue
            compare(value, got, kf.fields, version, here)
        else:
            assert _actual(kafka_type, got) == _expected(kafka_type, value), (
                f"{here}: kwire {got!r} != kio {value!r}")
    extra = set(decoded) - expected_keys
    assert not extra, f"{path or '<top>'}: kwire decoded fields kio does not have: {sorted(extra)}"


# ---------------------------------------------------------------------------------------- the tests


def test_every_kio_version_is_known_to_kwire():
    missing = [f"{name} v{version}" for name, (key, kind, _, version) in zip(IDS, CASES)
               if version not in all_schemas()[(key, kind)].valid]
    assert not missing


def test_cases_cover_the_fetch_group():
    names = {all_schemas()[(key, kind)].name for key, kind, _, _ in CASES}
    for api in ("Fetch", "ShareFetch", "ShareAcknowledge", "OffsetFetch", "OffsetCommit", "ListOffsets",
                "Produce", "Metadata", "ApiVersions"):
        assert {f"{api}Request", f"{api}Response"} <= names


@pytest.mark.parametrize("api_key,kind,package,version", CASES, ids=IDS)
@settings(max_examples=EXAMPLES_PER_MESSAGE, deadline=None, database=None,
          phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure reports its raw example at once
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_kwire_decodes_what_kio_writes(api_key, kind, package, version, data):
    schema = all_schemas()[(api_key, kind)]
    if version not in schema.valid:
        pytest.skip("reported by test_every_kio_version_is_known_to_kwire")
    cls = _kio_entity(package, version, schema.kind)
    entity = data.draw(entity_strategy(cls))
    buf = io.BytesIO()
    entity_writer(cls)(buf, entity)
    wire = buf.getvalue()
    decoded, end = decoder_for(schema, version)(wire, 0)
    assert end == len(wire), f"decoded {end} of {len(wire)} bytes"
    compare(entity, decoded, schema.fields, version)
