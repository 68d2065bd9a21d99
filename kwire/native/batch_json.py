"""A records field of whole v2 record batches written as its summary's JSON text: bytes in, bytes out.

`summary_text(data, listed, crc32c, attributes_json)` reads the field's bytes and, when it is the common case
(one or more whole v2 batches, at most `listed` of them), returns (text, batches): the JSON that orjson writes
for kwire.native.codec_records.summarize_records' dict of the field, and how many batches it lists. Anything else (a
cut or legacy entry, garbage, more batches than `listed`, an empty field, a last offset past 64 bits) returns
None, and the caller summarises the field the general way. `summary_fragment` is the same, charged to a
record budget and made an orjson.Fragment. `crc32c(bytes) -> int` checks each batch's CRC and
`attributes_json(attributes) -> bytes` writes its Attributes (the caller's: kwire.render.records_json; a pure
function, its texts kept here by the attributes' 16 bits), so
nothing here knows Kafka beyond the batch header's layout.

Compiled (setup.py; its declarations in batch_json.pxd), the header is read with kwire/native/c_reads.pxd and
written with kwire/native/c_text.pxd's put_format in C, no Python int made; run as Python, the same names are
their twins in c_reads.py and c_text.py. tests/render/test_records_json.py holds the text to orjson's, on both.
"""

from __future__ import annotations

from kwire.native import c_reads, c_text

LOG_OVERHEAD = 12  # a log entry's BaseOffset and BatchLength
V2_HEADER_SIZE = 61  # a v2 batch's header, from BaseOffset to RecordCount
V2_MIN_BATCH_LENGTH = V2_HEADER_SIZE - LOG_OVERHEAD

# A batch as orjson writes summarize_records' dict of it (kwire.native.codec_records._v2_summary), in printf's terms:
# %lld a number, %s a text. Compiled, kwire/native/c_text.pxd's put_format writes it in C; Python's bytes %
# takes it with %d for %lld. _ONE: a field of one batch (the common Produce), its size then the batch.
_BATCH = (b'{"BaseOffset":%lld,"BatchLength":%lld,"PartitionLeaderEpoch":%lld,"Magic":%lld,"Crc":%lld,'
          b'"CrcValid":%s,"Attributes":%s,"LastOffsetDelta":%lld,"BaseTimestamp":%lld,"MaxTimestamp":%lld,'
          b'"ProducerId":%lld,"ProducerEpoch":%lld,"BaseSequence":%lld,"RecordCount":%lld,"LastOffset":%lld,'
          b'"SizeBytes":%lld}')
_HEAD, _TAIL = b'{"size":%lld,"batches":[', b'],"partial_tail":0}'
_ONE = _HEAD + _BATCH + _TAIL
_HEAD_PY = _HEAD.replace(b"%lld", b"%d")  # (a batch's text with its wrapper: under 700 bytes, c_text has 1 KiB)
_ATTRIBUTES: dict[int, bytes] = {}  # a batch's Attributes -> attributes_json's text of it (a pure function)


def _batch_json(mv, pos: int, size: int, crc32c, attributes_json) -> bytes | None:
    """The whole v2 batch at pos as orjson writes its summary; wrapped as a whole field of `size` bytes
    when size >= 0. None when its LastOffset is past 64 bits (hostile bytes: orjson refuses the dict)."""
    length, crc = c_reads._i32(mv, pos + 8), c_reads._u32(mv, pos + 17)
    valid = b"true" if crc32c(mv[pos + 21 : pos + 12 + length]) == crc else b"false"
    attributes = c_reads._i16(mv, pos + 21)
    text = _ATTRIBUTES.get(attributes)
    if text is None:
        text = _attributes_text(attributes, attributes_json)
    return c_text._batch_header_text(_ONE if size >= 0 else _BATCH, size, mv, pos, valid, text)


def _attributes_text(attributes: int, attributes_json) -> bytes:
    """attributes_json(attributes), kept: the field is 16 bits off the wire, so the cache is bounded."""
    text = _ATTRIBUTES[attributes] = attributes_json(attributes)
    return text


def _whole_v2_length(mv, pos: int, n: int) -> int:
    """The BatchLength of the whole v2 batch at pos, or -1 when the entry there is anything else."""
    if n - pos < V2_HEADER_SIZE:
        return -1
    magic, length = c_reads._u8(mv, pos + 16), c_reads._i32(mv, pos + 8)
    if magic != 2 or length < V2_MIN_BATCH_LENGTH or length + LOG_OVERHEAD > n - pos:
        return -1
    return length


def summary_text(data, listed: int, crc32c, attributes_json) -> tuple[bytes, int] | None:
    """(the field's summary as JSON text, the batches it lists), or None (see the module's docstring).
    `data`: bytes, or a memoryview of bytes."""
    mv = data if type(data) is memoryview else memoryview(data)
    if not c_reads._is_plain(mv):
        return None
    n = len(mv)
    first = _whole_v2_length(mv, 0, n) if n else -1
    if first < 0 or listed < 1:
        return None
    pos = LOG_OVERHEAD + first
    if pos == n:  # one batch: the common Produce
        text = _batch_json(mv, 0, n, crc32c, attributes_json)
        return None if text is None else (text, 1)
    starts = [0]
    while pos < n:
        length = _whole_v2_length(mv, pos, n)
        if length < 0 or len(starts) >= listed:
            return None
        starts.append(pos)
        pos += LOG_OVERHEAD + length
    texts = [_batch_json(mv, start, -1, crc32c, attributes_json) for start in starts]
    if None in texts:
        return None
    return _HEAD_PY % n + b",".join(texts) + _TAIL, len(starts)


def summary_fragment(data, budget, crc32c, attributes_json, fragment):
    """summary_text's text made `fragment(text)` (an orjson.Fragment), the batches it lists taken from
    `budget.batches` (any object with that count: a kwire.native.codec_budget.RecordBudget); None as summary_text."""
    made = summary_text(data, budget.batches, crc32c, attributes_json)
    if made is None:
        return None
    budget.batches -= made[1]
    return fragment(made[0])
