"""Kafka's wire primitives, read from a buffer at an offset, never past its end.

Every reader takes (buf, pos) and returns (value, new_pos); `buf` is bytes or a memoryview.
Lengths read from the wire are checked against the bytes left before anything is allocated.
A short or malformed buffer raises DecodeError carrying the offset. The compiled decoders
(kwire.codec.compiler) inline the fixed-width reads; these functions serve the variable-width ones
and the record-batch reader.
"""

from __future__ import annotations

import base64
import struct

from kwire.counts import count as counted
from kwire.errors import DecodeError

INT8 = struct.Struct(">b")
INT16 = struct.Struct(">h")
UINT16 = struct.Struct(">H")
INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")
INT64 = struct.Struct(">q")
FLOAT64 = struct.Struct(">d")


def need(buf, pos: int, size: int) -> None:
    """Raise unless `size` bytes are left at `pos`."""
    if size < 0 or pos + size > len(buf):
        raise DecodeError(f"need {counted(size, 'byte')}, {max(len(buf) - pos, 0):,} left", pos)


def _read_leb128(buf, pos: int, max_shift: int, what: str) -> tuple[int, int]:
    result = 0
    shift = 0
    end = len(buf)
    while True:
        if pos >= end:
            raise DecodeError(f"{what} runs past the end", pos)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > max_shift:
            raise DecodeError(f"{what} longer than {max_shift // 7 + 1} bytes", pos)


def read_uvarint(buf, pos: int) -> tuple[int, int]:
    """Unsigned LEB128 varint of at most 5 bytes (Kafka's unsigned varint is 32 bits)."""
    if 0 <= pos < len(buf):
        b = buf[pos]
        if b < 0x80:  # one byte: the common case
            return b, pos + 1
    return _read_leb128(buf, pos, 28, "varint")


def read_uvarlong(buf, pos: int) -> tuple[int, int]:
    """Unsigned LEB128 varint of at most 10 bytes (64 bits)."""
    return _read_leb128(buf, pos, 63, "varlong")


def read_varint(buf, pos: int) -> tuple[int, int]:
    """Zigzag-encoded signed 32-bit varint (record fields)."""
    raw, pos = read_uvarint(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(buf, pos: int) -> tuple[int, int]:
    """Zigzag-encoded signed 64-bit varint (record timestamp and offset deltas)."""
    raw, pos = read_uvarlong(buf, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def kafka_uuid(raw: bytes) -> str:
    """Kafka's text form of a Uuid: URL-safe base64 of the 16 bytes, no padding (as kafka-topics shows)."""
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode("ascii")
