"""`kwire live --metrics ... --no-screen` as a service: bad addresses and caps are one line, the health
line comes every interval (and when a replay ends, which then keeps serving), scrapes are answered
while a replay runs and after it has ended."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kwire.cli.exporter import parse_address, start_exporter
from kwire.cli.service import run_service
from kwire.errors import KwireError
from kwire.live.feeder import Feeder
from kwire.live.labels import LabelCaps
from kwire.live.metrics_state import MetricsState
from kwire.live.sources import ReplaySource
from kwire.live.state import DashboardState
from tests.metrics.prometheus import get

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "captures" / "multi-broker-3.pcap"


def _kwire(*argv):
    return subprocess.run([sys.executable, "-m", "kwire", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_address_forms():
    assert parse_address(":9464") == ("0.0.0.0", 9464)
    assert parse_address("9464") == ("0.0.0.0", 9464)
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address("[::1]:9464") == ("::1", 9464)
    for bad in ("host:port", "70000", ""):
        with pytest.raises(KwireError):
            parse_address(bad)


def test_errors_are_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = _kwire("live", "--replay", str(CAPTURE), "--metrics", f"127.0.0.1:{port}", "--no-screen")
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1].startswith(f"kwire: error: cannot listen on 127.0.0.1:{port}")
    assert "Traceback" not in out.stderr
    out = _kwire("live", "--replay", str(CAPTURE), "--metrics-cap", "client_id=3", "--no-screen")
    assert out.returncode == 2 and "--metrics-cap needs --metrics" in out.stderr
    out = _kwire("live", "--replay", str(CAPTURE), "--metrics", ":0", "--metrics-cap", "clients=3")
    assert out.returncode == 2 and "expected LABEL=N" in out.stderr
    out = _kwire("live", "--replay", str(CAPTURE), "--metrics", "nowhere:port")
    assert out.returncode == 1 and "kwire: error: --metrics nowhere:port: expected [HOST:]PORT" in out.stderr


def test_health_lines_and_scrapes_during_and_after_a_replay(capsys):
    state = DashboardState("replay", "test", metrics=MetricsState(LabelCaps()))
    feeder = Feeder(ReplaySource([str(CAPTURE)], 0.5), state)  # half speed: about 10 s of traffic
    exporter = start_exporter("127.0.0.1:0", feeder, state)
    quit_event = threading.Event()
    scrapes = []

    def scrape_then_quit():
        scrapes.append(get(f"http://127.0.0.1:{exporter.port}/metrics")[1])  # while the replay runs
        feeder.wait(120)
        scrapes.append(get(f"http://127.0.0.1:{exporter.port}/metrics")[1])  # after its end
        threading.Timer(1.5, quit_event.set).start()

    feeder.start()
    try:
        threading.Timer(1.0, scrape_then_quit).start()
        run_service(feeder, quit_event, "test", duration=None, exit_when_done=False, every_s=1.0)
    finally:
        feeder.stop()
        exporter.stop()
    lines = capsys.readouterr().err.splitlines()
    assert len([line for line in lines if " packets (" in line]) >= 3
    assert sum("serving the final figures until interrupted" in line for line in lines) == 1
    during, after = scrapes

    def total(text):
        return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("kwire_exchanges_total{"))

    assert 0 <= total(during) < total(after) == state.exchanges


class _Ended:
    """A feeder whose capture has stopped."""

    running = False

    def snapshot(self):
        from kwire.live.snapshot import Snapshot

        return Snapshot(kind="live", where="x", now_ns=0, elapsed_s=0.0, window_s=10.0, finished=True)


def test_a_live_capture_that_stops_ends_the_service_a_replay_does_not(capsys):
    quit_event = threading.Event()
    run_service(_Ended(), quit_event, "eth0", duration=None, exit_when_done=False, replay=False)
    assert "serving the final figures" not in capsys.readouterr().err
    threading.Timer(1.0, quit_event.set).start()
    run_service(_Ended(), quit_event, "x.pcap", duration=None, exit_when_done=False, replay=True)
    assert quit_event.is_set() and "serving the final figures" in capsys.readouterr().err
