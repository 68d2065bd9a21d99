"""kwire.codec.partial against the generated decoders (an independent reading of the same schemas): a
body read in part under a small entries bound, with the elements it left out read back from its
CutElements, is the body the decoder makes under the default bound; a body within the bound reads the
same either way; a malformed body is malformed both ways."""

from __future__ import annotations

import random

import pytest

from kwire.codec import compiler
from kwire.codec.partial import NOT_KEPT, CutElements, decode_in_part, not_kept
from kwire.codec.schemas import all_schemas, schema_for
from kwire.errors import BodyTooLarge, DecodeError
from tests.fuzz.targets import Encoder, mutate
from tests.render.hostile import encode_body

CASES = [(schema, v) for _, schema in sorted(all_schemas().items())
         for v in range(schema.valid.lo, schema.valid.hi + 1)]


def _restored(value):
    """`value` with every cut array made whole again from its CutElements."""
    if type(value) is list:
        return [_restored(v) for v in value]
    if type(value) is not dict:
        return value
    out = {k: _restored(v) for k, v in value.items() if k != NOT_KEPT}
    for name, cut in (value.get(NOT_KEPT) or {}).items():
        assert type(cut) is CutElements and cut > 0
        out[name] = out[name] + [_restored(e) for e in cut.elements()]
    return out


def _encoded(schema, version: int, seed: int) -> bytes:
    rng = random.Random(seed)
    return Encoder(version, schema.is_flexible(version), rng).struct(schema.fields)


@pytest.mark.parametrize("bound", [1, 2, 3, 5])
def test_a_body_read_in_part_is_the_whole_body_with_what_it_cut(monkeypatch, bound):
    cut_somewhere = 0
    for schema, version in CASES:
        decode = compiler.decoder_for(schema, version)
        for seed in range(3):
            body = _encoded(schema, version, seed * 7919 + version)
            whole, end = decode(body, 0)
            monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", bound)
            try:
                part, part_end, cut = decode_in_part(schema, version, body, 0)
            except BodyTooLarge:  # a tagged field past the bound: not read in part
                continue
            finally:
                monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", 250_000)
            assert part_end == end, (schema.name, version)
            assert cut == not_kept(part)
            cut_somewhere += cut > 0
            assert _restored(part) == whole, (schema.name, version, seed)
    assert cut_somewhere > 100  # the bounds cut arrays of many messages


def test_a_body_within_the_bound_reads_the_same_either_way():
    for schema, version in CASES:
        body = _encoded(schema, version, version)
        assert decode_in_part(schema, version, body, 0)[:2] == compiler.decoder_for(schema, version)(body, 0)


def test_a_malformed_body_is_malformed_read_in_part_too(monkeypatch):
    rng = random.Random(49)
    both = 0
    for schema, version in CASES[::3]:
        body = mutate(_encoded(schema, version, version), rng)
        try:
            compiler.decoder_for(schema, version)(body, 0)
            whole = None
        except DecodeError as exc:
            whole = exc
        monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", 1)
        try:
            decode_in_part(schema, version, body, 0)
            part = None
        except BodyTooLarge:
            continue
        except DecodeError as exc:
            part = exc
        finally:
            monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", 250_000)
        assert (whole is None) == (part is None), (schema.name, version, whole, part)
        if whole is not None:
            both += 1
            assert part.message_name == f"{schema.name} v{version}"
    assert both > 50


def test_the_elements_past_the_bound_are_read_to_the_last(monkeypatch):
    """The dangerous binding last of many: kept in part, the first ones kept, the last read from the cut."""
    monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", 100)
    binding = {"ResourceType": 2, "ResourceName": "t", "ResourcePatternType": 3, "Principal": "User:bob",
               "Host": "*", "Operation": 3, "PermissionType": 3}
    last = dict(binding, Principal="User:*", Operation=2, ResourceName="*")
    body = encode_body(30, "request", 3, {"Creations": [binding] * 999 + [last]})
    with pytest.raises(BodyTooLarge):
        compiler.decoder_for(schema_for(30, "request"), 3)(body, 0)
    part, end, cut = decode_in_part(schema_for(30, "request"), 3, body, 0)
    assert end == len(body) and part["Creations"] == [binding] * 100 and cut == 900  # as many as the bound holds
    rest = part[NOT_KEPT]["Creations"]
    assert rest == 900 and list(rest.elements()) == [binding] * 899 + [last]
