"""Exchanges' parts packed as one bytes object: how a batch of them travels to another process.

kwire.parallel ships batches of exchanges to its worker processes, and kwire.spark.spread ships them
between Spark tasks: each exchange as the plain values of kwire.native.exchange_build.ExchangeParts (read off a
RawExchange by kwire.native.exchange_build._plain_parts), its bodies as bytes. Pickling a list of 512 tuples of 20
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
checks every size against the data it has, and raises ValueError on anything it did not write. The values are
written and read by kwire.native.c_parts: compiled, in C (c_parts.pxd); in the pure-Python build the same bytes
with struct (c_parts.py; tests/native/test_exchange_wire.py holds the two to them).
"""

from __future__ import annotations

import pickle

from kwire.native import exchange_build as _exchanges  # compiled: _plain_parts is a C call (kwire/native/exchange_wire.pxd)
from kwire.native.kafka_pairing import RawExchange
from kwire.native import c_parts

from kwire.native.c_parts import BYTES, HEAD, MAX_SIZE, PICKLED, TEXT, _SIZED  # the format's (its tags, head)


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
        buf = self.buf
        for value in values:  # the common kinds by kwire.native.c_parts (compiled, in C); the rest by _put
            kind = type(value)
            if value is None:
                size = c_parts._put_none(buf, self.size)
            elif kind is int:
                size = c_parts._put_int(buf, self.size, value)
            elif kind is str:
                size = c_parts._put_text(buf, self.size, value)
            else:
                size = -1
            if size >= 0:
                self.size = size
            else:
                self._put(value)
        self.rows += 1

    def getvalue(self) -> bytes:
        """The batch as it travels (the writer may go on: later rows add to it)."""
        HEAD.pack_into(self.buf, 0, self.rows, max(self.width, 0))
        return bytes(memoryview(self.buf)[:self.size])

    def _put(self, value) -> None:
        """A value add_row's writers did not take: an int past 64 bits or a str that is not valid UTF-8 (pickled),
        a str past MAX_SIZE (an error), a buffer of bytes, anything else (pickled)."""
        kind = type(value)
        if kind is str:
            try:
                data = value.encode()
            except UnicodeEncodeError:  # a lone surrogate: pickled
                pass
            else:
                self._put_sized(TEXT, data)  # (past MAX_SIZE: a ValueError)
                return
        elif kind is bytes or kind is bytearray or kind is memoryview or isinstance(value, bytes):
            size = c_parts._put_bytes(self.buf, self.size, value)
            if size >= 0:
                self.size = size
                return
            view = memoryview(value)  # not one run of bytes (a strided view), or past MAX_SIZE (a ValueError)
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
    """The rows a PartsWriter packed, as tuples of plain values (bodies as bytes of their own); ValueError on
    anything it did not write (kwire.native.c_parts reads them: compiled, in C)."""
    return c_parts._unpack(data, _unpickled)


def _unpickled(data):
    return pickle.loads(data)
