"""A records field's summary written as JSON text, for `inspect --json`'s common case.

kwire.codec.records.summarize_records gives a records field as plain data (dicts), which orjson then
writes. When the field is the common case, whole v2 batches every one of which the exchange's
budget lists, `summary_fragment` writes that same JSON itself: the bytes orjson writes for
summarize_records' dict (tests/render/test_records_json.py holds them to it, in both builds), as an
orjson.Fragment for orjson to put in the line as it is. One small Produce batch is the dearest member
of a line to build as dicts and write again (a dict of 16 members and one of 5 per batch).

Compiled (kwire/render/records_json.pxd), a batch's header is read with kwire/native/c_reads.pxd's C reads and
written with kwire/native/c_text.pxd's put_format (glibc's snprintf costs more than the dicts it replaces), no Python
int made; the pure-Python build unpacks it with one struct and writes the same format with bytes %.

Anything else (a cut or legacy entry, garbage, more batches than the budget lists, an empty field)
returns None, and the caller summarises the field the general way; the budget is charged only when
the text is made.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # the pure-Python build where Cython is not installed
    from kwire.native.cython_stand_in import cython

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; without it nothing here is called
    orjson = None

from kwire.native import c_reads
from kwire.codec.budget import RecordBudget
from kwire.codec.records import LOG_OVERHEAD, V2_HEADER, V2_HEADER_SIZE, V2_MIN_BATCH_LENGTH, crc32c, v2_attributes

# A batch as orjson writes summarize_records' dict of it (kwire.codec.records._v2_summary), in printf's terms:
# %lld a number, %s a text. Compiled, kwire/native/c_text.pxd's put_format writes it in C; Python's bytes %
# takes it with %d for %lld. _ONE: a field of one batch (the common Produce), its size then the batch.
_BATCH = (b'{"BaseOffset":%lld,"BatchLength":%lld,"PartitionLeaderEpoch":%lld,"Magic":%lld,"Crc":%lld,'
          b'"CrcValid":%s,"Attributes":%s,"LastOffsetDelta":%lld,"BaseTimestamp":%lld,"MaxTimestamp":%lld,'
          b'"ProducerId":%lld,"ProducerEpoch":%lld,"BaseSequence":%lld,"RecordCount":%lld,"LastOffset":%lld,'
          b'"SizeBytes":%lld}')
_HEAD, _TAIL = b'{"size":%lld,"batches":[', b'],"partial_tail":0}'
_ONE = _HEAD + _BATCH + _TAIL
_BATCH_PY, _HEAD_PY, _ONE_PY = (text.replace(b"%lld", b"%d") for text in (_BATCH, _HEAD, _ONE))
TEXT_ROOM = 1024  # bytes a batch's text (with the wrapper) may take: under 700 with the longest numbers

_HEADER_SIZE = V2_HEADER_SIZE  # compiled, a C global (records_json.pxd)
_I64_MAX = 0x7FFFFFFFFFFFFFFF  # a LastOffset past these is refused by orjson
_I64_MIN = -_I64_MAX - 1
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
    and the line goes the general way)."""
    if cython.compiled:  # the header's fields at their offsets (kwire.codec.records.V2_FIELDS), in C
        p = c_reads._in(mv, pos, _HEADER_SIZE)  # its 61 bytes checked once, then read where they are
        base_offset, length, epoch = c_reads._be(p, 8), cython.cast(cython.int, c_reads._be(p + 8, 4)), \
            cython.cast(cython.int, c_reads._be(p + 12, 4))
        magic, crc = cython.cast(cython.schar, p[16]), cython.cast(cython.uint, c_reads._be(p + 17, 4))
        attributes = cython.cast(cython.short, c_reads._be(p + 21, 2))
        last_delta, base_ts = cython.cast(cython.int, c_reads._be(p + 23, 4)), c_reads._be(p + 27, 8)
        max_ts, producer_id = c_reads._be(p + 35, 8), c_reads._be(p + 43, 8)
        producer_epoch = cython.cast(cython.short, c_reads._be(p + 51, 2))
        base_sequence = cython.cast(cython.int, c_reads._be(p + 53, 4))
        count = cython.cast(cython.int, c_reads._be(p + 57, 4))
    else:
        (base_offset, length, epoch, magic, crc, attributes, last_delta, base_ts, max_ts,
         producer_id, producer_epoch, base_sequence, count) = V2_HEADER.unpack_from(mv, pos)
    if base_offset < _I64_MIN - last_delta if last_delta < 0 else base_offset > _I64_MAX - last_delta:
        return None
    valid = b"true" if crc32c(mv[pos + 21 : pos + 12 + length]) == crc else b"false"
    attributes_text = _attributes_json(attributes)
    if not cython.compiled:
        values = (base_offset, length, epoch, magic, crc, valid, attributes_text, last_delta, base_ts, max_ts,
                  producer_id, producer_epoch, base_sequence, count, base_offset + last_delta, 12 + length)
        return _BATCH_PY % values if size < 0 else _ONE_PY % ((size,) + values)
    numbers[0], numbers[1], numbers[2], numbers[3] = size, base_offset, length, epoch
    numbers[4], numbers[5] = magic, crc
    numbers[6], numbers[7], numbers[8], numbers[9] = last_delta, base_ts, max_ts, producer_id
    numbers[10], numbers[11], numbers[12] = producer_epoch, base_sequence, count
    numbers[13], numbers[14] = base_offset + last_delta, 12 + length
    texts[0], texts[1] = valid, attributes_text  # C strings of bytes that stay referenced here
    if size >= 0:
        n = put_format(out, TEXT_ROOM, _ONE, len(_ONE), numbers, texts)
    else:
        n = put_format(out, TEXT_ROOM, _BATCH, len(_BATCH), cython.address(numbers[1]), texts)
    return out[:n] if n >= 0 else None  # never cut with these formats: None rather than a cut batch


def _whole_v2_length(mv, pos: int, n: int) -> int:
    """The BatchLength of the whole v2 batch at pos, or -1 when the entry there is anything else."""
    if n - pos < V2_HEADER_SIZE:
        return -1
    if cython.compiled:
        magic, length = c_reads._u8(mv, pos + 16), c_reads._i32(mv, pos + 8)
    else:
        magic, length = mv[pos + 16], (mv[pos + 8] << 24 | mv[pos + 9] << 16 | mv[pos + 10] << 8 | mv[pos + 11])
        length = length - 0x100000000 if length >= 0x80000000 else length
    if magic != 2 or length < V2_MIN_BATCH_LENGTH or length + LOG_OVERHEAD > n - pos:
        return -1
    return length


def summary_fragment(data, budget: RecordBudget):
    """summarize_records(data, budget) as an orjson.Fragment, or None (the field is not the common
    case: summarise it the general way). `data`: bytes, or a memoryview of bytes."""
    mv = data if type(data) is memoryview else memoryview(data)
    if not (c_reads._is_plain(mv) if cython.compiled else mv.format == "B" and mv.ndim == 1 and mv.c_contiguous):
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
