"""count_v2_records (the statistics' fast path) against the summary walk it stands in for: the
records of the whole, non-control batches, on every record set of the committed captures and on
built sets with control batches, cut batches, legacy messages and garbage."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.native.codec_records import count_v2_records, summarize_records
from kwire.codec.values import RawRecords
from kwire.pipeline import analyze_files

from .test_records_encoder import GZIP, ZSTD, control_batch, legacy_message, v2_batch

CAPTURES = sorted(str(p) for p in (Path(__file__).parents[2] / "captures").iterdir()
                  if p.name.endswith((".pcap", ".pcapng", ".pcap.gz")))


def counted_by_summary(buf) -> int:
    """records_facts' rule over summarize_records: RecordCount of whole, non-control batches."""
    total = 0
    for batch in summarize_records(buf)["batches"]:
        if batch.get("partial") or "error" in batch:
            continue
        attributes = batch.get("Attributes")
        if isinstance(attributes, dict) and attributes.get("IsControl"):
            continue
        total += batch.get("RecordCount") or 0
    return total


def _record_sets(node):
    if isinstance(node, RawRecords):
        yield node.data
    elif isinstance(node, dict):
        for value in node.values():
            yield from _record_sets(value)
    elif isinstance(node, list):
        for value in node:
            yield from _record_sets(value)


def test_every_record_set_of_the_committed_captures():
    seen = fast = 0
    for ex in analyze_files(CAPTURES):
        for body in (ex.request, ex.response):
            for data in _record_sets(body):
                seen += 1
                count = count_v2_records(data)
                if count is not None:
                    fast += 1
                    assert count == counted_by_summary(data)
    assert seen > 100 and fast > seen // 2


def test_control_batches_do_not_count_and_anything_else_is_left_to_the_summary():
    data = v2_batch([(b"k", b"v")] * 3) + control_batch(0, 1) + v2_batch([(b"k", b"v")] * 2, codec=ZSTD)
    assert count_v2_records(data) == 5 == counted_by_summary(data)
    assert count_v2_records(b"") == 0
    assert count_v2_records(data[:-1]) is None  # the last batch cut
    assert count_v2_records(legacy_message(1, 0, b"k", b"v")) is None
    assert count_v2_records(data + b"\x00" * 20) is None  # garbage after the batches


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.booleans(), st.sampled_from((0, GZIP, ZSTD))), max_size=5),
       st.integers(0, 64), st.binary(max_size=8))
def test_whenever_it_answers_it_agrees(batches, cut, tail):
    data = b"".join(control_batch(0, 1) if control else v2_batch([(b"k", b"v")] * n, codec=codec)
                    for n, control, codec in batches)
    for buf in (data, data[:max(0, len(data) - cut)], data + tail, memoryview(data)):
        count = count_v2_records(buf)
        if count is not None:
            assert count == counted_by_summary(buf)
