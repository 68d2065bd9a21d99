"""Test-only: nulls wherever a body can hold one, in every api and version kwire has schemas for (issue 49).

For each (api, version) of kwire.codec.schemas, a request and a response with every field given a value
(`populated`: arrays of one element, strings named after their field, a record batch whose key, value and
header value are null), and copies of each with nulls in it, one exchange per copy:
- "nullable": each field the schema declares nullable in that version set null, one at a time, then all at
  once (request and response together);
- "lenient": each string, bytes, records and array field (and an element of an array of strings) the schema
  does not declare nullable sent as null all the same (-1, or a compact 0): kwire decodes those as null
  rather than failing the body (docs/internals.md, "Lenient where a sniffer must be"), so everything
  downstream meets None there too. The issue's SyncGroup whose assignment names a null member id is one;
- "embedded": the consumer-protocol messages (kwire.codec.consumer_protocol) inside JoinGroup, SyncGroup and
  DescribeGroups bodies, with each of their fields null in turn (protocol type "consumer").
- "header": the request header's client id (a nullable string) null, once per api and version.

`null_exchanges(seed, kinds, apis)` yields (api key, label, request frame, response frame), the label saying
what is null ("v3 lenient request Assignments.0.MemberId"); `write_capture(path, seed, scale, kinds, apis)`
writes them to a pcap, one connection per api key (client id "nulls-<api key>"; null in the "header" kind),
the whole set `scale` times (scale 1: 4,273 exchanges, 3.5 MB; the scale stays under 20 MB up to 5).
Returns the number of exchanges written.
"""

from __future__ import annotations

import copy
import random
import struct

from kwire.capture.pcapwrite import PcapWriter
from kwire.codec.consumer_protocol import ASSIGNMENT, SUBSCRIPTION
from kwire.codec.schema import GROUP_ID, TOPIC_NAME, Field
from kwire.codec.schemas import all_schemas
from tests.campaign.traffic import ETHERNET, Traffic, client_address
from tests.codec.test_records_encoder import v2_batch
from tests.kafka.frames import request_frame, response_frame
from tests.render.hostile import _ValueEncoder

KINDS = ("nullable", "lenient", "embedded", "header")
UUID = bytes(range(1, 17))
# A batch of two records: a null key, a null value, a header whose value is null.
BATCH = v2_batch([(None, b"value", [(b"h", None)]), (b"key", None)], base_ts=1_795_305_690_000)
# Bytes fields that hold a consumer-protocol message: (api key, field name) -> its schema.
EMBEDDED = {(11, "Metadata"): SUBSCRIPTION, (15, "MemberMetadata"): SUBSCRIPTION,
            (14, "Assignment"): ASSIGNMENT, (15, "MemberAssignment"): ASSIGNMENT}


class NullEncoder(_ValueEncoder):
    """tests/render/hostile's encoder where None is always written as a null (a string, bytes or array
    the schema does not allow null included), and nullable structs carry their int8 marker."""

    def scalar(self, f: Field, elem: str, value) -> bytes:
        if value is None and elem == "string":
            return self.length(None)
        return super().scalar(f, elem, value)

    def field_value(self, f: Field, value) -> bytes:
        if f.is_array and value is None:
            return self.length(None, wide=True)
        if f.is_struct and not f.is_array and f.nullable_in(self.v):
            return b"\xff" if value is None else b"\x01" + self.struct_values(f.fields or (), value)
        return super().field_value(f, value)


def encode(schema, version: int, values: dict) -> bytes:
    return NullEncoder(version, schema.is_flexible(version)).struct_values(schema.fields, values)


class Filler:
    """What populated bodies hold: strings named after their field (topics "topic-a", groups "group-a",
    protocol types "consumer"), `batch` in record sets. tests/hostile3/control.py fills them otherwise."""

    batch = BATCH

    def string(self, f: Field, i: int) -> str:
        if f.entity == TOPIC_NAME:
            text = "topic-a"
        elif f.entity == GROUP_ID:
            text = "group-a"
        elif f.name.endswith("ProtocolType"):
            return "consumer"
        else:
            text = f.name.lower()
        return f"{text}-{i}" if i else text


