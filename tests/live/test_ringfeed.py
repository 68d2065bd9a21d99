"""kwire.live.ringfeed.RingFeeder: the capture process forked, batches over the channel, exchanges decoded
and counted in the dashboard's process. A stand-in ring lays a real capture out in TPACKET_V3 blocks
(tests/capture/ring_blocks) and the real block walk reads them, so this runs without root; the
figures must be kwire stats' figures of the same file, the final counts its pipeline's."""

from __future__ import annotations

import time
from pathlib import Path

from kwire.analytics import Aggregator
from kwire.capture.files import read_captures
from kwire.capture.packet import LINKTYPE_ETHERNET
from kwire.capture.ring import RingStats, block_records, walk_block
from kwire.live.report import final_document
from kwire.live.ringfeed import RingFeeder
from kwire.live.state import DashboardState
from kwire.pipeline import RunSummary, analyze_files

from tests.capture.ring_blocks import Frame, block

MIXED = str(Path(__file__).parent / "data" / "mixed.pcap")
BLOCK = 1 << 18


class FileRing:
    """RingCapture's interface over a capture file: its packets in ring blocks of `per_block`."""

    where = "a file"
    linktype = LINKTYPE_ETHERNET
    blocks = 4  # as RingCapture.blocks: the blocks a ring holds

    def __init__(self, path: str, per_block: int = 50):
        self.path = path
        self.per_block = per_block
        self.stats = RingStats()
        self.closed = False

    def open(self) -> None:
        self.packets = list(read_captures([self.path]))

    def feed(self, sink, writer=None, idle_s: float = 0.05):
        for first in range(0, len(self.packets), self.per_block):
            frames = [Frame(p.ts_ns, p.data, p.wire_len) for p in self.packets[first:first + self.per_block]]
            ring = bytes(block(frames, size=BLOCK))
            if writer is not None:
                writer.write(block_records(ring, 0, BLOCK, self.linktype))
            walk_block(ring, 0, BLOCK, self.linktype, sink, self.stats)
            yield
        while True:  # then no more traffic
            time.sleep(idle_s)
            yield

    def ready(self) -> bool:
        return False  # what the file held was handed over at once

    def read_drops(self) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


def _stats_of(path: str) -> tuple[dict, RunSummary]:
    agg, summary = Aggregator(), RunSummary()
    for ex in analyze_files([path], summary=summary):
        agg.add_exchange(ex)
    return agg.document(), summary


def _until(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_the_figures_of_a_ring_capture_are_kwire_stats_figures(tmp_path):
    out = tmp_path / "kept.pcap"
    state = DashboardState("live", "test")
    feeder = RingFeeder(None, "tcp", state, ring=FileRing(MIXED), write=str(out))
    feeder.start()
    assert feeder.ring.closed  # the capture process owns it now
    _until(lambda: feeder.snapshot().health.packets == 1104)
    feeder.stop()
    snap = feeder.snapshot()
    doc, summary = _stats_of(MIXED)
    assert snap.finished and not feeder.error
    assert snap.health.packets == 1104 and snap.health.kernel_drops == 0 and snap.health.queue_drops == 0
    assert snap.exchanges == doc["totals"]["exchanges"] == 371
    assert {r.api: r.requests for r in snap.apis} == {a: e["exchanges"] for a, e in doc["apis"].items()}
    assert dict(snap.errors) == doc["totals"]["errors"]
    assert snap.health.kafka_connections == 14
    health, report = feeder.totals()
    final = final_document(where="test", expression="tcp", seconds=1.0, health=health, report=report,
                           counted=snap.exchanges, files=feeder.files, error=None)
    assert final["exchanges"] == {"total": summary.exchanges, "paired": summary.paired,
                                  "no_response": summary.no_response, "no_request": summary.no_request}
    assert final["packets"] == 1104 and final["files"] == [str(out)]
    # -w: the capture process wrote what the ring handed over, and it is the same traffic
    kept, _ = _stats_of(str(out))
    assert kept["totals"] == doc["totals"] and kept["apis"] == doc["apis"]


def test_filters_apply_in_the_dashboard_process():
    from kwire.query import ExchangeFilter

    keep = ExchangeFilter(api_keys=frozenset({0}))  # Produce only
    state = DashboardState("live", "test", keep=keep)
    feeder = RingFeeder(None, "tcp", state, ring=FileRing(MIXED, per_block=7))
    feeder.start()
    _until(lambda: feeder.snapshot().health.packets == 1104)
    feeder.stop()
    snap = feeder.snapshot()
    doc, _ = _stats_of(MIXED)
    assert [r.api for r in snap.apis] == ["Produce"]
    assert snap.exchanges == doc["apis"]["Produce"]["exchanges"]
    _, report = feeder.totals()
    assert report["exchanges"]["total"] == 371  # the capture process counts every exchange


def test_a_capture_process_that_fails_is_a_note_and_an_error():
    class Failing(FileRing):
        def feed(self, sink, writer=None, idle_s=0.05):
            from kwire.errors import CaptureError

            yield
            raise CaptureError("capture on a file stopped: the interface went away")

    state = DashboardState("live", "test")
    feeder = RingFeeder(None, "tcp", state, ring=Failing(MIXED))
    feeder.start()
    assert feeder.wait(60)
    feeder.stop()
    snap = feeder.snapshot()
    assert feeder.error == "capture on a file stopped: the interface went away"
    assert snap.finished and any("the interface went away" in note for note in snap.notes)
