"""The fast path (kwire.native.fused: records straight from the read buffer into TCP and on to the Kafka
connections, runs of held records in one loop) gives exactly the exchanges and counters of the plain
path (every record a Packet, decoded by kwire.net, fed to TCP), on every committed capture."""

from __future__ import annotations

from pathlib import Path

import pytest

import kwire.pipeline
from kwire.native.fused import RecordFeed
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import exchange_json_line

CAPTURES = sorted(p for p in (Path(__file__).parent.parent / "captures").iterdir()
                  if p.suffix in (".pcap", ".pcapng"))


class NoRuns(RecordFeed):
    """The fast path record by record: no runs."""

    __slots__ = ()

    def run(self, buf, pos, end, layout):
        return pos, 0


def run(path: Path, take: str, monkeypatch) -> tuple[list, RunSummary]:
    """take: "none" (the plain path), "records" (the fast path record by record, no runs), "runs"
    (as kwire runs)."""
    if take == "records":  # (a subclass: the compiled core's RecordFeed is an extension type, not patchable)
        monkeypatch.setattr(kwire.pipeline, "RecordFeed", NoRuns)
    summary = RunSummary()
    rows = []
    for ex in analyze_files([str(path)], summary=summary, fast=take != "none"):
        rows.append((exchange_json_line(ex, records="full"), ex.request_ts_ns, ex.response_ts_ns))
    monkeypatch.undo()
    return rows, summary


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_take_path_gives_the_same_exchanges(capture: Path, monkeypatch):
    plain, s1 = run(capture, "none", monkeypatch)
    for take in ("records", "runs"):
        fast, s2 = run(capture, take, monkeypatch)
        assert fast == plain
        assert (s2.tcp, s2.net, s2.kafka, s2.capture) == (s1.tcp, s1.net, s1.kafka, s1.capture)
        assert s2.line() == s1.line()


def test_progress_follows_the_reader_though_tcp_takes_most_packets(monkeypatch):
    """Records the fast path takes never become Packets: progress still moves with the reader."""
    import kwire.capture.source as source

    monkeypatch.setattr(source, "CHUNK", 64 << 10)
    capture = next(p for p in CAPTURES if p.name == "bulk-fetch.pcap")
    seen = []
    summary = RunSummary()
    for _ in analyze_files([str(capture)], summary=summary, progress=lambda stats: seen.append(stats.packets)):
        pass
    assert len(seen) >= 5
    assert seen == sorted(set(seen))
    assert seen[-1] <= summary.capture.packets
