"""Legacy message sets: message format v0 (magic 0) and v1 (magic 1), Kafka before 0.11.

Owns: one top-level message ("entry") of a message set, summarized (`summarize_legacy`) or decoded
(`decode_legacy`). A message is: Offset int64, MessageSize int32, Crc uint32 (CRC-32, zlib's, over
Magic..end), Magic int8, Attributes int8 (codec in bits 0-2, timestamp type in bit 3 for v1),
Timestamp int64 (v1 only), Key bytes, Value bytes (int32 length, -1 for null).

A compressed message is a wrapper whose Value is an inner message set. Kafka writes the wrapper's
offset as the offset of its last inner message; in v1 the inner offsets are relative (0, 1, ...) and
are made absolute from it, in v0 they are absolute already. With LogAppendTime a v1 wrapper's
timestamp overrides the inner ones. Problems become "error" strings on the entry, never exceptions.
"""

from __future__ import annotations

import struct
import zlib

from kwire.native.codec_budget import DATA_CUT, ENTRIES_CUT, note_cut
from kwire.native.codec_compression import LZ4, codec_name, repair_legacy_lz4
from kwire.native.codec_records_v2 import text_or_hex
from kwire.errors import DecodeError

HEAD = struct.Struct(">qiIbb")  # Offset, MessageSize, Crc, Magic, Attributes: 18 bytes
HEAD_FIELDS = (("BaseOffset", 0, ">q"), ("BatchLength", 8, ">i"), ("Crc", 12, ">I"), ("Magic", 16, ">b"),
               ("Attributes", 17, ">b"))
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
MIN_SIZE = {0: 14, 1: 22}  # MessageSize of a message with null key and value


def legacy_attributes(attributes: int, magic: int) -> dict:
    out = {"Compression": codec_name(attributes & 7)}
    if magic >= 1:
        out["TimestampType"] = "LogAppendTime" if attributes & 0x08 else "CreateTime"
    return out


def _parse(mv, pos: int):
    """One whole message at pos (the caller checked that its size fits): its fields, keys as views."""
    offset, size, crc, magic, attributes = HEAD.unpack_from(mv, pos)
    end = pos + 12 + size
    p = pos + 18
    timestamp = None
    if magic == 1:
        (timestamp,) = _INT64.unpack_from(mv, p)
        p += 8
    parts = []
    for what in ("key", "value"):
        if p + 4 > end:
            raise DecodeError(f"message {what} length cut by the message size", p)
        (n,) = _INT32.unpack_from(mv, p)
        p += 4
        if n < -1 or p + max(n, 0) > end:
            raise DecodeError(f"message {what} length {n} with {end - p} bytes left", p - 4)
        parts.append(None if n == -1 else mv[p : p + n])
        p += max(n, 0)
    if p != end:
        raise DecodeError(f"{end - p} bytes left in the message after its value", p)
    crc_valid = zlib.crc32(mv[pos + 16 : end]) == crc
    return offset, size, crc, crc_valid, magic, attributes, timestamp, parts[0], parts[1]


def _entry(fields) -> dict:
    offset, size, crc, crc_valid, magic, attributes, timestamp, key, value = fields
    compressed = attributes & 7
    entry = {
        "Offset": offset,
        "BatchLength": size,
        "Magic": magic,
        "Crc": crc,
        "CrcValid": crc_valid,
        "Attributes": legacy_attributes(attributes, magic),
    }
    if magic >= 1:
        entry["Timestamp"] = timestamp
    entry["KeySize"] = -1 if key is None else len(key)
    entry["ValueSize"] = -1 if value is None else len(value)
    if not compressed:
        entry["BaseOffset"] = offset
        entry["RecordCount"] = 1
    entry["LastOffset"] = offset
    entry["SizeBytes"] = 12 + size
    return entry


def summarize_legacy(mv, pos: int) -> dict:
    """A whole v0/v1 message at pos, without decompressing a wrapper's inner set."""
    try:
        return _entry(_parse(mv, pos))
    except DecodeError as e:
        offset, size, crc, magic, attributes = HEAD.unpack_from(mv, pos)
        return {"Offset": offset, "BatchLength": size, "Magic": magic, "Crc": crc,
                "Attributes": legacy_attributes(attributes, magic), "SizeBytes": 12 + size,
                "error": str(e)}


