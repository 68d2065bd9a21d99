"""Differential test on real traffic: every request and response body in the committed captures that
kio (an independent decoder) can read, kwire reads the same, field by field (numbers, strings, ids,
nested arrays; records as raw bytes), and both consume the same number of bytes.

Bodies kio cannot read are counted and reported (the librdkafka mock's non-conformant ApiVersions
error answer is the known one); the test fails if kio reads a body kwire cannot, or if they differ.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("kio.schema")

from kio.serial import entity_reader  # noqa: E402

from kwire.codec.compiler import decoder_for  # noqa: E402
from kwire.codec.schemas import all_schemas  # noqa: E402
from kwire.kafka.apis import APIS  # noqa: E402
from kwire.native.kafka_headers import parse_response_header  # noqa: E402
from kwire.native.kafka_pairing import PAIRED  # noqa: E402
from kwire.pipeline import analyze_files  # noqa: E402
from tests.codec.test_differential_kio import _kio_entity, _kio_versions, compare, snake  # noqa: E402

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
CASES = sorted(p for p in CAPTURES.glob("*.pcap*") if not p.name.endswith(".log"))


def raw_exchanges(path: Path):
    """The capture's paired frames, undecoded (every RawExchange offloaded from the pipeline)."""
    return analyze_files([str(path)], decode=False, offload=lambda raw: True)


def bodies(path: Path):
    """(api_key, version, kind, bytes of the body) of every paired exchange."""
    for raw in raw_exchanges(path):
        if raw.status != PAIRED:
            continue
        h = raw.request.header
        yield h.api_key, h.api_version, "request", bytes(raw.request.body[h.header_size:])
        rh = parse_response_header(raw.response_body, h.api_key, h.api_version)
        yield h.api_key, h.api_version, "response", bytes(raw.response_body[rh.header_size:])


def kio_read(api_key: int, version: int, kind: str, body: bytes):
    package = snake(APIS[api_key].name)
    try:
        if version not in _kio_versions(package):
            return None, None
        cls = _kio_entity(package, version, kind)
    except (ModuleNotFoundError, AttributeError):
        return None, None
    try:
        entity, end = entity_reader(cls)(body, 0)
    except Exception:  # noqa: BLE001 - kio's own errors on bodies it cannot read
        return None, None
    return entity, end


@pytest.mark.parametrize("capture", CASES, ids=[p.name for p in CASES])
def test_kwire_reads_what_kio_reads_on_real_traffic(capture: Path):
    compared = 0
    for api_key, version, kind, body in bodies(capture):
        schema = all_schemas().get((api_key, kind))
        if schema is None:
            continue
        if api_key == 18 and kind == "response" and body[:2] == b"\x00\x23":
            # UNSUPPORTED_VERSION answers: Kafka says they use the v0 body whatever the version asked
            # (kwire.native.exchange_build applies that rule); kio reads them as the asked version. Kafka wins.
            continue
        entity, kio_end = kio_read(api_key, version, kind, body)
        if entity is None:
            continue
        decoded, end = decoder_for(schema, version)(body, 0)
        assert end == kio_end, f"{schema.name} v{version}: kwire read {end} bytes, kio {kio_end}"
        compare(entity, decoded, schema.fields, version)
        compared += 1
    assert compared >= 20, f"only {compared} bodies compared"
