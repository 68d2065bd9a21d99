"""Fingerprints of the records of a v2 RecordBatch: what tells a record sent again in another batch.

A producer that is not idempotent may send a record again in a new batch (librdkafka puts the
records of a failed batch back at the head of its queue and builds new batches: other records
beside them, new offsets and a new CRC). Only the record itself stays the same: its key, value and
headers, and its CreateTime. Owns:

- `batch_heads(data)`: the v2 batches of a records field, from their 61-byte headers alone
  ((position, size, header) with `V2_HEADER`'s fields; a batch cut by the end of the field has the
  bytes left as its size); legacy entries and garbage end the walk.
- `record_prints(data, pos, size)`: (offset delta, CreateTime, fingerprint) of each record of one
  batch, in order: the CreateTime is the base timestamp plus the record's delta (ms), the
  fingerprint a 64-bit BLAKE2b of that CreateTime and the record's bytes from the key length on
  (key, value, headers as sent); nothing else of the record is kept.

Bounded: at most MAX_PRINTS records per batch; a compressed batch is opened only up to
MAX_DECOMPRESSED bytes; a malformed record ends the batch's prints (those read before it stay).
Nothing here raises on bad input.
"""

from __future__ import annotations

import struct
from hashlib import blake2b

from kwire.native.codec_compression import decompress
from kwire.errors import DecodeError
from kwire.kafka.primitives import read_varint, read_varlong

V2_HEADER = struct.Struct(">qiibIhiqqqhii")  # BaseOffset .. RecordCount (61 bytes)
V2_HEADER_SIZE = V2_HEADER.size
_I32 = struct.Struct(">i")
_TS = struct.Struct(">q")
MAX_PRINTS = 1024
MAX_DECOMPRESSED = 4 << 20
CONTROL = 0x20
LOG_APPEND_TIME = 0x08


def batch_heads(data) -> list[tuple[int, int, tuple]]:
    """(position, size, header fields) of every v2 batch header in a records field."""
    out = []
    view = memoryview(data)
    pos, end = 0, len(view)
    while pos + V2_HEADER_SIZE <= end:
        length = _I32.unpack_from(view, pos + 8)[0]
        if view[pos + 16] != 2 or length < V2_HEADER_SIZE - 12:
            break
        size = min(12 + length, end - pos)
        out.append((pos, size, V2_HEADER.unpack_from(view, pos)))
        pos += 12 + length
    return out


def record_prints(data, pos: int, size: int) -> list[tuple[int, int, int]]:
    """(offset delta, CreateTime, fingerprint) of the records of the batch at `pos` (see the module
    docstring)."""
    view = memoryview(data)[pos:pos + size]
    if len(view) < V2_HEADER_SIZE:
        return []
    (_, length, _, _, _, attributes, _, base_ts, _, _, _, _, count) = V2_HEADER.unpack_from(view, 0)
    if attributes & (CONTROL | LOG_APPEND_TIME) or len(view) < 12 + length:
        return []
    payload = view[V2_HEADER_SIZE:12 + length]
    codec = attributes & 7
    if codec:
        try:
            payload = memoryview(decompress(codec, payload, MAX_DECOMPRESSED))
        except DecodeError:
            return []
    return _walk(payload, min(count, MAX_PRINTS), base_ts)


def _zigzag(buf, pos: int, read) -> tuple[int, int]:
    """A zigzag varint at pos: the one-byte form inline, longer ones by `read` (the primitives)."""
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    return read(buf, pos)


def _walk(payload, count: int, base_ts: int) -> list[tuple[int, int, int]]:
    out = []
    pos, end = 0, len(payload)
    pack, from_bytes = _TS.pack, int.from_bytes
    try:
        for _ in range(count):
            length, pos = _zigzag(payload, pos, read_varint)
            start, stop = pos, pos + length
            if length < 4 or stop > end:
                break
            ts_delta, pos = _zigzag(payload, start + 1, read_varlong)  # after the attributes (int8)
            ts = base_ts + ts_delta
            delta, pos = _zigzag(payload, pos, read_varint)
            if pos > stop:
                break
            digest = blake2b(pack(ts), digest_size=8)
            digest.update(payload[pos:stop])
            out.append((delta, ts, from_bytes(digest.digest(), "big")))
            pos = stop
    except (DecodeError, IndexError, struct.error):
        pass
    return out
