"""Kafka record sets: the value of a "records" field (Produce, Fetch, ShareFetch) as plain data.

Owns the public entry points:

- `summarize_records(buf)`: walks the batches, reads each header (one precompiled Struct for the
  61-byte RecordBatch v2 header), verifies CRCs (CRC-32C for v2, CRC-32 for v0/v1) and decompresses
  nothing. Payload bytes are never copied: the walk works on memoryview slices.
- `count_v2_records(buf)`: the records a set of whole v2 batches holds, from their headers alone
  (the statistics' fast path; None when the set is anything else).
- `decode_records(buf, budget)`: what summarize_records gives, and "Records" on every batch, within a
  kwire.native.codec_budget.RecordBudget: one per exchange, shared by every records field of its request and
  response. Batches decode until the budget's record data bytes (decompressed, or as stored when not
  compressed; what a failed decompression made counts too) or its entries (records and record
  headers) are used up; a batch past either gets an "error" and no (or only its first) records, and
  the field's "budget" says which budget cut how many batches. So a thousand bombs cost one budget.

Both list at most the budget's `batches` entries (shared by the exchange's records fields); the rest
are summed in "unlisted" ({"batches", "records", "bytes", "crc_invalid", "first_offset",
"last_offset"}), never kept one by one. `count_records(buf)` counts records in constant memory.

Result: {"size": len(buf), "batches": [...], "partial_tail": n}. A batch cut by the end of the buffer
(normal at the end of a Fetch response) is the last entry, {"partial": True, "available": n, ...}
with the header fields that fit, and `partial_tail` is its byte count. Garbage (an unknown magic, a
length smaller than any batch) ends the walk with an entry {"error": ..., "at": byte offset} plus a
top-level "error" and "unparsed" byte count. A problem inside one batch (CRC mismatch: CrcValid
False; bomb, corrupt compression, bad record: "error" on that batch) does not stop the walk.
Nothing here raises on bad input.

Field names are Kafka's DefaultRecordBatch / LegacyRecord names in PascalCase; for every magic
"BatchLength" is the int32 after the offset, "SizeBytes" the whole entry (BatchLength + 12).
"""

from __future__ import annotations

import struct



def _crc32c_function():
    """crc32c.crc32c, loaded straight from the package's C extension: the package's __init__ imports
    importlib.metadata for its version string, a quarter of kwire's start-up time."""
    import importlib.machinery
    import importlib.util
    import os
    import sys

    try:
        spec = importlib.util.find_spec("crc32c")
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = f"{folder}/_crc32c{suffix}"
                ext = importlib.util.spec_from_file_location("crc32c._crc32c", path)
                if ext is not None and ext.loader is not None and os.path.exists(path):
                    module = importlib.util.module_from_spec(ext)
                    ext.loader.exec_module(module)
                    sys.modules.setdefault("crc32c._crc32c", module)
                    return module.crc32c
    except (ImportError, OSError, AttributeError):  # pragma: no cover - any surprise: the normal way
        pass
    from crc32c import crc32c as function  # pragma: no cover

    return function  # pragma: no cover


crc32c = _crc32c_function()

from kwire.native.codec_compression import NONE, codec_name, decompress
from kwire.native.codec_records_legacy import HEAD_FIELDS as LEGACY_FIELDS
from kwire.native.codec_records_legacy import MIN_SIZE as LEGACY_MIN_SIZE
from kwire.native.codec_records_legacy import decode_legacy, legacy_attributes, summarize_legacy
from kwire.native.codec_budget import BATCHES_CUT, DATA_CUT, ENTRIES_CUT, RecordBudget, note_cut
from kwire.native.codec_records_v2 import decode_v2_records
from kwire.errors import DecodeError

V2_HEADER = struct.Struct(">qiibIhiqqqhii")  # 61 bytes: every field up to and including RecordCount
V2_HEADER_SIZE = V2_HEADER.size
V2_MIN_BATCH_LENGTH = V2_HEADER_SIZE - 12
LOG_OVERHEAD = 12  # BaseOffset + BatchLength
_OFFSET_LENGTH = struct.Struct(">qi")
_I32 = struct.Struct(">i")

