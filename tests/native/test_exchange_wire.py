"""kwire.native.exchange_wire: a batch of exchange parts packed as one bytes object and read back, the same bytes in both
builds (CI runs this file compiled and pure), every value back as it went (bodies as bytes), and a reader that
refuses anything cut, lengthened or of a kind it never writes with a ValueError."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from kwire.native.exchange_build import exchange_parts
from kwire.native.framing import CutFrame
from kwire.native.kafka_pairing import RawExchange
from kwire.native.exchange_wire import PartsWriter, frames_size, pack, unpack
from kwire.pipeline import analyze_files

CAPTURES = Path(__file__).resolve().parents[2] / "captures"


def _i64(v: int) -> bytes:
    return b"\x01" + v.to_bytes(8, "little", signed=True)


def _sized(tag: int, data: bytes) -> bytes:
    return bytes([tag]) + len(data).to_bytes(4, "little") + data


def test_the_format_byte_for_byte():
    row = (None, 1, -1, "é", b"ab", (1, 2))
    expected = (b"\x01\x00\x00\x00\x06" + b"\x00" + _i64(1) + _i64(-1) + _sized(2, "é".encode())
                + _sized(3, b"ab") + _sized(4, pickle.dumps((1, 2), pickle.HIGHEST_PROTOCOL)))
    assert pack([row]) == expected
    assert unpack(expected) == [row]


def test_an_empty_batch():
    assert pack([]) == b"\x00\x00\x00\x00\x00"
    assert unpack(pack([])) == []


VALUES = [None, 0, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**30, True, False, "", "client-1", "ünïcode ✓",
          "\ud800 lone surrogate", b"", b"\x00\xff" * 100, bytearray(b"abc"), memoryview(b"xyz"),
          memoryview(b"abcdef")[::2], CutFrame(b"cut"), (1, (2, 3), None), 1.5, [1, 2]]


def _as_unpacked(value):
    """What a value comes back as: buffers as bytes, everything else as itself."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return value


def test_every_kind_of_value_comes_back():
    rows = [tuple(VALUES), tuple(reversed(VALUES))]
    back = unpack(pack(rows))
    assert back == [tuple(_as_unpacked(v) for v in row) for row in rows]
    for row in back:
        for value in row:
            if isinstance(value, (bytes, bytearray)):
                assert type(value) is bytes  # a CutFrame travels as its bytes, as exchange_parts(owned=True) made it
    at = next(i for i, v in enumerate(VALUES) if v is True)
    assert back[0][at] is True  # an int's subclass is pickled: it stays what it was


def test_a_cut_or_lengthened_batch_raises_value_error():
    data = pack([tuple(VALUES), tuple(VALUES)])
    for cut in range(len(data)):
        with pytest.raises(ValueError):
            unpack(data[:cut])
    with pytest.raises(ValueError, match="after the last row"):
        unpack(data + b"\x00")


def test_rows_of_no_values_neither_travel_nor_are_read():
    with pytest.raises(ValueError, match="rows of 0 values"):
        pack([()])
    with pytest.raises(ValueError, match="rows of no values"):  # four billion of nothing, from five bytes
        unpack(b"\xff\xff\xff\xff\x00")


def test_a_kind_it_never_writes_raises_value_error():
    with pytest.raises(ValueError, match="kind 9"):
        unpack(b"\x01\x00\x00\x00\x01\x09")
    with pytest.raises(ValueError):  # a size past the data
        unpack(b"\x01\x00\x00\x00\x01\x03\xff\xff\xff\xff")


def test_rows_of_one_width():
    writer = PartsWriter()
    writer.add_row((1, 2))
    with pytest.raises(ValueError, match="a row of 3 values"):
        writer.add_row((1, 2, 3))


def test_the_writer_goes_on_after_getvalue():
    writer = PartsWriter()
    writer.add_row((1, "a"))
    first = writer.getvalue()
    writer.add_row((2, b"b" * 5000))  # past the room the buffer had
    assert unpack(first) == [(1, "a")]
    assert unpack(writer.getvalue()) == [(1, "a"), (2, b"b" * 5000)]
    assert writer.rows == 2


@pytest.mark.parametrize("capture", ["consumer-protocol-lz4.pcap", "bulk-fetch.pcap"])
def test_raw_exchanges_of_a_real_capture_travel_as_their_parts(capture):
    raws = [raw for raw in analyze_files([str(CAPTURES / capture)], offload=lambda raw: True)
            if type(raw) is RawExchange]
    assert len(raws) > 10
    writer = PartsWriter()
    for raw in raws:
        writer.add(raw)
    assert writer.rows == len(raws)
    frames = [(raw.request.size if raw.request is not None else 0) + (raw.response_size or 0) for raw in raws]
    assert [frames_size(raw) for raw in raws] == frames and writer.frame_bytes == sum(frames)
    assert unpack(writer.getvalue()) == [tuple(exchange_parts(raw, owned=True)) for raw in raws]
