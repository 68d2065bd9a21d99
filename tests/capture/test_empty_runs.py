"""Empty records alike, back to back, reach the RecordSink as one empty_run, in pcap and pcapng alike (issue 49:
a compressed capture of gigabytes of them took minutes, a record() call and a Packet each); what the pipeline
makes of a run is what it makes of the same records one by one, mixed with real traffic, on known and unknown
link types."""

from __future__ import annotations

import io

import pytest

import kwire.pipeline
from kwire.capture.files import open_captures, read_captures
from kwire.capture.packet import RecordSink
from kwire.capture.stats import CaptureStats
from kwire.native.fused import RecordFeed
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import exchange_json_line
from tests.capture import builders as b
from tests.hostile3.compressed import BULK, compress

T0 = 1_700_000_000_000_000_000


class Counting(RecordSink):
    def __init__(self):
        self.records = []
        self.runs = []

    def record(self, ts, linktype, buf, start, stop, wire_len):
        self.records.append((ts, linktype, bytes(buf[start:stop]), wire_len))
        return False

    def empty_run(self, ts, linktype, wire_len, count):
        self.runs.append((ts, linktype, wire_len, count))


def _pcap(empties: int) -> bytes:
    records = [(T0, b"first")]
    records += [(T0 + 1000, b"")] * empties + [(T0 + 2000, b"", 60)] * empties  # the second run: cut records
    records += [(T0 + 3000, b""), (T0 + 4000, b"last")]
    return b.pcap(records)


def _pcapng(empties: int) -> bytes:
    blocks = [b.shb(), b.idb(1), b.idb(147), b.epb(0, 1, b"first")]
    blocks += [b.epb(0, 2, b"")] * empties + [b.epb(1, 3, b"", wire_len=60)] * empties
    blocks += [b.spb(b"")] * 3 + [b.epb(0, 4, b"last")]
    return b"".join(blocks)


@pytest.mark.parametrize("container", ["pcap", "pcapng"])
@pytest.mark.parametrize("fmt", [None, "zstd"])
def test_empty_records_alike_are_one_call(container, fmt):
    empties = 300_000  # 4.8 MiB of pcap record headers, 9.6 MiB of blocks: several chunks
    data = _pcap(empties) if container == "pcap" else _pcapng(empties)
    if fmt:
        data = compress(fmt, data)
    sink, stats = Counting(), CaptureStats()
    for _ in open_captures([io.BytesIO(data)], stats).feed(sink):
        pass
    chunks = stats.read_bytes // (1 << 20) + 1
    handed = [r for r in sink.records if r[2]]
    assert [r[2] for r in handed] == [b"first", b"last"]
    assert len(sink.records) - len(handed) <= 2 * chunks + 4  # a run's last record at a chunk's end, alone
    one_by_one = {}
    for ts, lt, data_, wire in sink.records:
        if not data_:
            one_by_one[(ts, lt, wire)] = one_by_one.get((ts, lt, wire), 0) + 1
    for ts, lt, wire, count in sink.runs:
        one_by_one[(ts, lt, wire)] = one_by_one.get((ts, lt, wire), 0) + count
    if container == "pcap":
        assert one_by_one == {(T0 + 1000, 1, 0): empties, (T0 + 2000, 1, 60): empties, (T0 + 3000, 1, 0): 1}
    else:
        assert one_by_one == {(2000, 1, 0): empties, (3000, 147, 60): empties, (3000, 1, 0): 3}
    assert len(sink.runs) <= 3 * chunks
    assert (stats.packets, stats.truncated) == (2 * empties + (3 if container == "pcap" else 5), empties)


class OneByOne(RecordFeed):
    """The fast path without empty runs: each empty record through record(), as before them."""

    __slots__ = ()

    def __init__(self, flows, feed_packet, feed_empty=None):
        super().__init__(flows, feed_packet, None)


def _mixed(tmp_path):
    """bulk-fetch's packets in a pcapng of three interfaces (Ethernet, an unknown link type, raw IP), with runs
    of empty records alike on each between them."""
    blocks = [b.shb(), b.idb(1), b.idb(147), b.idb(101)]
    for i, p in enumerate(read_captures([BULK])):
        ticks = p.ts_ns // 1000
        blocks.append(b.epb(0, ticks, p.data))
        if i % 100 == 7:
            blocks += [b.epb(i % 3, ticks, b"", wire_len=i % 2 * 54)] * (1000 + i)
    path = tmp_path / "mixed.pcapng"
    path.write_bytes(b"".join(blocks))
    return path


def _run(path, monkeypatch, feed=None, fast=True):
    if feed is not None:
        monkeypatch.setattr(kwire.pipeline, "RecordFeed", feed)
    summary = RunSummary()
    rows = [exchange_json_line(ex, records="full") for ex in analyze_files([str(path)], summary=summary, fast=fast)]
    monkeypatch.undo()
    return rows, summary


def test_the_pipeline_makes_of_a_run_what_it_makes_of_its_records(tmp_path, monkeypatch):
    path = _mixed(tmp_path)
    runs, s1 = _run(path, monkeypatch)
    for feed, fast in ((OneByOne, True), (None, False)):
        each, s2 = _run(path, monkeypatch, feed, fast)
        assert each == runs and runs
        assert (s2.tcp, s2.net, s2.kafka, s2.capture) == (s1.tcp, s1.net, s1.kafka, s1.capture)
        assert s2.line() == s1.line()
    assert s1.net["unknown_linktype"] > 1000 and s1.net["short"] > 1000
