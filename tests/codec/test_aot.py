"""kwire.codec.aot / aot_build: the decoders compiled ahead of time decode exactly as the generated source.

Bodies: every Produce, Fetch, heartbeat and share body of the committed captures (real clients and brokers),
each also cut short and with bytes changed (hostile input): the same dict, or the same DecodeError (kind,
reason, offset, field, message), from both. The factories of the build's module source are checked as Python
here on every run; the modules setup.py compiled are checked where they were built (CI's compiled run, where
KWIRE_EXPECT_COMPILED=1 makes their absence a failure), and only there: KWIRE_PURE=1 turns them off.
"""

from __future__ import annotations

import io
import os
import random
import types
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

pytest.importorskip("kio")
from kio.serial import entity_writer  # noqa: E402

from kwire.codec import aot
from kwire.codec.aot_build import module_sources
from kwire.codec.compiler import _Generator
from kwire.codec.schemas import schema_for
from kwire.native.kafka_headers import parse_response_header
from kwire.native.kafka_pairing import PAIRED
from kwire.pipeline import analyze_files
from tests.codec.test_differential_kio import _cases as _kio_cases, _kio_entity, entity_strategy

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
HOT_KEYS = {api_key: (first, last) for api_key, first, last in aot.HOT}
PER_MESSAGE = 12  # bodies of one (message, version) kept: the captures repeat themselves


@lru_cache(maxsize=None)
def hot_bodies() -> dict[tuple[int, str, int], list[bytes]]:
    """(api key, kind, version) -> bodies (header cut off) of the committed captures, for the messages of HOT."""
    out: dict = {}
    for path in sorted(CAPTURES.rglob("*")):
        if path.suffix not in (".pcap", ".pcapng", ".gz") or ".truth." in path.name:
            continue
        for raw in analyze_files([str(path)], decode=False, offload=lambda raw: True):
            if raw.status != PAIRED:
                continue
            h = raw.request.header
            span = HOT_KEYS.get(h.api_key)
            if span is None or not span[0] <= h.api_version <= span[1]:
                continue
            response_header = parse_response_header(raw.response_body, h.api_key, h.api_version)
            for kind, body in (("request", raw.request.body[h.header_size:]),
                               ("response", raw.response_body[response_header.header_size:])):
                kept = out.setdefault((h.api_key, kind, h.api_version), [])
                if len(kept) < PER_MESSAGE and bytes(body) not in kept:
                    kept.append(bytes(body))
    return out


