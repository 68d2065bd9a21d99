"""Record fingerprints (kwire.codec.record_prints): one record, one fingerprint, whatever batch carries it;
on the real resend of a librdkafka producer; and never an exception on bad bytes."""

from __future__ import annotations

import gzip

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.codec.record_prints import batch_heads, record_prints
from kwire.pipeline import analyze_files
from tests import problems as P
from tests.codec.test_records_encoder import GZIP, LZ4, NONE, SNAPPY, ZSTD, v2_batch

BASE = 1_700_000_000_000


def prints(batch: bytes) -> list[tuple[int, int, int]]:
    [(pos, size, _)] = batch_heads(batch)
    return record_prints(batch, pos, size)


def test_a_record_has_one_fingerprint_in_any_batch_position_or_codec():
    record = (b"k1", b"order 1", [(b"h", b"v")])
    first = prints(v2_batch([(*record, 5)], base_ts=BASE))
    for codec in (NONE, GZIP, SNAPPY, LZ4, ZSTD):
        again = prints(v2_batch([(b"k0", b"other", [], 0), (*record, 105)], base_ts=BASE - 100, codec=codec,
                                base_offset=40))
        assert [(d, ts) for d, ts, _ in again] == [(0, BASE - 100), (1, BASE + 5)]
        assert again[1][2] == first[0][2] and again[0][2] != first[0][2]


def test_key_value_headers_and_create_time_all_count():
    same = prints(v2_batch([(b"k", b"v", [(b"h", b"1")], 0)], base_ts=BASE))[0][2]
    for changed in [(b"k2", b"v", [(b"h", b"1")], 0), (b"k", b"v2", [(b"h", b"1")], 0),
                    (b"k", b"v", [(b"h", b"2")], 0), (b"k", b"v", [(b"h", b"1")], 1), (None, b"v", [(b"h", b"1")], 0)]:
        assert prints(v2_batch([changed], base_ts=BASE))[0][2] != same


def test_control_and_log_append_time_batches_have_none():
    assert prints(v2_batch([(b"\0\0\0\1", b"\0\0\0\0\0\0")], attributes=0x30, producer_id=7, producer_epoch=0)) == []
    assert prints(v2_batch([(b"k", b"v")], attributes=0x08)) == []


def test_the_record_librdkafka_sent_again_has_the_same_fingerprint_in_both_batches():
    """dup-write-librdkafka: the batch answered NOT_LEADER_OR_FOLLOWER (the proxy's truth) and the next
    batch of the producer share one fingerprint: the record the reader got twice, at its CreateTime."""
    name = "dup-write-librdkafka"
    rewrite = P.first(name, "proxy_produce_error")
    twice = {}
    for e in P.of(name, "consumed"):
        twice.setdefault((e["key"], e["timestamp"]), []).append(e["offset"])
    [created] = [ts for (_, ts), offsets in twice.items() if rewrite["stored_base_offset"] in offsets
                 and len(offsets) == 2]
    produces = [ex for ex in analyze_files([str(P.capture(name))]) if ex.api == "Produce" and ex.request]
    at = next(i for i, ex in enumerate(produces) if ex.correlation_id == rewrite["correlation_id"]
              and ex.client_id == rewrite["client_id"])
    failed, resent = (_prints_of(produces[at]), _prints_of(produces[at + 1]))
    assert {(ts, p) for _, ts, p in failed} & {(ts, p) for _, ts, p in resent} == {(created, failed[0][2])}
    assert len(resent) > len(failed)  # a new batch: the record again, and the next one beside it


def _prints_of(ex) -> list[tuple[int, int, int]]:
    out = []
    for topic in ex.request["TopicData"]:
        for part in topic["PartitionData"]:
            data = part["Records"].data
            for pos, size, _ in batch_heads(data):
                out += record_prints(data, pos, size)
    return out


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300), st.integers(min_value=0, max_value=400))
def test_bad_bytes_never_raise(garbage, cut):
    good = v2_batch([(b"k", b"v" * 20, [(b"h", b"x")]), (None, b"w")], codec=GZIP)
    for data in (garbage, good[:cut], good[:cut] + garbage, good[:20] + garbage):
        for pos, size, _ in batch_heads(data):
            assert isinstance(record_prints(data, pos, size), list)
        assert isinstance(record_prints(data, 0, len(data)), list)


def test_a_whole_batch_fed_byte_by_byte_gives_prints_only_when_whole():
    good = v2_batch([(b"k", b"v"), (b"k2", b"v2")])
    whole = prints(good)
    assert len(whole) == 2
    for cut in range(len(good)):
        assert record_prints(good[:cut], 0, cut) == []
    assert record_prints(good + gzip.compress(b"trailing"), 0, len(good)) == whole
