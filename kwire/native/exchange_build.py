"""Turn a RawExchange (paired frames) into an Exchange (decoded bodies).

The response carries no api key or version: it is decoded with its request's. What happens to each
body is a kwire.outcomes.BodyOutcome on the exchange, never an exception: decoded; trailing_bytes
(decoded, bytes left after it); null_not_nullable (decoded as if a field the schema does not let be null,
sent null, could be: the strict decoder stopped there with NullNotNullable; when the body does not decode even
so, it is malformed at the null, its first fault); malformed (where and why, from the DecodeError's field, offset and
reason); no_decoder (no schema for the api and version: the body stays None, the exchange still
has name, version, ids, sizes and latency); and what the layers below say left a body undecodable:
PendingRequest.lost / RawExchange.response_lost, a body kind (not_kept: pairing dropped the request
body under its bound, kwire.native.kafka_pairing.MAX_PENDING_BYTES; cut_by_snaplen: the packet path saw the
snap length cut it), carried as `request_lost` / `response_lost` and becoming the body's outcome. A
body past the decoder's entries bound is not_kept, or, of an api that changes the cluster
(kwire.codec.overlay.READ_IN_PART), read in part: kept_in_part (kwire.codec.partial).

An exchange left unanswered by a FIN or RST comes from pairing as connection_closed with the side that closed
first (kwire.outcomes.CLOSED_BY): it becomes unanswered connection_closed and `extra["closed_by"]` that side.

Protocol quirk, kept here: an ApiVersions response whose ErrorCode is UNSUPPORTED_VERSION (35) is
written in the v0 body whatever version was asked (the broker cannot know which the client speaks).

`is_malformed(ex)`: whether a body of the exchange did not decode (what a run's decode errors count; compiled, a C
call that reads the exchange's outcomes in C).
"""

from __future__ import annotations

import struct
from functools import partial
from typing import NamedTuple

from kwire.codec.compiler import decoder_for
from kwire.codec.consumer_protocol import EMBEDDED_API_KEYS, decode_embedded
from kwire.codec.leading import leading_fields
from kwire.codec.overlay import READ_IN_PART
from kwire.codec.partial import decode_in_part
from kwire.codec.schemas import schema_for
from kwire.codec.version_refusal import decode_mock_refusal
from kwire.errors import BodyTooLarge, DecodeError, NullNotNullable
from kwire.fields import reduce_by_fields, set_fields
from kwire.kafka.apis import API_BY_NAME, API_VERSIONS_KEY, api_name
from kwire.native.kafka_headers import header_versions, parse_response_header
from kwire.native.kafka_pairing import RawExchange
from kwire.model import PAIRED, Exchange, new_exchange
from kwire.outcomes import (ANSWER_NOT_CAPTURED, CLOSED_BY, CONNECTION_CLOSED, DECODED_BODY, MALFORMED,
                            NO_DECODER_BODY, BodyOutcome, cut_body, kept_in_part, lost_body, malformed, null_in_body,
                            trailing)

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


def decode_body(api_key: int, kind: str, version: int, body, pos: int) -> tuple[dict | None, BodyOutcome]:
    """(decoded dict or None, what happened to the body)."""
    decoder = body_decoder(api_key, kind, version)
    if decoder is None:
        return None, NO_DECODER_BODY
    try:
        decoded, end = decoder(body, pos)
    except DecodeError as exc:
        return undecoded(api_key, kind, version, body, pos, exc)
    left = len(body) - end
    return decoded, trailing(left) if left else DECODED_BODY


_IN_PART = frozenset(API_BY_NAME[name.lower()].key for name in READ_IN_PART)


def undecoded(api_key: int, kind: str, version: int, body, pos: int, error: DecodeError) -> tuple[dict | None,
                                                                                                    BodyOutcome]:
    """(None, its outcome) for a body that did not decode; one of an api that changes the cluster past the
    entries bound (BodyTooLarge, kwire.codec.overlay.READ_IN_PART) is read in part (kwire.codec.partial): (the
    part kept, kept_in_part), or None and the outcome of why it could not be."""
    if type(error) is NullNotNullable:
        return _with_null(api_key, kind, version, body, pos, error)
    if type(error) is not BodyTooLarge or api_key not in _IN_PART:
        return None, malformed(error)
    try:
        decoded, _, cut = decode_in_part(schema_for(api_key, kind), version, body, pos)
    except DecodeError as exc:
        return None, malformed(exc)
    return decoded, kept_in_part(error, cut)


def _with_null(api_key: int, kind: str, version: int, body, pos: int, error: NullNotNullable):
    """A body with a null the schema does not allow (`error`): decoded by the lenient decoder (null_not_nullable,
    the body shown as it was sent), or, when it does not decode even so, malformed at the null."""
    try:
        decoded, _ = decoder_for(schema_for(api_key, kind), version, lenient=True)(body, pos)
    except DecodeError:
        return None, malformed(error)
    return decoded, null_in_body(error)