PLAIN = Filler()


def _scalar(api_key: int, f: Field, elem: str, i: int, fill: Filler):
    if elem == "bool":
        return True
    if elem == "float64":
        return 1.5
    if elem == "uuid":
        return UUID[:15] + bytes([i])
    if elem == "string":
        return fill.string(f, i)
    if elem == "records":
        return fill.batch
    if elem == "bytes":
        schema = EMBEDDED.get((api_key, f.name))
        return b"\x00\x01" if schema is None else embedded_message(schema, populated(schema, 3, api_key, fill))
    return 0 if f.name.endswith("ErrorCode") else 1 + i


def populated_fields(api_key: int, fields, version: int, i: int = 0, fill: Filler = PLAIN) -> dict:
    """Every field of `fields` present in `version` given a value; arrays of two elements (so that
    whatever sorts them compares a null with a value), the second's names ending in "-1"."""
    out: dict = {}
    for f in fields:
        if not f.present_in(version):
            continue
        if f.is_struct and f.is_array:
            out[f.name] = [populated_fields(api_key, f.fields or (), version, n, fill) for n in (i, i + 1)]
        elif f.is_struct:
            out[f.name] = populated_fields(api_key, f.fields or (), version, i, fill)
        elif f.is_array:
            out[f.name] = [_scalar(api_key, f, f.element_type, n, fill) for n in (i, i + 1)]
        else:
            out[f.name] = _scalar(api_key, f, f.type, i, fill)
    return out


def populated(schema, version: int, api_key: int | None = None, fill: Filler = PLAIN) -> dict:
    return populated_fields(schema.api_key if api_key is None else api_key, schema.fields, version, 0, fill)


def null_paths(fields, version: int, lenient: bool, path: tuple = ()):
    """The paths (names, 0 for an array's element) to every field that may be sent null: declared
    nullable (`lenient` False), or a string, bytes, records or array one that is not (`lenient` True).
    Outer fields come before the fields inside them."""
    for f in fields:
        if not f.present_in(version):
            continue
        here = path + (f.name,)
        nullable = f.nullable_in(version)
        can = f.is_array or f.type in ("string", "bytes", "records") or (f.is_struct and nullable)
        if can and nullable != lenient:
            yield here
        if f.is_array and not f.is_struct and f.element_type == "string" and lenient:
            yield here + (0,)
        if f.is_struct:
            yield from null_paths(f.fields or (), version, lenient, here + ((0,) if f.is_array else ()))


def with_nulls(values: dict, paths) -> dict | None:
    """A copy of `values` with each path set null (a path inside one already null is skipped); None
    when no path could be set."""
    out = copy.deepcopy(values)
    done = 0
    for path in paths:
        node = out
        for step in path[:-1]:
            node = node[step] if node is not None else None
            if node is None:
                break
        if node is not None:
            node[path[-1]] = None
            done += 1
    return out if done else None


def embedded_message(schema, values: dict, version: int = 3) -> bytes:
    """A consumer-protocol message: its int16 version, then the message (never flexible)."""
    return struct.pack(">h", version) + NullEncoder(version, False).struct_values(schema.fields, values)


def frames(api_key: int, version: int, corr: int, request: dict, response: dict,
            client_id: str | None) -> tuple[bytes, bytes]:
    schemas = all_schemas()
    req_schema, resp_schema = schemas[(api_key, "request")], schemas[(api_key, "response")]
    flexible = req_schema.is_flexible(version)
    return (request_frame(api_key, version, corr, client_id, encode(req_schema, version, request),
                          flexible=flexible),
            response_frame(corr, encode(resp_schema, version, response), flexible=flexible and api_key != 18))


