"""Differential test: batches serialised by kio (an independent implementation) decode to what kio reads."""

from __future__ import annotations

import datetime
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.native.codec_records import decode_records, summarize_records

kio_schema = pytest.importorskip("kio.records.schema")
kio_writers = pytest.importorskip("kio.records.writers")
kio_readers = pytest.importorskip("kio.records.readers")

EPOCH_MS = 1_700_000_000_000


def _shown(raw):
    if raw is None:
        return None
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return {"hex": raw.hex()}


nullable_bytes = st.none() | st.binary(max_size=300)
headers = st.lists(st.tuples(st.text(max_size=10).map(str.encode), nullable_bytes), max_size=4)
records = st.lists(st.tuples(nullable_bytes, nullable_bytes, headers, st.integers(0, 10**9),
                             st.integers(0, 3)), min_size=1, max_size=20)


@settings(max_examples=150, deadline=None)
@given(records, st.integers(0, 2**40), st.integers(-1, 2**40), st.integers(-1, 2**15 - 1),
       st.integers(-1, 2**31 - 1), st.integers(0, 2**31 - 1), st.sampled_from([0, 0x10, 0x08]))
def test_kio_batches(recs, base_offset, producer_id, producer_epoch, base_sequence, leader_epoch, attributes):
    offset = base_offset
    kio_records = []
    expected = []
    for key, value, hdrs, ts_delta, gap in recs:
        ms = EPOCH_MS + ts_delta
        ts = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
        kio_records.append(kio_schema.Record(
            attributes=0, timestamp=ts, offset=offset, key=key, value=value,
            headers=tuple(kio_schema.RecordHeader(key=k, value=v) for k, v in hdrs)))
        expected.append((offset, int(ts.timestamp() * 1000), key, value, hdrs))
        offset += 1 + gap
    buf = io.BytesIO()
    kio_writers.write_new_batch(buf, kio_schema.NewRecordBatch(
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        partition_leader_epoch=leader_epoch, attributes=attributes, records=tuple(kio_records)))
    raw = buf.getvalue()
    theirs, size = kio_readers.read_batch(raw, 0)
    assert size == len(raw)

    out = decode_records(raw)
    assert "error" not in out and out["partial_tail"] == 0
    (ours,) = out["batches"]
    assert "error" not in ours and ours["CrcValid"]
    assert ours["BaseOffset"] == theirs.base_offset and ours["BatchLength"] == theirs.batch_length
    assert ours["PartitionLeaderEpoch"] == theirs.partition_leader_epoch and ours["Crc"] == theirs.crc
    assert ours["LastOffsetDelta"] == theirs.last_offset_delta
    assert ours["BaseTimestamp"] == theirs.base_timestamp and ours["MaxTimestamp"] == theirs.max_timestamp
    assert ours["ProducerId"] == theirs.producer_id and ours["ProducerEpoch"] == theirs.producer_epoch
    assert ours["BaseSequence"] == theirs.base_sequence and ours["RecordCount"] == len(theirs.records)
    assert ours["Attributes"]["IsTransactional"] == bool(theirs.attributes & 0x10)
    assert ours["LastOffset"] == expected[-1][0]
    log_append = attributes & 0x08
    for mine, kio_rec, (offset, ms, key, value, hdrs) in zip(ours["Records"], theirs.records, expected):
        assert mine["Offset"] == kio_rec.offset == offset
        assert mine["Timestamp"] == (theirs.max_timestamp if log_append else ms)
        assert mine["Key"] == _shown(kio_rec.key) and mine["Value"] == _shown(kio_rec.value)
        assert mine["Headers"] == [{"Key": _shown(h.key), "Value": _shown(h.value)} for h in kio_rec.headers]
        assert [(h.key, h.value) for h in kio_rec.headers] == [tuple(h) for h in hdrs]

    assert summarize_records(raw)["batches"][0] == {k: v for k, v in ours.items() if k != "Records"}
