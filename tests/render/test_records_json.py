"""kwire.render.records_json: a records field's summary written as JSON text is, byte for byte, what
orjson writes for kwire.native.codec_records.summarize_records' dict, and charges the budget the same; every
field that is not whole v2 batches all listed goes the general way (None, the budget untouched)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from kwire.native.codec_budget import RecordBudget
from kwire.native.codec_records import crc32c, summarize_records
from kwire.codec.values import RawRecords
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.records_json import summary_fragment

orjson = pytest.importorskip("orjson")

CAPTURES = sorted(p for p in (Path(__file__).resolve().parents[2] / "captures").rglob("*")
                  if p.suffix in (".pcap", ".pcapng", ".gz") and ".truth." not in p.name and "tls" not in p.parts)


def _record_sets(node):
    if type(node) is RawRecords:
        yield node.data
    elif type(node) is dict:
        for value in node.values():
            yield from _record_sets(value)
    elif type(node) is list:
        for value in node:
            yield from _record_sets(value)


def _same_as_general(data, batches: int = 10_000) -> bool:
    """Asserts the fragment's bytes and budget are the general way's; True when a fragment was made."""
    fast, general = RecordBudget(batches=batches), RecordBudget(batches=batches)
    fragment = summary_fragment(data, fast)
    expected = orjson.dumps(summarize_records(data, general))
    if fragment is None:
        assert fast.batches == batches  # untouched: the general way charges it
        return False
    assert orjson.dumps(fragment) == expected
    assert orjson.dumps({"x": [fragment]}) == b'{"x":[' + expected + b"]}"
    assert fast.batches == general.batches
    return True


def test_every_record_set_of_every_capture():
    made = seen = 0
    for path in CAPTURES:
        for ex in analyze_files([str(path)], summary=RunSummary()):
            for data in _record_sets([ex.request, ex.response]):
                seen += 1
                made += _same_as_general(data)
    assert seen > 1000 and made > 500  # the fast way was taken on real traffic, not only refused


def _batch(base_offset=0, records=1, attributes=0, last_delta=0, epoch=0, pid=-1, producer_epoch=-1, seq=-1,
           payload=b"\x10\x00\x00\x00\x02hi\x00\x00", crc=None) -> bytes:
    """A v2 batch with a correct CRC (unless `crc` is given)."""
    after_crc = struct.pack(">hiqqqhii", attributes, last_delta, 1700000000000, 1700000000001, pid,
                            producer_epoch, seq, records) + payload
    crc = crc32c(after_crc) if crc is None else crc
    body = struct.pack(">ibI", epoch, 2, crc) + after_crc
    return struct.pack(">qi", base_offset, len(body)) + body


@pytest.mark.parametrize("attributes", [0, 1, 2, 3, 4, 5, 6, 7, 0x08, 0x10, 0x20, 0x40, 0x7F, -1, 0x7FFF, -0x8000])
def test_every_attributes_value_writes_what_orjson_writes(attributes):
    assert _same_as_general(_batch(attributes=attributes))


@pytest.mark.parametrize("fields", [
    {"base_offset": (1 << 63) - 1}, {"base_offset": -(1 << 63)}, {"base_offset": 5, "last_delta": -(1 << 31)},
    {"records": -1}, {"records": (1 << 31) - 1}, {"epoch": -(1 << 31)}, {"pid": (1 << 63) - 1},
    {"producer_epoch": -(1 << 15)}, {"seq": (1 << 31) - 1}, {"crc": 0}, {"crc": 0xFFFFFFFF},
])
def test_extreme_header_fields(fields):
    assert _same_as_general(_batch(**fields))


@pytest.mark.parametrize("base_offset", [v for k in range(19) for v in (10**k - 1, 10**k, -(10**k), -(10**k) + 1)])
def test_numbers_of_every_length(base_offset):  # the digits written two at a time, compiled (kwire/native/c_text.pxd)
    assert _same_as_general(_batch(base_offset=base_offset))


@pytest.mark.parametrize("base_offset, last_delta", [((1 << 63) - 1, 1), (-(1 << 63), -1)])
def test_a_last_offset_past_64_bits_goes_the_general_way(base_offset, last_delta):
    data = _batch(base_offset=base_offset, last_delta=last_delta)
    assert summary_fragment(data, RecordBudget()) is None  # orjson refuses the dict: the line's general way


def test_a_bad_crc_is_written_false():
    data = bytearray(_batch())
    data[-1] ^= 1
    assert _same_as_general(bytes(data))
    assert b'"CrcValid":false' in orjson.dumps(summary_fragment(bytes(data), RecordBudget()))


def test_several_batches_and_the_batch_budget():
    three = _batch(0) + _batch(1, attributes=1) + _batch(2, records=3, last_delta=2)
    assert _same_as_general(three)
    assert _same_as_general(memoryview(three))
    assert _same_as_general(three, batches=3)
    assert not _same_as_general(three, batches=2)  # "unlisted": the general way
    assert not _same_as_general(three, batches=0)


@pytest.mark.parametrize("data", [
    b"", _batch()[:-1], _batch() + _batch()[:30], _batch() + b"\x00" * 5,
    b"\x00" * 8 + b"\x00\x00\x00\x05" + b"\x00" * 60,  # a length smaller than any batch
    b"\x00" * 16 + b"\x01" + b"\x00" * 60,  # magic 1 (a legacy message set)
    b"\x00" * 8 + b"\xff\xff\xff\xff" + b"\x00" * 4 + b"\x02" + b"\x00" * 60,  # a negative length
])
def test_anything_but_whole_v2_batches_goes_the_general_way(data):
    assert not _same_as_general(data)


def test_a_memoryview_that_is_not_of_bytes_goes_the_general_way():
    data = memoryview(_batch() * 2).cast("H")
    assert summary_fragment(data, RecordBudget()) is None
