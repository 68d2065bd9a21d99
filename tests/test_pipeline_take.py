"""The readers' take path (TCP takes bookkeeping-only packets straight from the read buffer, and runs
of held records in one loop) and the Kafka connections' sinks (plain segments straight from TCP)
give exactly the exchanges and counters of the plain path, on every committed capture."""

from __future__ import annotations

from pathlib import Path

import pytest

import kwire.pipeline as pipeline_module
from kwire.capture.files import read_captures
from kwire.kafka.pairing import KafkaConnection
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import exchange_json_line

CAPTURES = sorted(p for p in (Path(__file__).parent.parent / "captures").iterdir()
                  if p.suffix in (".pcap", ".pcapng"))


def run(path: Path, take: str, monkeypatch) -> tuple[list, RunSummary]:
    """take: "none" (every packet becomes a Packet, no Kafka connection takes bytes straight from
    TCP), "packets" (take_ethernet only), "runs" (as kwire runs)."""
    if take == "none":
        monkeypatch.setattr(KafkaConnection, "sink", None)  # Connection.sink stays None
        monkeypatch.setattr(pipeline_module, "read_captures",
                            lambda paths, stats, **_: read_captures(paths, stats))
    elif take == "packets":
        monkeypatch.setattr(pipeline_module, "read_captures",
                            lambda paths, stats, take, take_run: read_captures(paths, stats, take))
    summary = RunSummary()
    rows = []
    for ex in analyze_files([str(path)], summary=summary):
        rows.append((exchange_json_line(ex, records="full"), ex.request_ts_ns, ex.response_ts_ns))
    monkeypatch.undo()
    return rows, summary


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_take_path_gives_the_same_exchanges(capture: Path, monkeypatch):
    plain, s1 = run(capture, "none", monkeypatch)
    for take in ("packets", "runs"):
        fast, s2 = run(capture, take, monkeypatch)
        assert fast == plain
        assert (s2.tcp, s2.net, s2.kafka, s2.capture) == (s1.tcp, s1.net, s1.kafka, s1.capture)
        assert s2.line() == s1.line()


def test_progress_follows_the_reader_though_tcp_takes_most_packets(monkeypatch):
    """Packets TCP takes in place never reach the pipeline's loop: progress still moves with the reader."""
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