V2_FIELDS = (
    ("BaseOffset", 0, ">q"), ("BatchLength", 8, ">i"), ("PartitionLeaderEpoch", 12, ">i"),
    ("Magic", 16, ">b"), ("Crc", 17, ">I"), ("Attributes", 21, ">h"), ("LastOffsetDelta", 23, ">i"),
    ("BaseTimestamp", 27, ">q"), ("MaxTimestamp", 35, ">q"), ("ProducerId", 43, ">q"),
    ("ProducerEpoch", 51, ">h"), ("BaseSequence", 53, ">i"), ("RecordCount", 57, ">i"),
)

COMMON_FIELDS = (("BaseOffset", 0, ">q"), ("BatchLength", 8, ">i"), ("Magic", 16, ">b"))

_ATTRIBUTES: dict[int, dict] = {}


def v2_attributes(attributes: int) -> dict:
    """The decoded Attributes of a v2 batch (a fresh dict; templates are cached per value)."""
    template = _ATTRIBUTES.get(attributes)
    if template is None:
        template = {
            "Compression": codec_name(attributes & 7),
            "TimestampType": "LogAppendTime" if attributes & 0x08 else "CreateTime",
            "IsTransactional": bool(attributes & 0x10),
            "IsControl": bool(attributes & 0x20),
            "HasDeleteHorizon": bool(attributes & 0x40),
        }
        if len(_ATTRIBUTES) < 4096:
            _ATTRIBUTES[attributes] = template
    return dict(template)


def _v2_summary(mv, pos: int) -> dict:
    (base_offset, length, epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
     producer_id, producer_epoch, base_sequence, count) = V2_HEADER.unpack_from(mv, pos)
    return {
        "BaseOffset": base_offset,
        "BatchLength": length,
        "PartitionLeaderEpoch": epoch,
        "Magic": magic,
        "Crc": crc,
        "CrcValid": crc32c(mv[pos + 21 : pos + 12 + length]) == crc,
        "Attributes": v2_attributes(attributes),
        "LastOffsetDelta": last_delta,
        "BaseTimestamp": base_ts,
        "MaxTimestamp": max_ts,
        "ProducerId": producer_id,
        "ProducerEpoch": producer_epoch,
        "BaseSequence": base_sequence,
        "RecordCount": count,
        "LastOffset": base_offset + last_delta,
        "SizeBytes": 12 + length,
    }


def _v2_decode(mv, pos: int, budget: RecordBudget, cuts: dict) -> dict:
    entry = _v2_summary(mv, pos)
    _, length, _, _, _, attributes, _, base_ts, max_ts, _, _, _, count = V2_HEADER.unpack_from(mv, pos)
    payload = mv[pos + V2_HEADER_SIZE : pos + 12 + length]
    codec = attributes & 7
    entry["Records"] = []
    if budget.entries <= 0 and count > 0:
        return note_cut(entry, budget.entries_cut(), ENTRIES_CUT, cuts)
    if codec != NONE:
        payload, error, reason = budget.open(codec, payload)
        if payload is None:
            return note_cut(entry, error, reason, cuts)
        entry["DecompressedSize"] = len(payload)
    elif not budget.take_data(len(payload)):
        return note_cut(entry, budget.data_cut(), DATA_CUT, cuts)
    records, error, made, stopped = decode_v2_records(
        payload, count, entry["BaseOffset"], base_ts,
        max_ts if attributes & 0x08 else None, bool(attributes & 0x20), budget.entries,
    )
    budget.entries -= made
    entry["Records"] = records
    if stopped:  # the record budget stopped the batch
        note_cut(entry, f"{budget.entries_cut()}: {len(records)} of {count} records shown", ENTRIES_CUT, cuts)
    elif error:
        entry["error"] = error
    return entry


def _header_fields(mv, pos: int, available: int, fields) -> dict:
    """The header fields that fit in `available` bytes (for a cut or broken entry)."""
    out = {}
    for name, at, fmt in fields:
        size = struct.calcsize(fmt)
        if at + size > available:
            break
        out[name] = struct.unpack_from(fmt, mv, pos + at)[0]
    return out


def _cut_entry(mv, pos: int, available: int) -> dict:
    magic = mv[pos + 16] if available > 16 else None
    fields = LEGACY_FIELDS if magic in LEGACY_MIN_SIZE else V2_FIELDS if magic == 2 else COMMON_FIELDS[:2]
    entry = {"partial": True, "available": available}
    entry.update(_header_fields(mv, pos, available, fields))
    if "Attributes" in entry:
        attributes = entry["Attributes"]
        entry["Attributes"] = (legacy_attributes(attributes, magic) if magic in LEGACY_MIN_SIZE
                               else v2_attributes(attributes))
    return entry


