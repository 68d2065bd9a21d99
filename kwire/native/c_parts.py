"""kwire/native/c_parts.pxd's wire format in Python: what the pure-Python build runs under the same names (a
compiled module cimports the .pxd as `c_parts`, so there each is C). kwire.native.exchange_wire's docstring gives the
format; tests/native/test_exchange_wire.py holds the two builds to the same bytes.

A writer takes the batch's bytearray and the bytes packed in it and returns the bytes packed after the value, -1
when it wrote nothing (the caller writes the value its other way); `_unpack(data, unpickled)` reads the rows back,
ValueError on anything PartsWriter does not write.
"""

from __future__ import annotations

import struct

NONE, INT, TEXT, BYTES, PICKLED = 0, 1, 2, 3, 4
HEAD = struct.Struct("<IB")  # rows, width
MAX_SIZE = 0xFFFFFFFF  # a value's bytes: a u32
_INT = struct.Struct("<Bq")
_SIZED = struct.Struct("<BI")
_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def _written(buf: bytearray, packed: int, data) -> int:
    del buf[packed:]
    buf += data
    return len(buf)


def _put_none(buf: bytearray, packed: int) -> int:
    return _written(buf, packed, b"\0")


def _put_int(buf: bytearray, packed: int, value: int) -> int:
    if not _I64_MIN <= value <= _I64_MAX:
        return -1
    return _written(buf, packed, _INT.pack(INT, value))


def _put_sized(buf: bytearray, packed: int, tag: int, data) -> int:
    if len(data) > MAX_SIZE:
        return -1
    return _written(buf, _written(buf, packed, _SIZED.pack(tag, len(data))), data)


def _put_text(buf: bytearray, packed: int, value: str) -> int:
    try:
        data = value.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return -1
    return _put_sized(buf, packed, TEXT, data)


def _put_bytes(buf: bytearray, packed: int, value) -> int:
    view = memoryview(value)
    if not view.c_contiguous:
        return -1
    return _put_sized(buf, packed, BYTES, view.cast("B") if view.itemsize != 1 or view.ndim != 1 else view)


def _unpack(data, unpickled) -> list[tuple]:
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1 or not view.c_contiguous:
        view = memoryview(view.tobytes())
    end = len(view)
    if end < HEAD.size:
        raise ValueError("packed exchange parts: shorter than their head")
    count, width = HEAD.unpack_from(view, 0)
    if count and not width:  # PartsWriter never writes it: rows of nothing, as many as the head says
        raise ValueError("packed exchange parts: rows of no values")
    pos = HEAD.size
    rows = []
    for _ in range(count):
        values = []
        for _ in range(width):
            value, pos = _take(view, pos, end, unpickled)
            values.append(value)
        rows.append(tuple(values))
    if pos != end:
        raise ValueError(f"packed exchange parts: {end - pos} bytes after the last row")
    return rows


def _take(view: memoryview, pos: int, end: int, unpickled) -> tuple[object, int]:
    """The value at pos, and where the next one starts."""
    if pos >= end:
        raise ValueError("packed exchange parts: cut short")
    tag = view[pos]
    pos += 1
    if tag == NONE:
        return None, pos
    if tag == INT:
        if pos + 8 > end:
            raise ValueError("packed exchange parts: cut short")
        return _I64.unpack_from(view, pos)[0], pos + 8
    if tag not in (TEXT, BYTES, PICKLED):
        raise ValueError(f"packed exchange parts: a value of kind {tag}")
    if pos + 4 > end:
        raise ValueError("packed exchange parts: cut short")
    size = _U32.unpack_from(view, pos)[0]
    pos += 4
    if size > end - pos:
        raise ValueError("packed exchange parts: cut short")
    chunk = view[pos:pos + size]
    pos += size
    if tag == TEXT:
        return str(chunk, "utf-8"), pos
    if tag == BYTES:
        return chunk.tobytes(), pos
    return unpickled(chunk), pos