def hostile(body: bytes, rng: random.Random) -> list[bytes]:
    """The body, cut at eight places, and with one, then three, bytes changed (four of each)."""
    out = [body] + [body[:len(body) * i // 8] for i in range(8)]
    for flips in (1, 1, 1, 1, 3, 3, 3, 3):
        changed = bytearray(body)
        for _ in range(flips if changed else 0):
            changed[rng.randrange(len(changed))] = rng.randrange(256)
        out.append(bytes(changed))
    return out


def outcome(decode, body: bytes):
    try:
        value, end = decode(body, 0)
    except Exception as exc:  # noqa: BLE001 - compared: the same kind and words from both
        return ("raised", type(exc).__name__, str(exc), getattr(exc, "offset", None), getattr(exc, "field", None))
    return ("decoded", repr(value), end)


def built_with(table: dict, api_key: int, kind: str, version: int):
    """The decoder _Generator.build() gives with `table` as kwire.codec.aot's compiled decoders."""
    saved = dict(aot._modules)
    aot._modules[aot.module_name(api_key, kind)] = table
    try:
        return _Generator(schema_for(api_key, kind), version).build()[0]
    finally:
        aot._modules.clear()
        aot._modules.update(saved)


def assert_same(table: dict) -> int:
    """Compare the decoders of `table` with the generated source on every hot body; the bodies compared."""
    rng = random.Random(27)
    compared = 0
    for (api_key, kind, version), bodies in sorted(hot_bodies().items()):
        generated = built_with({}, api_key, kind, version)
        ahead = built_with(table, api_key, kind, version)
        assert ahead is not generated
        for body in bodies:
            for case in hostile(body, rng):
                assert outcome(ahead, case) == outcome(generated, case), (api_key, kind, version, case.hex())
                compared += 1
    return compared


class _Cython(types.SimpleNamespace):
    """What the module source asks of Cython's shadow module, as pure Python would run it."""


def python_table() -> dict:
    """DECODERS of every module source, executed as plain Python (the declarations do nothing; the C readers
    it cimports are kwire/native/c_reads.py's)."""
    stub = _Cython(Py_ssize_t=int, locals=lambda **types_: (lambda function: function))
    table = {}
    for name, source in module_sources().items():
        scope = {"__name__": name, "cython": stub}
        source = source.replace("import cython\n", "", 1).replace("from cython.cimports.", "from ")
        exec(compile(source, name, "exec"), scope)  # the readers of kwire/native/c_reads.py
        table.update(scope["DECODERS"])
    return table


_TABLES: dict = {}


def _python_table_once() -> dict:
    """python_table(), made once, unless the built decoders are there (then those are what runs)."""
    if "python" not in _TABLES:
        aot._modules.clear()
        built = {} if os.environ.get(aot.PURE_ENV, "") not in ("", "0") else aot._compiled_table()
        _TABLES["built"] = built
        _TABLES["python"] = python_table()
    return _TABLES["built"] or _TABLES["python"]


def test_the_captures_carry_the_hot_messages():
    found = hot_bodies()
    for api_key in (0, 1, 12, 68, 76, 78, 79):
        assert any(key[0] == api_key for key in found), f"no api {api_key} body in the committed captures"


def test_every_hot_version_has_a_factory_checked_against_its_source():
    table = python_table()
    expected = {(schema_for(k, kind).name, v) for k, first, last in aot.HOT for kind in ("request", "response")
                for v in range(first, last + 1) if v in schema_for(k, kind).valid}
    assert set(table) == expected
    generator = _Generator(schema_for(0, "request"), 10)
    assert table[("ProduceRequest", 10)][0] == aot.source_digest(generator.generate())


def test_the_factories_decode_as_the_generated_source():
    assert assert_same(python_table()) > 1000


def test_a_decoder_built_from_another_source_is_not_used():
    table = python_table()
    stale = {key: ("0" * 64, factory) for key, (_, factory) in table.items()}
    decoder = built_with(stale, 0, "request", 10)
    assert isinstance(decoder, types.FunctionType) and decoder.__code__.co_filename == "<kwire ProduceRequest v10>"


def _built_table() -> dict:
    if os.environ.get(aot.PURE_ENV, "") not in ("", "0"):
        pytest.skip("KWIRE_PURE is set: the compiled decoders are off, as they should be")
    aot._modules.clear()  # read the modules again
    table = aot._compiled_table()
    if not table:
        if os.environ.get("KWIRE_EXPECT_COMPILED"):
            pytest.fail("KWIRE_EXPECT_COMPILED is set but no compiled decoder was built (pip install . with gcc)")
        pytest.skip("no compiled decoders in this installation")
    return table


def test_the_built_decoders_are_todays_and_run():
    table = _built_table()
    for (name, version), (digest, _) in table.items():
        schema = schema_for(_key_of(name), "request" if name.endswith("Request") else "response")
        assert digest == aot.source_digest(_Generator(schema, version).generate()), f"{name} v{version} is stale"
    decoder = built_with(table, 0, "request", 10)
    assert not isinstance(decoder, types.FunctionType)  # a compiled function, not the executed source


def test_the_built_decoders_decode_as_the_generated_source():
    assert assert_same(_built_table()) > 1000


def _key_of(name: str) -> int:
    for api_key, _, _ in aot.HOT:
        if schema_for(api_key, "request").name == name or schema_for(api_key, "response").name == name:
            return api_key
    raise KeyError(name)


# Every version of HOT, also those no committed capture holds: bodies kio (an independent implementation) writes
# from random entities, as they are and made hostile.
KIO_CASES = [case for case in _kio_cases() if case[0] in HOT_KEYS and HOT_KEYS[case[0]][0] <= case[3] <= HOT_KEYS[case[0]][1]]


@pytest.mark.parametrize("api_key,kind,package,version", KIO_CASES,
                         ids=[f"{schema_for(k, kind).name}-v{v}" for k, kind, _, v in KIO_CASES])
@settings(max_examples=8, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_every_hot_version_decodes_as_the_generated_source(api_key, kind, package, version, data):
    table = _python_table_once()
    cls = _kio_entity(package, version, kind)
    buf = io.BytesIO()
    entity_writer(cls)(buf, data.draw(entity_strategy(cls)))
    generated = built_with({}, api_key, kind, version)
    ahead = built_with(table, api_key, kind, version)
    rng = random.Random(version)
    for case in hostile(buf.getvalue(), rng):
        assert outcome(ahead, case) == outcome(generated, case), case.hex()


@pytest.mark.parametrize("error", [AttributeError("__pyx_capi__"), TypeError("wrong signature"),
                                   ValueError("size changed"), ImportError("not built")])
def test_a_module_whose_cimports_run_as_python_is_not_used(monkeypatch, error):
    """A compiled decoder module cimports kwire/native/raw_records.pxd: when kwire.native.raw_records runs as Python (its source
    changed since the build), importing the module fails; the generated source then runs, as when it is not built."""
    def refuse(name):
        raise error
    saved = dict(aot._modules)
    aot._modules.clear()
    monkeypatch.setattr(aot.importlib, "import_module", refuse)
    try:
        assert aot._decoders_of(0, "request") == {}
        decoder = _Generator(schema_for(0, "request"), 9).build()[0]
        assert isinstance(decoder, types.FunctionType)  # the generated source's
    finally:
        aot._modules.clear()
        aot._modules.update(saved)


def test_what_builds_the_decoders_is_there():
    """Each file the decoders' digest reads exists: a missing one would leave the decoders current after a change
    to what made them (it once named kwire/c_reads.pxd, gone since the C readers moved to kwire/native)."""
    package = Path(aot.__file__).resolve().parents[1]
    for name in aot._BUILT_BY:
        assert (package / name).is_file(), name
