"""A small test-only encoder for record sets (v2 batches, v0/v1 messages, every codec), and the tests
that show it writes what an independent implementation (kio's record batch reader) reads."""

from __future__ import annotations

import datetime
import gzip
import struct
import zlib

import cramjam
import crc32c
import lz4.frame
import pytest
import zstandard

XERIAL_MAGIC = b"\x82SNAPPY\x00"
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint(n: int) -> bytes:
    """Zigzag varint (works for 32 and 64 bit values)."""
    return uvarint((n << 1) ^ (n >> 63))


def _vbytes(b: bytes | None) -> bytes:
    return varint(-1) if b is None else varint(len(b)) + b


def v2_record(offset_delta: int, ts_delta: int, key: bytes | None, value: bytes | None,
              headers=(), attributes: int = 0) -> bytes:
    body = (bytes([attributes]) + varint(ts_delta) + varint(offset_delta) + _vbytes(key) + _vbytes(value)
            + varint(len(headers)) + b"".join(_vbytes(k) + _vbytes(v) for k, v in headers))
    return varint(len(body)) + body


def xerial(data: bytes, block: int = 32 << 10) -> bytes:
    out = [XERIAL_MAGIC, struct.pack(">ii", 1, 1)]
    for i in range(0, len(data), block):
        chunk = bytes(cramjam.snappy.compress_raw(data[i : i + block]))
        out.append(struct.pack(">i", len(chunk)) + chunk)
    return b"".join(out)


def compress(codec: int, data: bytes, *, use_xerial: bool = False) -> bytes:
    if codec == NONE:
        return data
    if codec == GZIP:
        return gzip.compress(data)
    if codec == SNAPPY:
        return xerial(data) if use_xerial else bytes(cramjam.snappy.compress_raw(data))
    if codec == LZ4:
        return lz4.frame.compress(data)
    if codec == ZSTD:
        return zstandard.ZstdCompressor().compress(data)
    raise ValueError(codec)


def v2_batch(records=(), *, base_offset: int = 0, codec: int = NONE, base_ts: int = 1_700_000_000_000,
             attributes: int = 0, producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
             leader_epoch: int = 0, use_xerial: bool = False, payload: bytes | None = None,
             record_count: int | None = None, last_offset_delta: int | None = None,
             max_ts: int | None = None, crc: int | None = None) -> bytes:
    """records: (key, value) or (key, value, headers) or (key, value, headers, ts_delta) tuples,
    given offset deltas 0, 1, ...; `payload` replaces the compressed record bytes entirely."""
    encoded = []
    max_delta = 0
    for i, r in enumerate(records):
        key, value = r[0], r[1]
        headers = r[2] if len(r) > 2 else ()
        ts_delta = r[3] if len(r) > 3 else i
        max_delta = max(max_delta, ts_delta)
        encoded.append(v2_record(i, ts_delta, key, value, headers))
    if payload is None:
        payload = compress(codec, b"".join(encoded), use_xerial=use_xerial)
    n = len(encoded) if record_count is None else record_count
    tail = struct.pack(
        ">hiqqqhii", attributes | codec,
        max(len(encoded) - 1, 0) if last_offset_delta is None else last_offset_delta,
        base_ts, base_ts + max_delta if max_ts is None else max_ts,
        producer_id, producer_epoch, base_sequence, n,
    ) + payload
    checksum = crc32c.crc32c(tail) if crc is None else crc
    return struct.pack(">qiibI", base_offset, len(tail) + 9, leader_epoch, 2, checksum) + tail


def control_batch(kind: int, coordinator_epoch: int, *, base_offset: int = 0, producer_id: int = 7) -> bytes:
    key = struct.pack(">hh", 0, kind)
    value = struct.pack(">hi", 0, coordinator_epoch)
    return v2_batch([(key, value)], base_offset=base_offset, attributes=0x30, producer_id=producer_id,
                    producer_epoch=0)


def legacy_message(magic: int, offset: int, key: bytes | None, value: bytes | None, *, attributes: int = 0,
                   timestamp: int = 1_600_000_000_000, crc: int | None = None) -> bytes:
    body = bytes([magic, attributes])
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for b in (key, value):
        body += struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b
    checksum = zlib.crc32(body) if crc is None else crc
    return struct.pack(">qiI", offset, len(body) + 4, checksum) + body


def legacy_wrapper(magic: int, offset: int, inner: bytes, codec: int, *, timestamp: int = 1_600_000_000_000,
                   log_append_time: bool = False, compressed: bytes | None = None) -> bytes:
    """A compressed wrapper message holding the message set `inner` (or `compressed` bytes as given)."""
    value = compress(codec, inner, use_xerial=True) if compressed is None else compressed
    return legacy_message(magic, offset, None, value, attributes=codec | (0x08 if log_append_time else 0),
                          timestamp=timestamp)


# --- the encoder agrees with kio -----------------------------------------------------------------------

kio_readers = pytest.importorskip("kio.records.readers")


def test_encoder_output_reads_back_in_kio():
    batch = v2_batch([(b"k1", b"v1", [(b"h", b"x")]), (None, b"v2"), (b"k3", None)], base_offset=42,
                     producer_id=9, producer_epoch=1, base_sequence=5)
    parsed, size = kio_readers.read_batch(batch, 0)
    assert size == len(batch)
    assert parsed.base_offset == 42 and parsed.producer_id == 9 and parsed.base_sequence == 5
    assert [(r.offset, r.key, r.value) for r in parsed.records] == [(42, b"k1", b"v1"), (43, None, b"v2"),
                                                                     (44, b"k3", None)]
    assert parsed.records[0].headers[0].key == b"h"


def test_kio_writer_output_matches_encoder():
    from kio.records.schema import NewRecordBatch, Record
    from kio.records.writers import write_new_batch
    import io

    ts = datetime.datetime.fromtimestamp(1_700_000_000, datetime.UTC)
    buf = io.BytesIO()
    write_new_batch(buf, NewRecordBatch(producer_id=-1, producer_epoch=-1, base_sequence=-1, attributes=0,
                                        records=(Record(attributes=0, timestamp=ts, offset=0, key=b"a",
                                                        value=b"b", headers=()),)))
    assert buf.getvalue() == v2_batch([(b"a", b"b", (), 0)], base_ts=1_700_000_000_000)
