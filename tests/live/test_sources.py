"""kwire.live.sources.ReplaySource: the recorded pace, sped up, and the dashboard clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.capture.files import read_captures
from kwire.errors import CaptureError
from kwire.live.sources import ReplaySource

MIXED = str(Path(__file__).parent / "data" / "mixed.pcap")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _all_packets():
    return list(read_captures([MIXED]))


@pytest.mark.parametrize("speed", [1.0, 4.0, 0.5])
def test_packets_are_due_at_the_recorded_pace_times_speed(speed):
    packets = _all_packets()
    first = packets[0].ts_ns
    clock = FakeClock()
    source = ReplaySource([MIXED], speed, clock=clock)
    source.start()
    handed: list = []
    for step in range(1, 80):
        clock.now = 1000.0 + step * 0.1
        got = source.take(0)
        limit = first + int((clock.now - 1000.0) * speed * 1e9)
        assert all(p.ts_ns <= limit for p in got)
        handed += got
        # Everything due has been handed out (at most one batch per take).
        due = [p for p in packets if p.ts_ns <= limit]
        assert len(handed) == len(due) or len(got) == 2048
        assert first <= source.now_ns() <= max(limit, handed[-1].ts_ns if handed else first)
        if source.finished:
            break
    assert [p.ts_ns for p in handed] == [p.ts_ns for p in packets][: len(handed)]


def test_the_clock_stops_at_the_last_packet_when_the_replay_ends():
    packets = _all_packets()
    clock = FakeClock()
    source = ReplaySource([MIXED], 1.0, clock=clock)
    source.start()
    clock.now += 3600
    handed = []
    while not source.finished:
        handed += source.take(0)
    assert len(handed) == len(packets) == source.packets
    assert source.now_ns() == packets[-1].ts_ns
    clock.now += 3600
    assert source.now_ns() == packets[-1].ts_ns
    assert source.take(0) == []


def test_the_clock_waits_for_a_packet_not_yet_due():
    packets = _all_packets()
    clock = FakeClock()
    source = ReplaySource([MIXED], 1.0, clock=clock)
    source.start()
    clock.now += 0.5
    source.take(0)
    assert source.now_ns() == packets[0].ts_ns + 500_000_000


def test_speed_zero_hands_everything_out_at_once_in_batches():
    packets = _all_packets()
    source = ReplaySource([MIXED], 0)
    source.start()
    got = source.take(0)
    assert len(got) == len(packets)  # fewer than one batch
    assert source.finished
    assert source.now_ns() == packets[-1].ts_ns
    assert source.health()["packets"] == len(packets)
    assert source.health()["bytes"] == sum(p.wire_len for p in packets)


def test_not_a_capture_fails_at_start(tmp_path):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello, not a capture\n")
    with pytest.raises(CaptureError, match="not a pcap or pcapng capture"):
        ReplaySource([str(bogus)], 1.0).start()


def test_a_damaged_capture_replays_what_it_can_then_reports(tmp_path):
    data = Path(MIXED).read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[: len(data) // 2 + 7])
    source = ReplaySource([str(cut)], 0)
    source.start()
    got = []
    while not source.finished:
        got += source.take(0)
    assert 0 < len(got) < len(_all_packets())
    assert source.error and "cut.pcap" in source.error


def test_negative_speed_is_refused():
    with pytest.raises(ValueError):
        ReplaySource([MIXED], -1)
