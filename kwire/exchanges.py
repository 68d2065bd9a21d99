"""Turn a RawExchange (paired frames) into an Exchange (decoded bodies).

The response carries no api key or version: it is decoded with its request's. Bodies of apis
without a schema stay None (the exchange still has name, version, ids, sizes and latency). A body
that fails to decode leaves an error string on the exchange, never an exception; bytes left after a
decoded body are counted in request_trailing / response_trailing.

Protocol quirk, kept here: an ApiVersions response whose ErrorCode is UNSUPPORTED_VERSION (35) is
written in the v0 body whatever version was asked (the broker cannot know which the client speaks).
"""

from __future__ import annotations

import struct

from kwire.codec.compiler import decoder_for
from kwire.codec.schemas import schema_for
from kwire.errors import DecodeError
from kwire.kafka.apis import API_VERSIONS_KEY, api_name
from kwire.kafka.headers import parse_response_header
from kwire.kafka.pairing import RawExchange
from kwire.model import Exchange
from kwire.net.segment import format_endpoint

_I16 = struct.Struct(">h")
UNSUPPORTED_VERSION = 35


_BODY_DECODERS: dict[tuple[int, str, int], object] = {}


def body_decoder(api_key: int, kind: str, version: int):
    """The decoder of (api, kind, version), or None when kwire has no schema for it. Cached: this
    is looked up twice per exchange."""
    key = (api_key, kind, version)
    try:
        return _BODY_DECODERS[key]
    except KeyError:
        pass
    schema = schema_for(api_key, kind)
    decoder = None if schema is None or version not in schema.valid else decoder_for(schema, version)
    if len(_BODY_DECODERS) < 4096:  # api keys and versions come off the wire: bound the cache
        _BODY_DECODERS[key] = decoder
    return decoder


def decode_body(api_key: int, kind: str, version: int, body, pos: int) -> tuple[dict | None, str | None, int]:
    """(decoded dict or None, error or None, trailing byte count)."""
    decoder = body_decoder(api_key, kind, version)
    if decoder is None:
        return None, None, 0
    try:
        decoded, end = decoder(body, pos)
    except DecodeError as exc:
        return None, str(exc), 0
    return decoded, None, len(body) - end


_ENDPOINT_NAMES: dict[tuple, str] = {}


def endpoint_name(endpoint) -> str:
    """"ip:port" of an (ip bytes, port) endpoint, cached (every exchange names two)."""
    name = _ENDPOINT_NAMES.get(endpoint)
    if name is None:
        name = format_endpoint(*endpoint)
        if len(_ENDPOINT_NAMES) >= 65536:
            _ENDPOINT_NAMES.clear()
        _ENDPOINT_NAMES[endpoint] = name
    return name


def build_exchange(raw: RawExchange, *, decode: bool = True) -> Exchange:
    conn = raw.conn
    if raw.client_direction == 0:
        client, broker = endpoint_name(conn.a), endpoint_name(conn.b)
    else:
        client, broker = endpoint_name(conn.b), endpoint_name(conn.a)
    ex = Exchange(connection_id=conn.id, client=client, broker=broker, status=raw.status,
                  correlation_id=raw.correlation_id)
    req = raw.request
    if req is not None:
        h = req.header
        ex.api_key = h.api_key
        ex.api = api_name(h.api_key)
        ex.api_version = h.api_version
        ex.client_id = h.client_id
        ex.request_ts_ns = req.ts_ns
        ex.request_size = req.size
        if decode:
            ex.request, ex.request_error, ex.request_trailing = decode_body(
                h.api_key, "request", h.api_version, req.body, h.header_size)
    if raw.response_body is not None:
        ex.response_ts_ns = raw.response_ts_ns
        ex.response_size = raw.response_size
        if req is not None and decode:
            _decode_response(ex, raw.response_body)
    return ex


def _decode_response(ex: Exchange, body) -> None:
    try:
        header = parse_response_header(body, ex.api_key, ex.api_version)
    except DecodeError as exc:
        ex.response_error = f"response header: {exc}"
        return
    if ex.api_key == API_VERSIONS_KEY and len(body) >= header.header_size + 2:
        code = _I16.unpack_from(body, header.header_size)[0]
        if code == UNSUPPORTED_VERSION:
            ex.response, error, ex.response_trailing = decode_body(
                ex.api_key, "response", 0, body, header.header_size)
            if error:
                # Not the v0 body Kafka specifies (librdkafka's mock cluster writes a hybrid): keep
                # the error code, which is all a client reads from this answer, and say so.
                ex.response = {"ErrorCode": code}
                ex.response_error = f"UNSUPPORTED_VERSION answer is not the v0 body Kafka specifies ({error})"
            return
    ex.response, ex.response_error, ex.response_trailing = decode_body(
        ex.api_key, "response", ex.api_version, body, header.header_size)