def _record(fields, offset: int, timestamp) -> dict:
    _, _, _, crc_valid, magic, attributes, _, key, value = fields
    return {
        "Offset": offset,
        "Timestamp": timestamp,
        "Key": text_or_hex(key),
        "Value": text_or_hex(value),
        "Headers": [],
        "Attributes": attributes,
        "Magic": magic,
        "CrcValid": crc_valid,
    }


def _inner_messages(mv) -> tuple[list, str | None]:
    """Parse an inner message set completely: (list of parsed messages, error or None)."""
    out = []
    pos = 0
    end = len(mv)
    while pos < end:
        if end - pos < 17:
            return out, f"inner message at byte {pos} cut after {end - pos} bytes"
        (size,) = _INT32.unpack_from(mv, pos + 8)
        magic = mv[pos + 16]
        if magic not in MIN_SIZE:
            return out, f"inner message at byte {pos}: unknown magic {magic}"
        if size < MIN_SIZE[magic]:
            return out, f"inner message at byte {pos}: size {size} is smaller than a v{magic} message"
        if pos + 12 + size > end:
            return out, f"inner message at byte {pos} is cut: size {size} with {end - pos - 12} bytes left"
        try:
            fields = _parse(mv, pos)
        except DecodeError as e:
            return out, f"inner message at byte {pos}: {e}"
        out.append(fields)
        pos += 12 + size
    return out, None


def decode_legacy(mv, pos: int, budget, cuts: dict) -> dict:
    """A whole v0/v1 message at pos with "Records": itself, or a wrapper's inner messages, within
    `budget` (a kwire.native.codec_budget.RecordBudget; budget cuts are counted in `cuts`)."""
    try:
        fields = _parse(mv, pos)
    except DecodeError:
        entry = summarize_legacy(mv, pos)
        entry["Records"] = []
        return entry
    entry = _entry(fields)
    offset, size, _, _, magic, attributes, timestamp, _, value = fields
    entry["Records"] = []
    if budget.entries <= 0:
        return note_cut(entry, budget.entries_cut(), ENTRIES_CUT, cuts)
    codec = attributes & 7
    if not codec:
        if not budget.take_data(size):
            return note_cut(entry, budget.data_cut(), DATA_CUT, cuts)
        budget.entries -= 1
        entry["Records"] = [_record(fields, offset, timestamp)]
        return entry
    if value is None:
        entry["error"] = "compressed message has a null value"
        return entry
    if codec == LZ4:
        value, repaired = repair_legacy_lz4(value)
        if repaired:
            entry["Lz4BrokenHeaderChecksum"] = True
    inner, error, reason = budget.open(codec, value)
    if inner is None:
        return note_cut(entry, error, reason, cuts)
    entry["DecompressedSize"] = len(inner)
    messages, error = _inner_messages(memoryview(inner))
    if len(messages) > budget.entries:
        messages = messages[:budget.entries]
        error = error or f"{budget.entries_cut()}: the rest are not shown"
        cuts[ENTRIES_CUT] = cuts.get(ENTRIES_CUT, 0) + 1
    error = _inner_records(entry, messages, offset, magic, attributes, timestamp) or error
    budget.entries -= len(entry["Records"])
    if error:
        entry["error"] = error
    return entry


def _inner_records(entry: dict, messages: list, offset: int, magic: int, attributes: int, timestamp) -> str | None:
    """A wrapper's inner messages as its "Records" (offsets made absolute); an error for a nested wrapper."""
    records = entry["Records"]
    error = None
    if messages:
        last_relative = messages[-1][0]
        log_append = magic >= 1 and attributes & 0x08
        for inner_fields in messages:
            if inner_fields[5] & 7:
                error = f"inner message at offset {inner_fields[0]} is itself compressed"
                break
            inner_offset = inner_fields[0]
            if magic >= 1:
                inner_offset = offset - last_relative + inner_offset
            records.append(_record(inner_fields, inner_offset, timestamp if log_append else inner_fields[6]))
    if records:
        entry["BaseOffset"] = records[0]["Offset"]
    entry["RecordCount"] = len(records)
    return error