def _variants(request_schema, response_schema, version: int, kind: str):
    """(label, request values, response values) of one (api, version) for one kind of null."""
    req, resp = populated(request_schema, version), populated(response_schema, version)
    if kind == "embedded":
        yield from _embedded_variants(request_schema.api_key, req, resp)
        return
    if kind == "header":  # the request header's client id (a nullable string) null
        yield "client id", req, resp
        return
    lenient = kind == "lenient"
    req_paths = list(null_paths(request_schema.fields, version, lenient))
    resp_paths = list(null_paths(response_schema.fields, version, lenient))
    for path in req_paths:
        yield f"request {'.'.join(map(str, path))}", with_nulls(req, [path]), resp
    for path in resp_paths:
        yield f"response {'.'.join(map(str, path))}", req, with_nulls(resp, [path])
    if req_paths or resp_paths:
        yield "all", with_nulls(req, req_paths) or req, with_nulls(resp, resp_paths) or resp


def _embedded_variants(api_key: int, req: dict, resp: dict):
    """Each field of the consumer-protocol messages null in turn, in the bytes fields that hold them."""
    for (key, name), schema in EMBEDDED.items():
        if key != api_key:
            continue
        base = populated(schema, 3, api_key)
        for lenient in (False, True):
            for path in null_paths(schema.fields, 3, lenient):
                message = embedded_message(schema, with_nulls(base, [path]))
                label = f"{schema.name} {'.'.join(map(str, path))}"
                r1, r2 = _put(req, name, message), _put(resp, name, message)
                if r1 is not req or r2 is not resp:
                    yield label, r1, r2


def _put(values: dict, name: str, message: bytes) -> dict:
    """A copy of `values` with every bytes field `name` (at any depth) holding `message`; `values`
    itself when it has none."""
    found = [False]

    def walk(node):
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key == name and isinstance(value, bytes):
                out[key] = message
                found[0] = True
            else:
                out[key] = walk(value)
        return out

    out = walk(values)
    return out if found[0] else values


def null_exchanges(seed: int = 49, kinds=KINDS, apis=None):
    """(api key, label, request frame, response frame) of every variant, api by api (those of `apis`
    when given); each api's exchanges in an order drawn from `seed`."""
    rng = random.Random(seed)
    schemas = all_schemas()
    for api_key in sorted({key for key, _ in schemas}):
        request_schema, response_schema = schemas.get((api_key, "request")), schemas.get((api_key, "response"))
        if request_schema is None or response_schema is None or apis is not None and api_key not in apis:
            continue
        found = []
        v = request_schema.valid
        for version in range(v.lo, (v.hi if v.hi is not None else v.lo) + 1):
            for kind in kinds:
                for label, req, resp in _variants(request_schema, response_schema, version, kind):
                    client_id = None if kind == "header" else f"nulls-{api_key}"
                    found.append((version, f"v{version} {kind} {label}", req, resp, client_id))
        rng.shuffle(found)
        for corr, (version, label, req, resp, client_id) in enumerate(found, start=1):
            yield (api_key, label) + frames(api_key, version, corr, req, resp, client_id)


def write_capture(path, seed: int = 49, scale: int = 1, kinds=KINDS, apis=None) -> int:
    """The variants as a pcap: one connection per api key and round (`scale` rounds)."""
    written = 0
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        conns: dict = {}
        for round_ in range(scale):
            for api_key, _label, request, response in null_exchanges(seed + round_, kinds, apis):
                conn = conns.get((round_, api_key))
                if conn is None:
                    for old in conns.values():
                        old.close()
                    conns = {(round_, api_key): traffic.connection(client_address(round_ * 1000 + api_key))}
                    conn = conns[(round_, api_key)]
                conn.exchange([(0, request), (1, response)])
                written += 1
        for conn in conns.values():
            conn.close()
    return written
