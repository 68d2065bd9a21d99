"""The ApiVersions answer that refuses a version: the bodies brokers write for it.

A client opens with the newest ApiVersions it speaks; a broker that does not know that version
answers ErrorCode 35 (UNSUPPORTED_VERSION) with the api versions it supports for ApiVersions, and the
client retries with a lower version on the same connection. That is version negotiation, not a
failure (kwire.analytics counts it as such). Kafka writes this answer as the v0 body whatever the
version asked. librdkafka's mock cluster (2.x) writes a layout of its own for requests of v3 and up:

    ErrorCode int16, ApiKeys count int8 (the count itself, not count + 1),
    ApiKeys[] (ApiKey int16, MinVersion int16, MaxVersion int16; no tagged fields),
    ThrottleTimeMs int32, and no tagged-field section.

`decode_mock_refusal(body, pos)` reads that layout exactly (every byte, nothing left), returning
the fields under Kafka's names plus "_layout": "librdkafka-mock", or raising DecodeError.
`is_version_refusal(api_key, codes)`: is an answer with these error codes this refusal (ApiVersions,
UNSUPPORTED_VERSION and nothing else)? kwire.query.has_error and kwire.analytics leave it out of
errors and failures.
"""

from __future__ import annotations

import struct

from kwire.counts import count as counted
from kwire.errors import DecodeError
from kwire.kafka.primitives import read_uvarint

MOCK_LAYOUT = "librdkafka-mock"
API_VERSIONS = 18
UNSUPPORTED_VERSION = 35
_HEAD = struct.Struct(">hb")
_ENTRY = struct.Struct(">hhh")
_THROTTLE = struct.Struct(">i")


def decode_mock_refusal(body, pos: int) -> dict:
    left = len(body) - pos
    if left < _HEAD.size:
        raise DecodeError(f"ApiVersions refusal: need {counted(_HEAD.size, 'byte')}, {left:,} left", pos)
    code, count = _HEAD.unpack_from(body, pos)
    want = _HEAD.size + max(count, 0) * _ENTRY.size + _THROTTLE.size
    if count < 0 or left != want:
        raise DecodeError(f"ApiVersions refusal: {counted(left, 'byte')} do not hold {counted(count, 'api key')} and "
                          "a throttle time", pos)
    pos += _HEAD.size
    keys = []
    for _ in range(count):
        api_key, low, high = _ENTRY.unpack_from(body, pos)
        keys.append({"ApiKey": api_key, "MinVersion": low, "MaxVersion": high})
        pos += _ENTRY.size
    throttle = _THROTTLE.unpack_from(body, pos)[0]
    return {"ErrorCode": code, "ApiKeys": keys, "ThrottleTimeMs": throttle, "_layout": MOCK_LAYOUT}


def throttle_read_as_asked(refusal: dict) -> int | None:
    """The ThrottleTimeMs a client reads from a mock-layout refusal (`decode_mock_refusal`'s dict) when it reads
    the body in the layout of the v3+ version it asked for (ErrorCode, a compact ApiKeys array whose entries end
    in tagged fields, ThrottleTimeMs), as the Java client does; None when that reading runs out of bytes. One api
    key written as count 1 reads as an empty array, and the key's ApiKey and MinVersion as the throttle: (18, 0)
    is 1,179,648 ms."""
    keys = refusal.get("ApiKeys") or []
    body = _HEAD.pack(refusal.get("ErrorCode") or 0, len(keys)) + b"".join(
        _ENTRY.pack(k["ApiKey"], k["MinVersion"], k["MaxVersion"]) for k in keys) + \
        _THROTTLE.pack(refusal.get("ThrottleTimeMs") or 0)
    pos = 3  # past ErrorCode and the count, a one-byte varint (count < 128)
    for _ in range(len(keys) - 1):  # compact: the count is entries + 1
        pos += _ENTRY.size
        tags, pos = _varint(body, pos)
        for _ in range(tags or 0):
            _, pos = _varint(body, pos)
            size, pos = _varint(body, pos)
            pos += size or 0
        if pos > len(body):
            return None
    if pos + _THROTTLE.size > len(body):
        return None
    return _THROTTLE.unpack_from(body, pos)[0]


def _varint(body: bytes, pos: int) -> tuple[int | None, int]:
    """An unsigned varint (kwire.kafka.primitives.read_uvarint), or (None, past the end) where none can be read."""
    try:
        return read_uvarint(body, pos)
    except DecodeError:
        return None, len(body) + 1


def is_version_refusal(api_key: int | None, codes: list[int]) -> bool:
    return api_key == API_VERSIONS and len(codes) == 1 and codes[0] == UNSUPPORTED_VERSION