def _check(mv, pos: int, available: int) -> str | None:
    """Why the entry at pos is garbage, or None. Uses only what is there (the entry may be cut)."""
    if available < LOG_OVERHEAD:
        return None
    _, length = _OFFSET_LENGTH.unpack_from(mv, pos)
    if length < LEGACY_MIN_SIZE[0]:
        return f"batch length {length} is smaller than any batch"
    if available <= 16:
        return None
    magic = mv[pos + 16]
    if magic == 2:
        if length < V2_MIN_BATCH_LENGTH:
            return f"batch length {length} is smaller than a v2 batch header"
    elif magic in LEGACY_MIN_SIZE:
        if length < LEGACY_MIN_SIZE[magic]:
            return f"message size {length} is smaller than a v{magic} message"
    else:
        return f"unknown magic {magic}"
    return None


class BatchTally:
    """Batches summed instead of listed: count, records (RecordCount of whole, non-control batches,
    as stats counts them), bytes, CRC failures (unless `check_crc` is False), first and last offset."""

    __slots__ = ("batches", "records", "bytes", "crc_invalid", "first_offset", "last_offset", "check_crc")

    def __init__(self, check_crc: bool = True):
        self.batches = self.records = self.bytes = self.crc_invalid = 0
        self.first_offset = self.last_offset = None
        self.check_crc = check_crc

    def add_v2(self, mv, pos: int, length: int) -> None:
        (base_offset, _, _, _, crc, attributes, last_delta, _, _, _, _, _, count) = V2_HEADER.unpack_from(mv, pos)
        self._add(base_offset, base_offset + last_delta, 12 + length, 0 if attributes & 0x20 else count)
        if self.check_crc and crc32c(mv[pos + 21 : pos + 12 + length]) != crc:
            self.crc_invalid += 1

    def add_entry(self, entry: dict) -> None:
        """A legacy entry (or an odd v2 one), as summarised or decoded."""
        attributes = entry.get("Attributes")
        control = isinstance(attributes, dict) and attributes.get("IsControl")
        count = 0 if control or "error" in entry else entry.get("RecordCount") or 0
        first = entry.get("BaseOffset", entry.get("Offset"))
        self._add(first, entry.get("LastOffset", first), entry["SizeBytes"], count)
        if self.check_crc and entry.get("CrcValid") is False:
            self.crc_invalid += 1

    def _add(self, first, last, size: int, records: int) -> None:
        if self.first_offset is None:
            self.first_offset = first
        self.last_offset = last
        self.batches += 1
        self.bytes += size
        self.records += records

    def as_dict(self) -> dict:
        return {"batches": self.batches, "records": self.records, "bytes": self.bytes,
                "crc_invalid": self.crc_invalid, "first_offset": self.first_offset, "last_offset": self.last_offset}


def _walk(buf, decode: bool, budget: RecordBudget, tally: BatchTally | None = None) -> dict:
    """The entries of a records field: listed while the budget's batches last, then summed in `tally`."""
    if buf is None:
        return {"size": 0, "batches": [], "partial_tail": 0}
    mv = buf if isinstance(buf, memoryview) else memoryview(buf)
    if mv.format != "B" or mv.ndim != 1:
        mv = mv.cast("B")
    n = len(mv)
    batches: list[dict] = []
    result = {"size": n, "batches": batches, "partial_tail": 0}
    cuts: dict[str, int] = {}
    pos = 0
    while pos < n:
        available = n - pos
        if available >= V2_HEADER_SIZE and mv[pos + 16] == 2:
            # The common entry: a whole v2 batch.
            length = _I32.unpack_from(mv, pos + 8)[0]
            if V2_MIN_BATCH_LENGTH <= length and length + LOG_OVERHEAD <= available:
                if budget.batches > 0:
                    budget.batches -= 1
                    batches.append(_v2_decode(mv, pos, budget, cuts) if decode else _v2_summary(mv, pos))
                else:
                    if tally is None:
                        tally = BatchTally()
                    tally.add_v2(mv, pos, length)
                pos += LOG_OVERHEAD + length
                continue
        if _last_entry(mv, pos, available, result):
            break
        listed = budget.batches > 0
        entry = _odd_entry(mv, pos, decode and listed, budget, cuts)
        if listed:
            budget.batches -= 1
            batches.append(entry)
        else:
            if tally is None:
                tally = BatchTally()
            tally.add_entry(entry)
        pos += entry["SizeBytes"]
    if tally is not None and tally.batches:
        result["unlisted"] = tally.as_dict()
        cuts[BATCHES_CUT] = tally.batches
    if cuts:
        result["budget"] = _cut_note(cuts, budget)
    return result


