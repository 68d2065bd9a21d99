"""Exchanges' parts packed as one bytes object: how a batch of them travels to another process.

kwire.parallel ships batches of exchanges to its worker processes, and kwire.spark.spread ships them
between Spark tasks: each exchange as the plain values of kwire.exchanges.ExchangeParts (read off a
RawExchange by kwire.exchanges._plain_parts), its bodies as bytes. Pickling a list of 512 tuples of 20
values, and building those tuples first, cost the main process of `inspect --json` (which reads,
reassembles and pairs while its workers decode) a fifth of its time on many small exchanges.
`PartsWriter.add(raw)` writes an exchange's values straight into one buffer instead, its bodies
copied once, straight out of the frames; `unpack(data)` gives the plain tuples back, in order.

The format, little-endian: a u32 count of rows and a u8 width (values per row), then each value as a
tag byte and what it holds:

  NONE     None
  INT      an int of 64 bits: i64
  TEXT     a str: u32 size, its UTF-8
  BYTES    anything with a buffer of bytes (bytes, a subclass, bytearray, memoryview): u32 size, the bytes;
           unpacked as bytes
  PICKLED  anything else (an int past 64 bits, a str that is not valid UTF-8, a tuple): u32 size, a pickle

The data is made by kwire of values it built, never of captured bytes as a pickle; `unpack` still
checks every size against the data it has, and raises ValueError on anything it did not write. Compiled
(kwire/parts_wire.pxd), values are written and read in C; the pure-Python build writes the same bytes
with struct (tests/test_parts_wire.py holds the two to them).
"""

from __future__ import annotations

import pickle
import struct

try:
    import cython
except ImportError:  # the pure-Python build where Cython is not installed
    from kwire.native.cython_stand_in import cython

from kwire import exchanges as _exchanges  # compiled: _plain_parts is a C call (kwire/parts_wire.pxd)
from kwire.kafka.pairing import RawExchange

NONE, INT, TEXT, BYTES, PICKLED = 0, 1, 2, 3, 4
HEAD = struct.Struct("<IB")  # rows, width
_INT = struct.Struct("<Bq")
_SIZED = struct.Struct("<BI")
_I64 = struct.Struct("<q")
_U32 = struct.Struct("<I")
MAX_SIZE = 0xFFFFFFFF  # a value's bytes: a u32 (a frame is at most kwire.kafka.framing's cap, far below)
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


def frames_size(raw: RawExchange) -> int:
    """Bytes of the request and response frames of an exchange (what a batch of them weighs)."""
    request = raw.request
    return (request.size if request is not None else 0) + (raw.response_size or 0)


class PartsWriter:
    """A batch being packed: add(raw) or add_row(values) per exchange, then getvalue(). `rows`: how many
    were added; `width`: the values of each row (the first row's; every row must have as many);
    `frame_bytes`: the request and response frames of the exchanges add(raw) took (what the batch
    weighs); `size`: the bytes packed (compiled, `buf` holds room beyond them)."""

    __slots__ = ("buf", "size", "rows", "width", "frame_bytes")

    def __init__(self):
        self.buf = bytearray(HEAD.size)
        self.size = HEAD.size
        self.rows = 0
        self.width = -1
        self.frame_bytes = 0

    def add(self, raw: RawExchange) -> None:
        """The exchange's ExchangeParts (its bodies as they are: packing copies them)."""
        self.frame_bytes += frames_size(raw)
        self.add_row(_exchanges._plain_parts(raw, False))

    def add_row(self, values: tuple) -> None:
        if self.width != len(values):
            if self.width >= 0:
                raise ValueError(f"a row of {len(values)} values in a batch of rows of {self.width}")
            if not 0 < len(values) <= 255:  # none: a row would take no bytes, and unpack could not bound a count
                raise ValueError(f"rows of {len(values)} values (1 to 255 travel)")
            self.width = len(values)
        for value in values:
            if cython.compiled:  # the common kinds inline, in C (kwire/parts_wire.pxd); the rest as below
                if value is None:
                    _room(self, 1)[0] = 0  # NONE
                    continue
                if type(value) is int and put_int(self, value):
                    continue
                if type(value) is str and put_text(self, value):
                    continue
            self._put(value)
        self.rows += 1

    def getvalue(self) -> bytes:
        """The batch as it travels (the writer may go on: later rows add to it)."""
        HEAD.pack_into(self.buf, 0, self.rows, max(self.width, 0))
        return bytes(memoryview(self.buf)[:self.size])

    def _put(self, value) -> None:
        """Any value. (Compiled, add_row has written None, an int of 64 bits and a str of valid UTF-8 in C
        already: what comes here is written the Python way, the same bytes.)"""
        if value is None:
            self._append(b"\0")
            return
        kind = type(value)
        if kind is int:
            if _I64_MIN <= value <= _I64_MAX:
                self._append(_INT.pack(INT, value))
                return
        elif kind is str:
            try:
                data = value.encode()
            except UnicodeEncodeError:  # a lone surrogate: pickled
                pass
            else:
                self._put_sized(TEXT, data)
                return
        elif kind is bytes or kind is bytearray or kind is memoryview or isinstance(value, bytes):
            if cython.compiled:
                if put_bytes(self, value):
                    return
            view = memoryview(value)
            self._put_sized(BYTES, view if view.c_contiguous and view.itemsize == 1 else view.tobytes())
            return
        self._put_sized(PICKLED, pickle.dumps(value, pickle.HIGHEST_PROTOCOL))

    def _put_sized(self, tag: int, data) -> None:
        if len(data) > MAX_SIZE:
            raise ValueError(f"a value of {len(data):,} bytes (at most {MAX_SIZE:,} travel)")
        self._append(_SIZED.pack(tag, len(data)))
        self._append(data)

    def _append(self, data) -> None:
        """data after the bytes packed (where the compiled build's room begins)."""
        del self.buf[self.size:]
        self.buf += data
        self.size = len(self.buf)


def pack(rows) -> bytes:
    """Rows of plain values (tuples of one width) as one bytes object."""
    writer = PartsWriter()
    for row in rows:
        writer.add_row(row)
    return writer.getvalue()


def unpack(data) -> list[tuple]:
    """The rows a PartsWriter packed, as tuples of plain values (bodies as bytes of their own)."""
    if cython.compiled:
        return unpack_c(data)
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
            value, pos = _take(view, pos, end)
            values.append(value)
        rows.append(tuple(values))
    if pos != end:
        raise ValueError(f"packed exchange parts: {end - pos} bytes after the last row")
    return rows


def _take(view: memoryview, pos: int, end: int) -> tuple[object, int]:
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
    return _unpickled(chunk), pos


def _unpickled(data):
    return pickle.loads(data)
