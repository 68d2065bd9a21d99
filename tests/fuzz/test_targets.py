"""Hypothesis on every fuzz target (tests/fuzz/targets.py): random bytes, and for the decoders a valid
random encoding of every (api, kind, version) kwire knows, whole and mutated."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import targets

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
@SETTINGS
@given(data=st.binary(max_size=2000))
def test_random_bytes(name, data):
    targets.run(name, data)


@pytest.mark.parametrize("schema, version", targets.SCHEMAS,
                         ids=[f"{s.name}-v{v}" for s, v in targets.SCHEMAS])
def test_every_decoder_on_valid_and_mutated_encodings(schema, version):
    rng = random.Random(f"{schema.name}{version}")
    for _ in range(25):
        valid = targets.encode(schema, version, rng)
        decoded, end = targets.decoder_for(schema, version)(valid, 0)
        assert end == len(valid)
        for cut in range(0, len(valid), max(1, len(valid) // 10)):  # every truncation fails cleanly
            targets.decode_one(schema, version, valid[:cut])
        for _ in range(8):
            targets.decode_one(schema, version, targets.mutate(valid, rng, rng.randrange(1, 6)))


@SETTINGS
@given(st.integers(0, len(targets.SCHEMAS) - 1), st.binary(min_size=1, max_size=64), st.integers(1, 8))
def test_decoders_mutations(index, seed, edits):
    schema, version = targets.SCHEMAS[index]
    rng = random.Random(seed)
    targets.decode_one(schema, version, targets.mutate(targets.encode(schema, version, rng), rng, edits))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 1), st.binary(max_size=300)), max_size=12), st.integers(0, 255))
def test_pipeline_on_framed_garbage(messages, flags):
    """Garbage inside well-formed Kafka length prefixes: the pipeline frames it and decodes what it can."""
    data = bytes([flags])
    for d, body in messages:
        frame = len(body).to_bytes(4, "big") + body
        data += bytes([d, min(len(frame), 255)]) + frame[:255]
    targets.run("pipeline", data)
