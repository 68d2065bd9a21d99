"""Kafka request and response headers: parsing and plausibility.

Request header v0: api_key int16, api_version int16, correlation_id int32.
v1 adds client_id: a nullable int16-length string (never compact, even in v2: a protocol quirk).
v2 adds a tagged-field section. Response header v0: correlation_id; v1 adds tagged fields.
Which version applies comes from kwire.kafka.apis.

`plausible_request` is the test kwire uses to find Kafka on any port and to resynchronise after a
gap: a sane length, a known api key, a version Kafka defined, a non-negative correlation id and a
client id of printable characters.
"""

from __future__ import annotations

import struct
from functools import partial
from typing import NamedTuple

from kwire.native import c_reads
from kwire.fields import fields_equal, fields_repr, reduce_by_fields, set_fields
from kwire.kafka.primitives import read_uvarint
from kwire.errors import DecodeError
from kwire.kafka.apis import APIS, request_header_version, response_header_version

_REQ_FIXED = struct.Struct(">hhi")
_I16 = struct.Struct(">h")
_unpack_fixed = _REQ_FIXED.unpack_from  # bound once
_I32 = struct.Struct(">i")

MAX_CLIENT_ID = 1024


class RequestHeader:
    """A request header's fields. (A class of its own rather than a named tuple: the compiled core makes it
    an extension type, kwire/native/kafka_headers.pxd, whose fields the pairing and the main process's offloading
    read in C; it compares and prints as a dataclass would.)"""

    __slots__ = ("api_key", "api_version", "correlation_id", "client_id", "header_size", "tagged")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, api_key: int, api_version: int, correlation_id: int, client_id: str | None,
                 header_size: int, tagged: dict | None):
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id
        self.header_size = header_size  # bytes of the header, from the start of the frame body
        self.tagged = tagged  # the tagged fields (tag -> hex of their bytes), None when there are none

    def __repr__(self) -> str:
        return fields_repr(self, _HEADER_FIELDS)

    def __eq__(self, other) -> bool:
        return fields_equal(self, other, _HEADER_FIELDS)

    __hash__ = None


_HEADER_FIELDS = RequestHeader.__slots__


def _request_header(api_key: int, api_version: int, correlation_id: int, client_id: str | None,
                    header_size: int, tagged: dict | None) -> RequestHeader:
    """A RequestHeader made without a call of its __init__ (compiled: its fields set in C)."""
    header = RequestHeader.__new__(RequestHeader)
    header.api_key = api_key
    header.api_version = api_version
    header.correlation_id = correlation_id
    header.client_id = client_id
    header.header_size = header_size
    header.tagged = tagged
    return header


class ResponseHeader(NamedTuple):
    correlation_id: int
    header_size: int


_new_response_header = partial(tuple.__new__, ResponseHeader)


def _skip_tagged(buf, pos: int) -> tuple[dict | None, int]:
    count, pos = read_uvarint(buf, pos)
    if not count:
        return None, pos
    tags: dict = {}
    for _ in range(count):
        tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        if pos + size > len(buf):
            raise DecodeError("tagged field runs past the header", pos)
        tags[tag] = bytes(buf[pos:pos + size]).hex()
        pos += size
    return tags, pos


_HEADER_VERSIONS: dict[int, tuple[int, int]] = {}  # version_key(api_key, api_version) -> header_versions


def version_key(api_key: int, api_version: int) -> int:
    """An api key and version, both int16 as the wire has them, as one int (a dict key dearer as a tuple)."""
    return (api_key & 0xFFFF) << 16 | (api_version & 0xFFFF)


def header_versions(api_key: int, api_version: int) -> tuple[int, int]:
    """(request header version, response header version), cached for the apis kwire knows."""
    key = version_key(api_key, api_version) if api_key in APIS and -1 <= api_version <= 64 else None
    hit = _HEADER_VERSIONS.get(key) if key is not None else None  # bounded: the wire chooses these numbers
    if hit is None:
        hit = (request_header_version(api_key, api_version), response_header_version(api_key, api_version))
        if key is not None:
            _HEADER_VERSIONS[key] = hit
    return hit


def parse_request_header(body) -> RequestHeader:
    """Parse the header at the start of a request frame body (the bytes after the length prefix)."""
    size = len(body)
    if size >= 10:  # native code's read (kwire.native.c_reads: compiled, C reads into C integers)
        api_key, version, corr, n = c_reads._request_head(body)
    elif size >= 8:
        api_key, version, corr = _unpack_fixed(body, 0)
        n = -2  # no room for the client id's length (-1 is a null client id)
    else:
        raise DecodeError("request header needs 8 bytes", 0)
    hit = _HEADER_VERSIONS.get(version_key(api_key, version))  # both int16: read as such above
    hv = (hit if hit is not None else header_versions(api_key, version))[0]
    if hv < 1:
        return _request_header(api_key, version, corr, None, 8, None)
    if n == -2:
        raise DecodeError("request header: client id length missing", 8)
    pos = 10
    client_id = None
    if n >= 0:
        pos = 10 + n
        if pos > size:
            raise DecodeError("request header: client id runs past the frame", 10)
        client_id = c_reads._utf8(body, 10, pos)
    tagged = None
    if hv >= 2:
        if pos < size and not body[pos]:
            pos += 1  # no tagged fields: the common case
        else:
            tagged, pos = _skip_tagged(body, pos)
    return _request_header(api_key, version, corr, client_id, pos, tagged)


def parse_cut_request_header(body) -> RequestHeader:
    """The header of a request whose frame the snap length cut: parse_request_header's, or, when the
    cut falls inside the client id or the tagged fields, the api, version and correlation id alone
    (client id None, the header taken to run to the end of what was captured)."""
    try:
        return parse_request_header(body)
    except DecodeError:
        if len(body) < 8:
            raise
    api_key, version, corr = _REQ_FIXED.unpack_from(body, 0)
    return _request_header(api_key, version, corr, None, len(body), None)


def parse_response_header(body, api_key: int, api_version: int) -> ResponseHeader:
    if len(body) < 4:
        raise DecodeError("response header needs 4 bytes", 0)
    corr = _I32.unpack_from(body, 0)[0]
    pos = 4
    if header_versions(api_key, api_version)[1] >= 1:
        if len(body) > 4 and not body[4]:
            pos = 5
        else:
            _, pos = _skip_tagged(body, pos)
    return _new_response_header((corr, pos))


def _printable(raw) -> bool:
    for b in raw:
        if b < 0x20 or b > 0x7E:
            return False
    return True


def plausible_request(buf, pos: int, max_frame: int) -> bool:
    """Do the bytes at `pos` (length prefix included) look like the start of a Kafka request?"""
    if pos + 14 > len(buf):
        return False
    length = _I32.unpack_from(buf, pos)[0]
    if length < 10 or length > max_frame:
        return False
    api_key, version, corr = _REQ_FIXED.unpack_from(buf, pos + 4)
    spec = APIS.get(api_key)
    if spec is None or not spec.min_version <= version <= spec.max_version or corr < 0:
        return False
    n = _I16.unpack_from(buf, pos + 12)[0]
    if n < -1 or n > MAX_CLIENT_ID or 10 + max(n, 0) > length:
        return False
    if n > 0:
        end = pos + 14 + n
        if end > len(buf):
            return _printable(buf[pos + 14:len(buf)])
        return _printable(buf[pos + 14:end])
    return True