def _last_entry(mv, pos: int, available: int, result: dict) -> bool:
    """When the entry at pos is garbage or cut by the end of the buffer: its entry, last in the list."""
    batches = result["batches"]
    problem = _check(mv, pos, available)
    if problem is not None:
        entry = _header_fields(mv, pos, available, COMMON_FIELDS)
        entry["error"] = problem
        entry["at"] = pos
        batches.append(entry)
        result["error"] = f"batch {len(batches) - 1} at byte {pos}: {problem}"
        result["unparsed"] = available
        return True
    if available < LOG_OVERHEAD or _OFFSET_LENGTH.unpack_from(mv, pos)[1] + LOG_OVERHEAD > available:
        batches.append(_cut_entry(mv, pos, available))
        result["partial_tail"] = available
        return True
    return False


def _odd_entry(mv, pos: int, decode: bool, budget: RecordBudget, cuts: dict) -> dict:
    """A whole entry off the fast path: a legacy message, or a v2 batch too short for the header."""
    magic = mv[pos + 16]
    if magic == 2:
        return _v2_decode(mv, pos, budget, cuts) if decode else _v2_summary(mv, pos)
    if decode:
        return decode_legacy(mv, pos, budget, cuts)
    return summarize_legacy(mv, pos)


def _cut_note(cuts: dict, budget: RecordBudget) -> str:
    """The records field's "budget": what each budget cut, in batches."""
    parts = []
    for kind, count in cuts.items():
        what = "summed in \"unlisted\"" if kind == BATCHES_CUT else "cut"
        parts.append(f"{budget.cut_text(kind)}: {count:,} batch{'es' if count != 1 else ''} {what}")
    return "; ".join(parts)


_V2_COUNT = struct.Struct(">8xi4xb4xh34xi")  # BatchLength, Magic, Attributes, RecordCount
_CONTROL = 0x20


def count_v2_records(buf) -> int | None:
    """The RecordCount of the non-control batches of `buf` when it is nothing but whole v2 batches
    (what a producer sends, and most fetched record sets); None for anything else (a legacy message,
    a batch cut at the end, garbage), which summarize_records then describes. Reads the headers only:
    no CRC, no dict per batch."""
    n = len(buf)
    pos = records = 0
    unpack = _V2_COUNT.unpack_from
    while pos < n:
        if n - pos < V2_HEADER_SIZE:
            return None
        length, magic, attributes, count = unpack(buf, pos)
        if magic != 2 or length < V2_MIN_BATCH_LENGTH or length + LOG_OVERHEAD > n - pos:
            return None
        if not attributes & _CONTROL:
            records += count
        pos += LOG_OVERHEAD + length
    return records


def summarize_records(buf, budget: RecordBudget | None = None) -> dict:
    """Headers, CRC checks and sizes of every batch in `buf` (bytes-like or None); nothing decompressed.
    Batches past the budget's `batches` (shared with the other records fields of the exchange) are
    summed in "unlisted"."""
    try:
        return _walk(buf, False, budget or RecordBudget())
    except (DecodeError, struct.error, ValueError, TypeError) as e:  # pragma: no cover - defensive
        return {"size": _size(buf), "batches": [], "partial_tail": 0, "error": f"internal: {e}"}


def decode_records(buf, budget: RecordBudget | None = None) -> dict:
    """`summarize_records` plus "Records" on every listed whole batch, within `budget` (one per exchange,
    shared by its records fields; a fresh default one when not given)."""
    try:
        return _walk(buf, True, budget or RecordBudget())
    except (DecodeError, struct.error, ValueError, TypeError) as e:  # pragma: no cover - defensive
        return {"size": _size(buf), "batches": [], "partial_tail": 0, "error": f"internal: {e}"}


def count_records(buf) -> int:
    """RecordCount of every whole, non-control batch of a records field (what stats counts), without
    listing a batch or checking a CRC: constant memory however many batches `buf` holds."""
    tally = BatchTally(check_crc=False)
    _walk(buf, False, RecordBudget(batches=0), tally)
    return tally.records


def _size(buf) -> int:
    try:
        return len(memoryview(buf).cast("B")) if buf is not None else 0
    except TypeError:
        return 0
