"""kwire.render.dashboard.build_view: a pure function of a Snapshot that fits the terminal."""

from __future__ import annotations

import re

import pytest
from rich.console import Console

from kwire.live.snapshot import ApiRow, BrokerRow, Health, LagRow, ShareRow, SlowExchange, Snapshot
from kwire.render.dashboard import build_view
from kwire.render.dashboard_cells import fmt_bytes, fmt_count, fmt_ms, fmt_rate, sparkline

APIS = ["ShareFetch", "Produce", "Fetch", "ShareAcknowledge", "ApiVersions", "Metadata", "OffsetCommit",
        "Heartbeat", "FindCoordinator", "JoinGroup", "SyncGroup", "ListOffsets", "GetTelemetrySubscriptions"]


def _snapshot(n_apis: int = len(APIS), **overrides) -> Snapshot:
    apis = [ApiRow(api, requests=1000 - i, rate=100.0 - i * 7, p50_ms=0.25 + i, p99_ms=12.5 + i, max_ms=40.0,
                   errors=i % 3, bytes=123456 * (i + 1), history=[float((j * (i + 1)) % 9) for j in range(60)],
                   p99_history=[float(j % 5) for j in range(60)]) for i, api in enumerate(APIS[:n_apis])]
    snap = Snapshot(
        kind="replay", where="tests/live/data/mixed.pcap at 1x", now_ns=1_795_306_580_000_000_000, elapsed_s=4.0,
        window_s=10.0, exchanges=12345, rate=321.5, apis=apis,
        errors=[("UNSUPPORTED_VERSION", 14), ("NOT_LEADER_OR_FOLLOWER", 3)],
        clients=[(f"client-{i}", 10_000 * (6 - i)) for i in range(6)],
        topics=[(f"topic-{i}", 99_999 * (5 - i)) for i in range(5)],
        lag=[LagRow("kwire-live", i, 10 * i, 50) for i in range(4)],
        share=[ShareRow("live-share-group", 92, 270, 3, 268)],
        in_flight=3, oldest_in_flight_ms=512.0, unanswered=4, orphans=0,
        slowest=[SlowExchange(0, "Fetch", 500.0 - i, "127.0.0.1:1", "127.0.0.1:2", "live-consumer", i)
                 for i in range(8)],
        health=Health(packets=1104, bytes=196_000, packets_per_s=276.0, kernel_drops=None, gaps=0,
                      connections=0, kafka_connections=14, decode_errors=14),
        notes=["replay finished: 1,104 packets, 371 exchanges, 4.0 s of traffic (q quits)"],
        finished=True)
    for key, value in overrides.items():
        setattr(snap, key, value)
    return snap


def _screen(snap: Snapshot, width: int, height: int) -> list[str]:
    console = Console(width=width, height=height, color_system=None, force_terminal=True, legacy_windows=False)
    with console.capture() as capture:
        console.print(build_view(snap, width, height))
    lines = capture.get().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@pytest.mark.parametrize("width,height", [(80, 24), (100, 30), (132, 43), (200, 60), (60, 15), (40, 10)])
def test_the_view_fits_the_terminal(width, height):
    lines = _screen(_snapshot(), width, height)
    assert len(lines) <= height
    assert max(len(line) for line in lines) <= width


def test_80x24_shows_the_essentials():
    lines = _screen(_snapshot(), 80, 24)
    text = "\n".join(lines)
    assert lines[0].startswith("kwire live") and "q quits" in lines[0]
    assert "replay finished" in text
    header = next(line for line in lines if line.startswith("api "))
    assert re.search(r"req/s.*p50 ms.*p99 ms.*err", header)
    row = next(line for line in lines if line.startswith("ShareFetch "))
    assert row.split()[1:5] == ["100", "1,000", "0.250", "12.5"]
    for api in ("Produce", "Fetch"):
        assert any(line.startswith(api + " ") for line in lines)
    assert "+" in text and "more" in text  # not every api fits: the rest are counted
    assert "errors by code" in text and "UNSUPPORTED_VERSION" in text
    assert lines[-1].startswith("capture since start: 1,104 pkts")
    assert lines[-2].startswith("requests: in flight 3 now (oldest 512 ms) · since start: unanswered 4")


def test_wider_screens_get_more():
    narrow = "\n".join(_screen(_snapshot(), 80, 24))
    wide = "\n".join(_screen(_snapshot(), 200, 60))
    assert "p99 ms, last 60 s" in wide and "p99 ms, last" not in narrow
    assert "max ms" in wide and "bytes" in wide
    for panel in ("consumer lag", "share groups", "slowest (", "top clients by bytes", "top topics by bytes"):
        assert panel in wide
    assert all(api in wide for api in APIS)
    assert "more" not in wide.split("errors by code")[0]


def test_empty_dashboard_says_so():
    snap = _snapshot(0, notes=["waiting for packets on lo (tcp)..."], kind="live", finished=False,
                     errors=[], clients=[], topics=[], lag=[], share=[], slowest=[])
    text = "\n".join(_screen(snap, 80, 24))
    assert "waiting for packets on lo" in text
    assert "no Kafka requests yet" in text


def test_sparkline_scales_to_the_maximum_and_blanks_missing_seconds():
    assert sparkline([0, 1, 2, 4, 8], 5) == "▁▂▃▅█"
    assert sparkline([None, None, 3.0], 5) == "    █"
    assert sparkline([0, 0], 2) == "▁▁"
    assert len(sparkline(list(range(100)), 10)) == 10 and sparkline(list(range(100)), 10)[-1] == "█"
    assert sparkline([], 0) == ""


def test_number_formats():
    assert fmt_ms(None) == "-" and fmt_ms(0.0123) == "0.012" and fmt_ms(3.14159) == "3.14"
    assert fmt_ms(42.42) == "42.4" and fmt_ms(3001.2) == "3,001" and fmt_ms(250_000) == "250s"
    assert fmt_rate(0) == "0" and fmt_rate(0.5) == "0.50" and fmt_rate(4.26) == "4.3" and fmt_rate(12345.6) == "12.3k"
    assert fmt_count(999) == "999" and fmt_count(12345) == "12.3k" and fmt_count(2_500_000) == "2.5M"
    assert fmt_bytes(512) == "512 B" and fmt_bytes(2048) == "2.0 KiB" and fmt_bytes(None) == "-"


def test_build_view_is_pure():
    snap = _snapshot()
    assert _screen(snap, 100, 30) == _screen(snap, 100, 30)


def test_drops_are_shown_not_hidden():
    snap = _snapshot(kind="live", finished=False,
                     notes=["dropping packets: 7 so far - kwire cannot keep up, figures undercount"])
    snap.health = Health(packets=5000, bytes=1 << 20, packets_per_s=900.0, kernel_drops=2, queue_drops=5,
                         queue=1234, gaps=3)
    lines = _screen(snap, 80, 24)
    assert lines[1].startswith("dropping packets: 7 so far")
    assert lines[-1].startswith("capture since start: 5,000 pkts · 1.0 MiB · drops kernel 2 queue 5 · gaps 3")
