"""The record reader: whole, byte by byte, with trailing bytes, split anywhere; lost boundaries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.tls.info import BAD_RECORD_HEADER, LOST_BYTES, RECORD_OVERFLOW
from kwire.tls.records import MAX_RECORD, RecordReader, Resync
from tests.tls import rfc8448 as R
from tests.tls.build import record

RECORDS = [bytes.fromhex(h) for _, h in R.CONVERSATION] + [record(23, bytes(range(256)) * 64)]
STREAM = b"".join(RECORDS)


def read(reader: RecordReader, chunks) -> list:
    out = []
    for chunk in chunks:
        for event in reader.feed(chunk):
            out.append(event if type(event) is Resync else bytes(event[0]) + bytes(event[1]))
    return out


def test_whole_byte_by_byte_and_trailing_bytes() -> None:
    assert read(RecordReader(), [STREAM]) == RECORDS
    reader = RecordReader()
    assert read(reader, [STREAM[i:i + 1] for i in range(len(STREAM))]) == RECORDS
    reader = RecordReader()
    assert read(reader, [STREAM + RECORDS[0][:3]]) == RECORDS
    assert reader.need == 2 and reader.have == 3
    assert read(reader, [RECORDS[0][3:]]) == [RECORDS[0]]


def test_need_is_what_completes_the_record() -> None:
    reader = RecordReader()
    big = RECORDS[-1]
    assert reader.feed(big[:1000]) == []
    assert reader.need == len(big) - 1000
    assert reader.feed((big[1000:5000], big[5000:])) and reader.need == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, len(STREAM)), max_size=30), st.booleans())
def test_split_anywhere(cuts, as_tuples) -> None:
    cuts = sorted(set(cuts))
    pieces = [STREAM[a:b] for a, b in zip([0] + cuts, cuts + [len(STREAM)]) if b > a]
    reader = RecordReader()
    if as_tuples:
        chunks = [tuple(pieces[i:i + 3]) for i in range(0, len(pieces), 3)]
    else:
        chunks = pieces
    assert read(reader, chunks) == RECORDS


def test_bad_header_then_resync_on_a_chain() -> None:
    reader = RecordReader()
    junk = b"\x00\x01garbage" * 5
    events = read(reader, [RECORDS[0] + junk + b"".join(RECORDS[1:])])
    assert events[0] == RECORDS[0]
    assert events[1].kind == BAD_RECORD_HEADER
    assert events[2].kind == LOST_BYTES and events[2].skipped == len(junk)
    assert events[3:] == RECORDS[1:]


def test_hostile_length_is_an_error_not_an_allocation() -> None:
    reader = RecordReader()
    events = read(reader, [b"\x17\x03\x03\xff\xff" + bytes(100)])
    assert events[0].kind == RECORD_OVERFLOW
    assert reader.have <= MAX_RECORD + 10


def test_after_a_gap_the_next_records_are_found() -> None:
    reader = RecordReader()
    assert read(reader, [STREAM[:300]]) == RECORDS[:2]
    reader.gap()
    rest = STREAM[1000:]  # starts inside a record
    events = read(reader, [rest[i:i + 100] for i in range(0, len(rest), 100)])
    lost = [e for e in events if type(e) is Resync]
    assert [e.kind for e in lost] == [LOST_BYTES]
    found = [e for e in events if type(e) is not Resync]
    assert found == RECORDS[-len(found):] and len(found) >= 3


def test_searching_memory_is_bounded() -> None:
    reader = RecordReader(synced=False)
    for _ in range(100):
        reader.feed(b"\x17\x03\x03\x40\x00" + bytes(1443))  # candidate headers whose chain never comes
        assert reader.have <= MAX_RECORD + 10 + 1448
