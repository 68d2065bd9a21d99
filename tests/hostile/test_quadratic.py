"""Issue 25, work that grew with the square of the input: each test counts the work a hostile input
costs (never wall time) and holds it to a bound linear in the input. Each fails on the code before
the fix (the work was quadratic there).
"""

from __future__ import annotations

import re

import pytest

from kwire.capture.files import read_captures
from kwire.pipeline import Pipeline, analyze_files
from tests.hostile import generators


class _CountingPattern:
    """A compiled pattern that counts the bytes its searches cover."""

    def __init__(self, pattern: re.Pattern):
        self.pattern = pattern
        self.searched = 0

    def finditer(self, buf, pos: int = 0, endpos: int | None = None):
        end = len(buf) if endpos is None else min(endpos, len(buf))
        self.searched += max(0, end - pos)
        return self.pattern.finditer(buf, pos, end)


def test_mid_stream_tls_detection_searches_each_byte_about_once(tmp_path, monkeypatch):
    """1-byte segments whose bytes look like record headers that never chain: the detector used to
    search everything it held again at every segment."""
    import kwire.tls.detect as detect

    counting = _CountingPattern(detect.CANDIDATE_HEADER)
    monkeypatch.setattr(detect, "CANDIDATE_HEADER", counting)
    path = tmp_path / "rescan.pcap"
    generators.tls_detector_rescan(path)
    pipeline = Pipeline()
    fed = 0
    for packet in read_captures([str(path)]):
        pipeline.feed(packet)
        fed += 1
    pipeline.finish()
    payload = 2 * 5 * 8_000  # two connections of 40,000 bytes
    assert counting.searched <= 3 * payload, counting.searched


def test_a_lost_tls_sequence_is_given_up(tmp_path, monkeypatch):
    """After a gap in a decrypted TLS 1.3 connection, 600 records that verify under no key: each was
    tried at up to 4,096 sequence numbers, for ever (earlier records had verified)."""
    from kwire.tls import KeyLog
    from kwire.tls import direction as tls_direction

    path = tmp_path / "gap.pcap"
    generators.tls_gap_garbage(path)
    keys = KeyLog()
    keys.add_text((tmp_path / "gap.pcap.keys").read_bytes())
    tried = []
    candidates = tls_direction.Direction._candidates

    def counted(self, body):
        seqs = candidates(self, body)
        tried.append(len(seqs))
        return seqs

    monkeypatch.setattr(tls_direction.Direction, "_candidates", counted)
    from kwire.pipeline import RunSummary

    summary = RunSummary()
    list(analyze_files([str(path)], keys=keys, summary=summary))
    assert len(tried) <= 16 and sum(tried) <= 16 * 4096, (len(tried), sum(tried))
    rows = [r for r in summary.tls.rows if r["records_decrypted"]]
    assert any(not r["decrypted"] and "gap" in r["reason"] for r in rows), rows


def test_an_assignment_naming_a_topic_many_times_is_sorted_once(monkeypatch):
    import kwire.codec.consumer_protocol as cp

    calls = []

    def counting_sorted(items, *args, **kw):
        calls.append(1)
        return sorted(items, *args, **kw)

    monkeypatch.setattr(cp, "sorted", counting_sorted, raising=False)
    decoded = {"AssignedPartitions": [{"Topic": "t", "Partitions": [p]} for p in range(20_000)]
               + [{"Topic": "u", "Partitions": [1, 2]}]}
    assert cp.assignment_partitions(decoded) == {"t": list(range(20_000)), "u": [1, 2]}
    assert len(calls) <= 2, len(calls)


def test_unanswered_joins_do_not_scan_every_connection(tmp_path, monkeypatch):
    """300 JoinGroups never answered among 3,000 connections: each used to scan every connection."""
    import kwire.analytics.findings_groups as fg
    from kwire.analytics.aggregate import Aggregator

    path = tmp_path / "joins.pcap"
    generators.unanswered_joins(path)
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    calls = []
    host_of = fg.host_of

    def counting(endpoint):
        calls.append(1)
        return host_of(endpoint)

    monkeypatch.setattr(fg, "host_of", counting)
    document = agg.document()
    assert any(f["kind"] == "join_stuck" for f in document["findings"])
    assert len(calls) <= 3 * 3_001 + 20 * 300, len(calls)


class _CountingList(list):
    """A list that counts the items read from it: by iteration, and by slices (copies)."""

    iterated = 0

    def __iter__(self):
        for item in super().__iter__():
            _CountingList.iterated += 1
            yield item

    def __getitem__(self, index):
        item = super().__getitem__(index)
        _CountingList.iterated += len(item) if isinstance(index, slice) else 1
        return item


@pytest.mark.parametrize("scale", [1])
def test_w_finds_each_kept_range_by_bisection(tmp_path, monkeypatch, scale):
    """-w keeping every other one of 20,000 exchanges of one connection: each segment's kept range
    was looked up by a scan of the connection's ranges."""
    import kwire.excerpt as excerpt
    from kwire.excerpt import Excerpt

    finish = excerpt._Direction.finish

    def counted_finish(self):
        finish(self)
        self.ranges = _CountingList(self.ranges)

    monkeypatch.setattr(excerpt._Direction, "finish", counted_finish)
    _CountingList.iterated = 0
    path = tmp_path / "ranges.pcap"
    generators.excerpt_ranges(path, scale)
    cut = Excerpt()
    kept = 0
    for ex in analyze_files([str(path)], track_spans=True):
        if ex.api == "ApiVersions":
            cut.add(ex)
            kept += 1
    written = cut.write([str(path)], str(tmp_path / "out.pcap"))
    assert written > 2 * kept
    assert _CountingList.iterated <= 40 * kept, _CountingList.iterated  # linear (was kept ** 2 / 2)
