"""kwire.live.feeder.Feeder: a source through the pipeline on a thread, snapshots on request."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.errors import CaptureError
from kwire.live.feeder import Feeder
from kwire.live.sources import ReplaySource
from kwire.live.state import DashboardState
from kwire.pipeline import analyze_files

MIXED = str(Path(__file__).parent / "data" / "mixed.pcap")


def test_a_replay_runs_to_its_end_and_the_snapshot_matches_stats():
    feeder = Feeder(ReplaySource([MIXED], 0), DashboardState("replay", MIXED))
    feeder.start()
    assert feeder.wait(60)
    snap = feeder.snapshot()
    feeder.stop()
    agg = Aggregator()
    for ex in analyze_files([MIXED]):
        agg.add_exchange(ex)
    doc = agg.document()
    assert snap.finished and snap.exchanges == doc["totals"]["exchanges"]
    assert {r.api: r.requests for r in snap.apis} == {a: e["exchanges"] for a, e in doc["apis"].items()}
    assert snap.health.packets == 1104 and snap.health.kafka_connections == 14
    assert any(n.startswith("replay finished: 1,104 packets, 371 exchanges") for n in snap.notes)


def test_snapshots_from_another_thread_while_it_runs():
    source = ReplaySource([MIXED], 20.0)  # a few tenths of a second of real time
    feeder = Feeder(source, DashboardState("replay", MIXED))
    feeder.start()
    seen = []
    while not feeder.wait(0.02):
        seen.append(feeder.snapshot().exchanges)
    seen.append(feeder.snapshot().exchanges)
    feeder.stop()
    assert seen == sorted(seen) and seen[-1] == 371
    assert len(seen) > 2


def test_stop_before_the_end_leaves_no_thread():
    feeder = Feeder(ReplaySource([MIXED], 0.01), DashboardState("replay", MIXED))
    feeder.start()
    feeder.stop()
    assert not feeder.running
    assert not feeder.snapshot().finished


def test_a_bad_capture_fails_at_start(tmp_path):
    bogus = tmp_path / "x.pcap"
    bogus.write_bytes(b"\x00" * 64)
    feeder = Feeder(ReplaySource([str(bogus)], 0), DashboardState("replay", str(bogus)))
    with pytest.raises(CaptureError):
        feeder.start()


def test_a_failure_inside_the_pipeline_becomes_a_note_not_a_traceback(monkeypatch):
    feeder = Feeder(ReplaySource([MIXED], 0), DashboardState("replay", MIXED))

    def broken(packet):
        raise RuntimeError("boom")

    monkeypatch.setattr(feeder.pipeline, "feed", broken)
    errors = []
    monkeypatch.setattr(threading, "excepthook", lambda args: errors.append(args))
    feeder.start()
    assert feeder.wait(30)
    snap = feeder.snapshot()
    assert not errors
    assert feeder.error == "internal error in the pipeline: RuntimeError: boom"
    assert snap.finished and snap.notes[0] == feeder.error
