"""A records field's summary written as JSON text, for `inspect --json`'s common case.

kwire.codec.records.summarize_records gives a records field as plain data (dicts), which orjson then
writes. When the field is the common case, whole v2 batches every one of which the exchange's
budget lists, `summary_fragment` writes that same JSON itself: the bytes orjson writes for
summarize_records' dict (tests/render/test_records_json.py holds them to it, in both builds), as an
orjson.Fragment for orjson to put in the line as it is. One small Produce batch is the dearest member
of a line to build as dicts and write again (a dict of 16 members and one of 5 per batch).

A batch's header is written into its format by kwire.native.c_text._batch_header_text: compiled, read and
written in C (kwire/native/c_text.pxd's put_format: glibc's snprintf costs more than the dicts it replaces), no
Python int made; in the pure-Python build its twin unpacks it with one struct and writes it with bytes %.

Anything else (a cut or legacy entry, garbage, more batches than the budget lists, an empty field)
returns None, and the caller summarises the field the general way; the budget is charged only when
the text is made.
"""

from __future__ import annotations

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; without it nothing here is called
    orjson = None

from kwire.native import c_reads, c_text
from kwire.codec.budget import RecordBudget
from kwire.codec.records import LOG_OVERHEAD, V2_HEADER_SIZE, V2_MIN_BATCH_LENGTH, crc32c, v2_attributes

# A batch as orjson writes summarize_records' dict of it (kwire.codec.records._v2_summary), in printf's terms:
# %lld a number, %s a text. Compiled, kwire/native/c_text.pxd's put_format writes it in C; Python's bytes %
# takes it with %d for %lld. _ONE: a field of one batch (the common Produce), its size then the batch.
_BATCH = (b'{"BaseOffset":%lld,"BatchLength":%lld,"PartitionLeaderEpoch":%lld,"Magic":%lld,"Crc":%lld,'
          b'"CrcValid":%s,"Attributes":%s,"LastOffsetDelta":%lld,"BaseTimestamp":%lld,"MaxTimestamp":%lld,'
          b'"ProducerId":%lld,"ProducerEpoch":%lld,"BaseSequence":%lld,"RecordCount":%lld,"LastOffset":%lld,'
          b'"SizeBytes":%lld}')
_HEAD, _TAIL = b'{"size":%lld,"batches":[', b'],"partial_tail":0}'
_ONE = _HEAD + _BATCH + _TAIL
_HEAD_PY = _HEAD.replace(b"%lld", b"%d")  # (a batch's text with its wrapper: under 700 bytes, c_text has 1 KiB)
MAX_CACHED = 4096  # Attributes texts kept (the field is 16 bits off the wire: bounded)
_ATTRIBUTES_JSON: dict[int, bytes] = {}  # a batch's Attributes -> orjson's text of v2_attributes


def _attributes_json(attributes: int) -> bytes:
    text = _ATTRIBUTES_JSON.get(attributes)
    if text is None:
        text = orjson.dumps(v2_attributes(attributes))
        if len(_ATTRIBUTES_JSON) >= MAX_CACHED:
            _ATTRIBUTES_JSON.clear()
        _ATTRIBUTES_JSON[attributes] = text
    return text


def _batch_json(mv, pos: int, size: int) -> bytes | None:
    """The whole v2 batch at pos as orjson writes its summary; wrapped as a whole field of `size` bytes
    when size >= 0. None when its LastOffset is past 64 bits (hostile bytes: orjson refuses the dict,
    and the line goes the general way). Its header is written by kwire/native/c_text (compiled, in C)."""
    length, crc = c_reads._i32(mv, pos + 8), c_reads._u32(mv, pos + 17)
    valid = b"true" if crc32c(mv[pos + 21 : pos + 12 + length]) == crc else b"false"
    return c_text._batch_header_text(_ONE if size >= 0 else _BATCH, size, mv, pos, valid,
                                     _attributes_json(c_reads._i16(mv, pos + 21)))


def _whole_v2_length(mv, pos: int, n: int) -> int:
    """The BatchLength of the whole v2 batch at pos, or -1 when the entry there is anything else."""
    if n - pos < V2_HEADER_SIZE:
        return -1
    magic, length = c_reads._u8(mv, pos + 16), c_reads._i32(mv, pos + 8)
    if magic != 2 or length < V2_MIN_BATCH_LENGTH or length + LOG_OVERHEAD > n - pos:
        return -1
    return length


def summary_fragment(data, budget: RecordBudget):
    """summarize_records(data, budget) as an orjson.Fragment, or None (the field is not the common
    case: summarise it the general way). `data`: bytes, or a memoryview of bytes."""
    mv = data if type(data) is memoryview else memoryview(data)
    if not c_reads._is_plain(mv):
        return None
    n = len(mv)
    listed = budget.batches
    first = _whole_v2_length(mv, 0, n) if n else -1
    if first < 0 or listed < 1:
        return None
    pos = LOG_OVERHEAD + first
    if pos == n:  # one batch: the common Produce
        text = _batch_json(mv, 0, n)
        if text is None:
            return None
        budget.batches = listed - 1
        return orjson.Fragment(text)
    starts = [0]
    while pos < n:
        length = _whole_v2_length(mv, pos, n)
        if length < 0 or len(starts) >= listed:
            return None
        starts.append(pos)
        pos += LOG_OVERHEAD + length
    texts = [_batch_json(mv, start, -1) for start in starts]
    if None in texts:
        return None
    budget.batches = listed - len(starts)
    return orjson.Fragment(_HEAD_PY % n + b",".join(texts) + _TAIL)
