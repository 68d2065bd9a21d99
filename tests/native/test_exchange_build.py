"""kwire.native.exchange_build.build_from_parts against the plain way of decoding one body (decode_body, with
kwire.native.kafka_headers.parse_response_header for where a response body starts): its per-(api, version)
plan and its in-place reading of common response headers must give the same bodies and outcomes."""

from pathlib import Path

import pytest

from kwire.codec.consumer_protocol import EMBEDDED_API_KEYS
from kwire.errors import DecodeError
from kwire.native.exchange_build import build_from_parts, decode_body, exchange_parts
from kwire.native.kafka_headers import parse_response_header
from kwire.outcomes import MALFORMED
from kwire.pipeline import analyze_files

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted(p for p in (ROOT / "captures").rglob("*") if p.suffix in (".pcap", ".pcapng")
                  and ".truth." not in p.name and not (p.parent / (p.name + ".keys")).exists())


def raw_exchanges(capture: Path):
    taken = []
    list(analyze_files([str(capture)], offload=lambda raw: taken.append(raw) or True))
    return taken


def expected_response(parts):
    try:
        pos = parse_response_header(parts.response_body, parts.api_key, parts.api_version).header_size
    except DecodeError:
        return None, MALFORMED
    decoded, outcome = decode_body(parts.api_key, "response", parts.api_version, parts.response_body, pos)
    return decoded, outcome.kind


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_every_exchange_of_a_committed_capture_decodes_as_the_plain_way(capture):
    checked = 0
    for raw in raw_exchanges(capture):
        parts = exchange_parts(raw)
        ex = build_from_parts(parts)
        if parts.api_key is None or parts.request_body is None or parts.request_lost:
            continue
        if parts.api_key in EMBEDDED_API_KEYS:  # decode_embedded adds to their bodies
            continue
        if parts.request_size == len(parts.request_body) + 4:
            request, outcome = decode_body(parts.api_key, "request", parts.api_version, parts.request_body,
                                           parts.header_size)
            assert (ex.request, ex.request_outcome) == (request, outcome)
        whole = parts.response_body is not None and parts.response_size == len(parts.response_body) + 4
        if whole and not parts.response_lost and parts.api_key != 18:  # ApiVersions: its own quirk, tested apart
            response, kind = expected_response(parts)
            assert ex.response == response and ex.response_outcome.kind == kind
            checked += 1
    assert checked


def produce_parts(response_body: bytes):
    """One Produce v10 exchange of produce-consume-none.pcap with its response body replaced."""
    for raw in raw_exchanges(ROOT / "captures" / "produce-consume-none.pcap"):
        parts = exchange_parts(raw, owned=True)
        if parts.api_key == 0 and parts.response_body is not None:
            return parts._replace(response_body=response_body, response_size=len(response_body) + 4), parts
    raise AssertionError("no Produce exchange")


def test_a_flexible_response_header_with_tagged_fields_is_read_by_the_header_parser():
    _, parts = produce_parts(b"")
    if parts.api_version < 9:
        pytest.skip("the capture's Produce is not flexible")
    body = bytes(parts.response_body)
    plain = build_from_parts(parts)
    tagged = body[:4] + b"\x01\x07\x02\xab\xcd" + body[5:]  # header: one unknown tagged field, 2 bytes
    assert body[4] == 0
    ex = build_from_parts(parts._replace(response_body=tagged, response_size=len(tagged) + 4))
    assert ex.response == plain.response and ex.response_outcome == plain.response_outcome


@pytest.mark.parametrize("body", [b"", b"\x00\x00", b"\x00\x00\x00\x01", b"\x00\x00\x00\x01\x05\x01"])
def test_a_response_too_short_for_its_header_is_malformed_in_the_header(body):
    parts, _ = produce_parts(body)
    ex = build_from_parts(parts)
    try:
        parse_response_header(body, parts.api_key, parts.api_version)
    except DecodeError:
        assert ex.response is None and ex.response_outcome.kind == MALFORMED
        assert ex.response_outcome.field == "<response header>"
    else:
        assert ex.response_outcome.kind == MALFORMED and ex.response_outcome.field != "<response header>"