class ExchangeParts(NamedTuple):
    """What building an Exchange needs of a RawExchange, as plain values: picklable, so kwire.parallel
    ships them to the worker processes that decode (the bodies then are bytes of their own)."""

    connection_id: int
    client: str  # "ip:port"
    broker: str
    status: str
    correlation_id: int
    api_key: int | None  # None: no request was captured
    api_version: int | None
    client_id: str | None
    header_size: int  # bytes of the request header at the start of request_body
    request_ts_ns: int | None
    request_size: int | None
    request_body: object | None  # the request frame body, header included
    response_ts_ns: int | None
    response_size: int | None
    response_body: object | None  # the response frame body, header included
    given_up_ts_ns: int | None  # no_response: when kwire stopped waiting for the answer
    wire: tuple | None  # where the frames lie on the wire (Exchange.wire), when the run tracks it
    unanswered: str | None  # no_response: why (kwire.outcomes.UNANSWERED_KINDS)
    request_lost: str | None  # why the request body cannot be decoded (a body kind), else None
    response_lost: str | None  # the same for the response body


# Plain values in field order -> ExchangeParts, without NamedTuple's Python-level __new__.
as_parts = partial(tuple.__new__, ExchangeParts)


def exchange_parts(raw: RawExchange, *, owned: bool = False) -> ExchangeParts:
    """What build_from_parts needs of a RawExchange. `owned=True` makes the bodies bytes of their
    own (picklable, for decoding in another process)."""
    return as_parts(_plain_parts(raw, owned))


def _plain_parts(raw: RawExchange, owned: bool) -> tuple:
    """exchange_parts' fields as a plain tuple (what _build reads, compiled, item by item in C)."""
    conn = raw.conn
    names = conn.names  # the connection's, made once
    if names is None:
        names = conn.endpoint_names()
    if raw.client_direction == 0:
        client, broker = names
    else:
        broker, client = names
    resp_body = raw.response_body
    if owned and resp_body is not None and type(resp_body) is not bytes:
        resp_body = bytes(resp_body)
    req = raw.request
    if req is None:
        return (conn.id, client, broker, raw.status, raw.correlation_id, None, None, None, 0,
                None, None, None, raw.response_ts_ns, raw.response_size, resp_body, None,
                _wire(raw, None), raw.unanswered, None, raw.response_lost)
    header = req.header  # compiled: an extension type, its fields read in C (kwire/native/exchange_build.pxd)
    api_key, api_version, client_id, header_size = header.api_key, header.api_version, header.client_id, \
        header.header_size
    body = req.body
    if owned and body is not None and type(body) is not bytes:  # None: a body pairing did not keep
        body = bytes(body)
    return (conn.id, client, broker, raw.status, raw.correlation_id, api_key, api_version,
            client_id, header_size, req.ts_ns, req.size, body, raw.response_ts_ns,
            raw.response_size, resp_body, raw.given_up_ts_ns, _wire(raw, req.span), raw.unanswered,
            req.lost, raw.response_lost)


def _wire(raw: RawExchange, request_span) -> tuple | None:
    if request_span is None and raw.response_span is None:
        return None
    start = raw.conn.start_seq
    d = raw.client_direction
    return (start[d], start[1 - d], request_span, raw.response_span)


class _Plan:
    """What building an exchange of one (api, version) needs, looked up once per exchange: the api's
    name, its body decoders, whether its response header is flexible (kwire.native.kafka_headers)."""

    __slots__ = ("name", "request", "response", "flexible_header", "embedded")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, api_key: int, version: int):
        self.name = api_name(api_key)
        self.request = body_decoder(api_key, "request", version)
        self.response = body_decoder(api_key, "response", version)
        self.flexible_header = header_versions(api_key, version)[1] >= 1
        self.embedded = api_key in EMBEDDED_API_KEYS


_PLANS: dict[tuple[int, int], _Plan] = {}


def _plan(api_key: int, version: int) -> _Plan:
    plan = _PLANS.get((api_key, version))
    if plan is None:
        plan = _Plan(api_key, version)
        if len(_PLANS) < 4096:  # api keys and versions come off the wire: bound the cache
            _PLANS[(api_key, version)] = plan
    return plan


def build_from_parts(parts: ExchangeParts, *, decode: bool = True) -> Exchange:
    """The Exchange of an ExchangeParts (or of the same fields as a plain tuple)."""
    return _build(parts if type(parts) is tuple else tuple(parts), decode)


