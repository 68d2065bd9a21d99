"""A records field's summary written as JSON text, for `inspect --json`'s common case.

kwire.native.codec_records.summarize_records gives a records field as plain data (dicts), which orjson then
writes. When the field is the common case, whole v2 batches every one of which the exchange's
budget lists, `summary_fragment` has that same JSON written by the native core
(kwire.native.batch_json: the bytes orjson writes for summarize_records' dict,
tests/render/test_records_json.py holds them to it), as an orjson.Fragment for orjson to put in the
line as it is. One small Produce batch is the dearest member of a line to build as dicts and write
again (a dict of 16 members and one of 5 per batch).

Anything else (a cut or legacy entry, garbage, more batches than the budget lists, an empty field)
returns None, and the caller summarises the field the general way; the budget is charged only when
the text is made.
"""

from __future__ import annotations

try:
    import orjson
except ImportError:  # pragma: no cover - orjson is a dependency; without it nothing here is called
    orjson = None

from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import crc32c, v2_attributes
from kwire.native import batch_json

def attributes_json(attributes: int) -> bytes:
    """A batch's Attributes as orjson writes v2_attributes' dict of them (kept by kwire.native.batch_json)."""
    return orjson.dumps(v2_attributes(attributes))


def summary_fragment(data, budget: RecordBudget):
    """summarize_records(data, budget) as an orjson.Fragment, or None (the field is not the common
    case: summarise it the general way). `data`: bytes, or a memoryview of bytes."""
    return batch_json.summary_fragment(data, budget, crc32c, attributes_json, orjson.Fragment)
