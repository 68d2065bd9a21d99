"""`kwire live --json` (no screen: the run's final figures as one JSON document) and `-w FILE -C MB`: on a
replay, and live on a veth pair in a network namespace while tcpreplay sends a real capture (root,
iproute2 and tcpreplay; skipped without). The counts must be what kwire's pipeline makes of the same
file; what -w kept must be the packets sent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kwire.capture.files import read_captures
from kwire.pipeline import RunSummary, analyze_files
from tests.netns import in_namespace, veth_namespace

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "tests" / "live" / "data" / "mixed.pcap"
PY = sys.executable
TX, RX = "kwj-tx", "kwj-rx"
KEYS = {"format", "interface", "filter", "duration_ms", "seconds", "packets", "bytes", "kernel_drops", "queue_drops",
        "figures_lag_max_ms", "figures_lag_max_s", "truncated",
        "gaps", "gap_bytes", "kafka_connections", "exchanges", "counted", "lost", "files", "error"}


def _summary(path) -> RunSummary:
    summary = RunSummary()
    for _ in analyze_files([str(path)], summary=summary):
        pass
    return summary


def _by_status(summary: RunSummary) -> dict:
    return {"total": summary.exchanges, "paired": summary.paired, "no_response": summary.no_response,
            "no_request": summary.no_request}


def test_json_of_a_replay():
    proc = subprocess.run([PY, "-m", "kwire", "live", "--replay", str(MIXED), "--speed", "0", "--json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert set(doc) == KEYS
    assert doc["format"] == "kwire-live/1" and doc["filter"] is None and doc["error"] is None
    assert doc["packets"] == 1104 and doc["kernel_drops"] is None and doc["queue_drops"] == 0
    assert doc["figures_lag_max_s"] is None and doc["figures_lag_max_ms"] is None  # one process: nothing waits
    assert abs(doc["duration_ms"] - doc["seconds"] * 1000) <= 0.5  # the deprecated seconds: rounded to the ms
    assert doc["exchanges"] == _by_status(_summary(MIXED)) and doc["counted"] == 371
    assert proc.stderr.startswith("kwire: live ")


def test_options_that_need_each_other():
    proc = subprocess.run([PY, "-m", "kwire", "live", "-C", "1"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and "-C needs -w FILE" in proc.stderr
    proc = subprocess.run([PY, "-m", "kwire", "live", "--replay", str(MIXED), "-w", "x.pcap"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "-w keeps what is captured live" in proc.stderr


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespace, packet socket)"
    for tool in ("ip", "tcpreplay"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    return None


@pytest.fixture
def veth():
    with veth_namespace(f"kwire-json-test-{os.getpid()}", TX, RX) as ns:
        yield ns


def _capturing(ns: str, dev: str) -> bool:
    """Is a packet socket bound to `dev` (/proc/net/packet of the namespace)?"""
    index = subprocess.run(["ip", "-n", ns, "-o", "link", "show", dev], capture_output=True, text=True,
                           check=True).stdout.split(":", 1)[0]
    table = subprocess.run(in_namespace(ns, "cat", "/proc/net/packet"), capture_output=True, text=True, check=True).stdout
    return any(line.split()[4] == index for line in table.splitlines()[1:] if len(line.split()) > 4)


@pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))
def test_live_json_and_the_packets_it_kept(veth, tmp_path):
    kept = tmp_path / "kept.pcap"
    # --duration ends the run; it starts before the replay, so it is long enough for it.
    kwire = subprocess.Popen(in_namespace(veth, PY, "-m", "kwire", "live", "-i", RX, "--json", "--duration", "20",
                                 "-w", str(kept), "-C", "0.05"),
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _capturing(veth, RX):
            assert kwire.poll() is None and time.monotonic() < deadline, kwire.stderr.read()
            time.sleep(0.1)
        subprocess.run(in_namespace(veth, "tcpreplay", "-q", "-i", TX, "--pps", "2000", str(MIXED)), check=True,
                       capture_output=True, timeout=120)
        out, err = kwire.communicate(timeout=120)
    finally:
        if kwire.poll() is None:
            kwire.kill()
            kwire.communicate()
    assert kwire.returncode == 0, err
    doc = json.loads(out)
    assert set(doc) == KEYS and doc["interface"] == RX and doc["filter"] == "tcp" and doc["error"] is None
    assert doc["seconds"] >= 20
    assert doc["packets"] == 1104 and doc["kernel_drops"] == 0 and doc["queue_drops"] == 0
    assert doc["exchanges"] == _by_status(_summary(MIXED)) and doc["counted"] == 371
    assert isinstance(doc["figures_lag_max_s"], float) and doc["figures_lag_max_s"] >= 0
    assert doc["figures_lag_max_ms"] == round(doc["figures_lag_max_s"] * 1000, 3)
    assert doc["gaps"] == 0 and doc["lost"] == []
    # -w -C 0.05: files of about 50 KB named as tcpdump names them, the packets sent, in order
    files = doc["files"]
    assert len(files) > 3 and files == [str(kept)] + [f"{kept}{i}" for i in range(1, len(files))]
    assert all(50_000 < os.path.getsize(f) < 50_000 + 66_000 for f in files[:-1])
    assert [p.data for f in files for p in read_captures([f])] == [p.data for p in read_captures([str(MIXED)])]
    assert "kwire: live kwj-rx: 1,104 packets, 371 exchanges" in err