def _build(parts: tuple, decode: bool) -> Exchange:
    (conn_id, client, broker, status, corr, api_key, api_version, client_id, header_size,
     req_ts, req_size, req_body, resp_ts, resp_size, resp_body, given_up_ts, wire, unanswered, req_lost,
     resp_lost) = parts
    if resp_body is None:
        resp_ts = resp_size = None
    if api_key is None:
        return new_exchange(conn_id, client, broker, status, corr, None, None, None, None, None, resp_ts, given_up_ts,
                            None, resp_size, None, None, None,
                            lost_body(resp_lost) if resp_lost is not None else None, None, {}, wire)
    plan = _PLANS.get((api_key, api_version)) or _plan(api_key, api_version)
    request = response = req_outcome = resp_outcome = None
    if req_lost is not None:
        req_outcome = lost_body(req_lost)
    elif req_body is not None and req_size > len(req_body) + 4:
        req_outcome = cut_body(len(req_body) + 4, req_size)
    elif decode and req_body is not None:
        # decode_body's try, inline here and in _decode_response (a shared function: +0.55 % instructions for
        # inspect --json -j 0 on many small exchanges, callgrind, pure Python)
        decoder = plan.request
        if decoder is None:
            req_outcome = NO_DECODER_BODY
        else:
            try:
                request, end = decoder(req_body, header_size)
                left = len(req_body) - end
                req_outcome = trailing(left) if left else DECODED_BODY
            except DecodeError as exc:
                request, req_outcome = undecoded(api_key, "request", api_version, req_body, header_size, exc)
    if resp_lost is not None:
        resp_outcome = lost_body(resp_lost)
    elif resp_body is not None and decode:
        if resp_size > len(resp_body) + 4:
            response, resp_outcome = _cut_response(api_key, api_version, resp_body, resp_size)
        else:
            response, resp_outcome = _decode_response(plan, api_key, api_version, resp_body)
    elif resp_body is None and status == PAIRED:  # kwire.native.kafka_pairing: answered, answer not captured
        resp_outcome = ANSWER_NOT_CAPTURED
    # every field at once (kwire.model.new_exchange: compiled, set in C, no __init__ to parse its arguments)
    extra = {}
    if unanswered is not None and unanswered in CLOSED_BY:  # connection_closed, with the side that closed first
        extra = {"closed_by": CLOSED_BY[unanswered]}
        unanswered = CONNECTION_CLOSED
    ex = new_exchange(conn_id, client, broker, status, corr, api_key, plan.name, api_version, client_id, req_ts,
                      resp_ts, given_up_ts, req_size, resp_size, request, response, req_outcome, resp_outcome,
                      unanswered, extra, wire)
    if decode and plan.embedded:
        decode_embedded(ex)
    return ex


def build_exchange(raw: RawExchange, *, decode: bool = True) -> Exchange:
    return _build(_plain_parts(raw, False), decode)


def _decode_response(plan: _Plan, api_key: int, version: int, body) -> tuple[dict | None, BodyOutcome]:
    """(decoded response or None, its outcome). The header is kwire.native.kafka_headers'; its common
    cases (no tagged field in a flexible header, a header of correlation id alone) are read here."""
    if plan.flexible_header:
        pos = 5 if len(body) > 4 and not body[4] else -1
    else:
        pos = 4 if len(body) >= 4 else -1
    if pos < 0:
        try:
            pos = parse_response_header(body, api_key, version).header_size
        except DecodeError as exc:
            return None, malformed(exc)._replace(field=exc.field or "<response header>")
    if api_key == API_VERSIONS_KEY and len(body) >= pos + 2:
        code = _I16.unpack_from(body, pos)[0]
        if code == UNSUPPORTED_VERSION:
            response, outcome = decode_body(api_key, "response", 0, body, pos)
            if outcome.kind == MALFORMED:
                response, outcome = _refusal(body, pos, outcome)
            return response, outcome
    decoder = plan.response  # decode_body's try, inline (see build_from_parts)
    if decoder is None:
        return None, NO_DECODER_BODY
    try:
        response, end = decoder(body, pos)
    except DecodeError as exc:
        return undecoded(api_key, "response", version, body, pos, exc)
    left = len(body) - end
    return response, trailing(left) if left else DECODED_BODY


def _cut_response(api_key: int, version: int, body, size: int) -> tuple[dict | None, BodyOutcome]:
    """A response the snap length cut: marked so, with the fixed-size fields it begins with (an
    ErrorCode that was captured still counts)."""
    outcome = cut_body(len(body) + 4, size)
    schema = schema_for(api_key, "response")
    if schema is None:
        return None, outcome
    try:
        header = parse_response_header(body, api_key, version)
    except DecodeError:
        return None, outcome
    return leading_fields(schema, version, body, header.header_size) or None, outcome


def _refusal(body, pos: int, v0: BodyOutcome) -> tuple[dict, BodyOutcome]:
    """An UNSUPPORTED_VERSION answer that is not the v0 body: librdkafka's mock cluster layout
    (kwire.codec.version_refusal), else the error code alone, which is all a client reads of it."""
    try:
        return decode_mock_refusal(body, pos), DECODED_BODY
    except DecodeError:
        return ({"ErrorCode": UNSUPPORTED_VERSION},
                v0._replace(reason=f"UNSUPPORTED_VERSION answer is not the v0 body Kafka specifies ({v0.reason})"))


def is_malformed(ex: Exchange) -> bool:
    """A body of the exchange did not decode as Kafka's schema says (what `decode_errors` counts and
    `failed` includes); bodies not kept, cut or without a decoder are not malformed."""
    req, resp = ex.request_outcome, ex.response_outcome
    return ((req is not None and req is not DECODED_BODY and req.kind == MALFORMED)  # most bodies: DECODED_BODY
            or (resp is not None and resp is not DECODED_BODY and resp.kind == MALFORMED))
