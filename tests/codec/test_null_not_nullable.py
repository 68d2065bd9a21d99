"""A null where Kafka's schema does not allow one (issue 46's null_not_nullable): every decoder of a body (the
generated source, the decoders compiled ahead of time, the part reader of kwire.codec.partial) stops at that
field with NullNotNullable, at the byte its length starts, as Kafka's own readers do ("non-nullable field ...
was serialized as null"); nullable fields still read null; kwire.native.exchange_build shows the body read leniently.

The bodies are written here byte by byte (each a few fields); the same faults on real traffic (Tansu's CreateAcls,
the mock's SyncGroup and OffsetFetch) are tests/analytics/test_rules.py's. kio, an independent decoder, is the
check on the bytes: it names the same null bytes field (UnexpectedNull).
"""

from __future__ import annotations

import struct

import pytest

from kwire.codec import aot
from kwire.codec.compiler import _Generator, decoder_for
from kwire.codec.partial import decode_in_part
from kwire.codec.schemas import schema_for
from kwire.errors import NULL_NOT_NULLABLE, DecodeError, NullNotNullable
from kwire.native.exchange_build import decode_body

I16, I32 = struct.Struct(">h").pack, struct.Struct(">i").pack


def _string(text: str | None) -> bytes:
    return I16(-1) if text is None else I16(len(text)) + text.encode()


def _produce_v3(name: str | None) -> bytes:
    """Produce v3 request: TransactionalId (nullable) null, Acks, TimeoutMs, one topic named `name`, no partition."""
    return _string(None) + I16(1) + I32(1000) + I32(1) + _string(name) + I32(0)


def _produce_v9(name_length: int) -> bytes:
    """Produce v9 (flexible): compact lengths; `name_length` the topic name's compact length byte (0: null)."""
    name = b"" if name_length == 0 else bytes([name_length]) + b"t" * (name_length - 1)
    return b"\x00" + I16(1) + I32(1000) + b"\x02" + (name or b"\x00") + b"\x01\x00" + b"\x00"


def _raised(decode, body: bytes, *args):
    try:
        decode(body, *args)
    except DecodeError as exc:
        return type(exc), exc.field, exc.offset
    return None


def _decoders(api_key: int, kind: str, version: int):
    """The generated source's decoder and, where the build made it, the compiled one (kwire.codec.aot)."""
    saved = dict(aot._modules)
    aot._modules[aot.module_name(api_key, kind)] = {}
    try:
        generated = _Generator(schema_for(api_key, kind), version).build()[0]
    finally:
        aot._modules.clear()
        aot._modules.update(saved)
    return [generated, decoder_for(schema_for(api_key, kind), version)]


@pytest.mark.parametrize("version, body, offset", [
    (3, _produce_v3(None), 2 + 2 + 4 + 4),  # the name's int16 length
    (9, _produce_v9(0), 1 + 2 + 4 + 1),  # the name's compact length, one byte 0
])
def test_every_decoder_names_the_null_at_its_field(version, body, offset):
    for decode in _decoders(0, "request", version):
        assert _raised(decode, body) == (NullNotNullable, "TopicData[].Name", offset)
    assert _raised(lambda b: decode_in_part(schema_for(0, "request"), version, b, 0), body) == \
        (NullNotNullable, "TopicData[].Name", offset)
    decoded, outcome = decode_body(0, "request", version, body, 0)
    assert (outcome.kind, outcome.field, outcome.offset, outcome.fault) == \
        (NULL_NOT_NULLABLE, "TopicData[].Name", offset, NULL_NOT_NULLABLE)
    assert decoded["TopicData"][0]["Name"] is None and decoded["Acks"] == 1  # shown as it was sent


def test_a_nullable_field_still_reads_null_and_a_named_topic_is_no_fault():
    body = _produce_v3("t")
    for decode in _decoders(0, "request", 3):
        value, end = decode(body, 0)
        assert value["TransactionalId"] is None and value["TopicData"][0]["Name"] == "t" and end == len(body)
    assert decode_body(0, "request", 9, _produce_v9(2), 0)[1].kind == "decoded"


def test_an_array_element_is_never_null():
    """DescribeGroups v0 request: Groups is []string; Kafka reads its elements as non-nullable strings."""
    body = I32(2) + _string("g") + I16(-1)
    assert _raised(decoder_for(schema_for(15, "request"), 0), body) == (NullNotNullable, "Groups[]", 7)
    assert _raised(decoder_for(schema_for(15, "request"), 0), I32(-1)) == (NullNotNullable, "Groups", 0)


def test_a_null_and_a_later_fault_is_malformed_at_the_null():
    """Tansu's CreateAcls v2 answer: ThrottleTimeMs, a compact null Results, and no tagged-field byte after it.
    Read leniently it fails at the tagged fields; the first fault is the null."""
    body = bytes.fromhex("00000003" "00" "00000000" "00")  # correlation id, header tags, throttle, Results null
    decoded, outcome = decode_body(30, "response", 2, body, 5)
    assert decoded is None
    assert (outcome.kind, outcome.field, outcome.offset, outcome.fault) == ("malformed", "Results", 9,
                                                                             NULL_NOT_NULLABLE)
    lenient = decoder_for(schema_for(30, "response"), 2, lenient=True)
    assert _raised(lenient, body, 5)[1] == "<tagged fields>"  # what kwire named before: one byte later


def test_kio_names_the_same_null():
    """The mock's SyncGroup v3 answer: ErrorCode 27 and a null Assignment (bytes, not nullable in Kafka's schema)."""
    pytest.importorskip("kio.schema")
    from kio.serial import entity_reader
    from kio.serial.errors import UnexpectedNull
    from kio.schema.sync_group.v3.response import SyncGroupResponse

    body = bytes.fromhex("00000000" "001b" "ffffffff")
    with pytest.raises(UnexpectedNull):
        entity_reader(SyncGroupResponse)(body, 0)
    assert _raised(decoder_for(schema_for(14, "response"), 3), body) == (NullNotNullable, "Assignment", 6)
    decoded, outcome = decode_body(14, "response", 3, body, 0)
    assert decoded == {"ThrottleTimeMs": 0, "ErrorCode": 27, "Assignment": None} and outcome.kind == NULL_NOT_NULLABLE
