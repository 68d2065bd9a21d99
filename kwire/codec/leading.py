"""The fields a cut body still holds: the fixed-size fields at its start, read by the schema.

A body the snap length cut cannot be decoded whole, but what it begins with is there: most answers
begin with ThrottleTimeMs and ErrorCode. `leading_fields(schema, version, body, pos)` reads, in the
schema's order, the top-level fields present in that version while each is a fixed-size number (or
bool) and lies wholly inside the captured bytes; it stops at the first field that is not (a string,
an array, a tagged field) or that was not captured. Field names are Kafka's, as the full decoder's.
"""

from __future__ import annotations

import struct

from kwire.codec.schema import MessageSchema

_FIXED = {"int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"),
          "int64": struct.Struct(">q"), "uint16": struct.Struct(">H"), "uint32": struct.Struct(">I"),
          "float64": struct.Struct(">d"), "bool": struct.Struct(">?")}


def leading_fields(schema: MessageSchema, version: int, body, pos: int) -> dict:
    """The fixed-size fields at the start of the body (from `pos`) that were captured."""
    out: dict = {}
    size = len(body)
    for field in schema.fields:
        if not field.present_in(version) or field.tagged_in(version):
            continue
        reader = _FIXED.get(field.type)
        if reader is None or pos + reader.size > size:
            break
        out[field.name] = reader.unpack_from(body, pos)[0]
        pos += reader.size
    return out
