"""kwire.capture.ring on a real interface: a veth pair in a network namespace of its own, packets sent
on one end with tcpreplay, the ring reading the other end beside tcpdump. What the ring hands over
must be what tcpdump saw, byte for byte and nanosecond for nanosecond; the kernel filter keeps the rest
out; the kernel's drops are counted; a VLAN tag the kernel took out comes back; an interface that goes
away ends the capture with one error. Needs root, iproute2, tcpdump and tcpreplay (skipped without)."""

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

from tests.capture.builders import pcap
from tests.native.test_fused import ether_ipv4_tcp
from tests.netns import in_namespace, veth_namespace

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "tests" / "live" / "data" / "mixed.pcap"
TX, RX = "kwt-tx", "kwt-rx"
TS = 1_795_000_000_000_000_000


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespace, packet socket)"
    for tool in ("ip", "tcpdump", "tcpreplay"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


@pytest.fixture
def veth():
    """A namespace with a veth pair, both ends up, offloads that merge segments off."""
    with veth_namespace(f"kwire-ring-test-{os.getpid()}", TX, RX) as ns:
        yield ns


class Probe:
    """tests/capture/ring_probe.py running in the namespace."""

    def __init__(self, ns: str, iface: str, expression: str, out: Path, *extra: str):
        self.proc = subprocess.Popen(in_namespace(ns, sys.executable, "-m", "tests.capture.ring_probe", iface, expression,
                                         str(out), *extra), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", self.proc.stderr.read()

    def say(self, text: str) -> None:
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def finish(self) -> dict:
        """Close its stdin (it reads what the ring still holds, then stops) and take its figures."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
            self.proc.stdin = None
        out, err = self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0, err
        return json.loads(out.strip().splitlines()[-1])


class Tcpdump:
    def __init__(self, ns: str, iface: str, expression: str, out: Path):
        self.out = out
        self.proc = subprocess.Popen(in_namespace(ns, "tcpdump", "-i", iface, "-n", "-s", "0", "-U", "-w", str(out),
                                         "--immediate-mode", "--time-stamp-precision=nano", expression),
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        assert "listening" in line, line

    def finish(self, expected: int) -> None:
        """Stop once it has written `expected` packets (or after a while: the test then says what it saw)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if len(_packets(self.out)) >= expected:
                    break
            except Exception:  # noqa: BLE001 - a record half written: look again
                pass
            time.sleep(0.1)
        self.proc.terminate()
        self.proc.communicate(timeout=30)


def _replay(ns: str, path: Path, pps: int = 2000) -> None:
    subprocess.run(in_namespace(ns, "tcpreplay", "-q", "-i", TX, "--pps", str(pps), str(path)), check=True,
                   capture_output=True, timeout=120)


def _packets(path: Path) -> list[tuple[int, bytes, int]]:
    return [(p.ts_ns, p.data, p.wire_len) for p in read_captures([str(path)])]


def _settle() -> None:
    time.sleep(0.5)  # the last block is handed over within the ring's retire timeout


def test_the_ring_hands_over_what_tcpdump_sees(veth, tmp_path):
    probe = Probe(veth, RX, "tcp", tmp_path / "ring.pcap")
    dump = Tcpdump(veth, RX, "tcp", tmp_path / "tcpdump.pcap")
    _replay(veth, MIXED)
    dump.finish(1104)
    stats = probe.finish()
    seen, ring = _packets(tmp_path / "tcpdump.pcap"), _packets(tmp_path / "ring.pcap")
    assert len(seen) == 1104 and stats["packets"] == stats["collected"] == 1104
    assert ring == seen  # times (kernel nanoseconds), bytes, wire lengths
    assert [p[1] for p in ring] == [p.data for p in read_captures([str(MIXED)])]  # what tcpreplay sent
    assert stats["kernel_drops"] == 0 and stats["linktype"] == 1 and stats["error"] is None


def test_the_kernel_filter_keeps_the_rest_out_and_vlan_tags_come_back(veth, tmp_path):
    client, server, other = (b"\x0a\x00\x00\x01", 40000), (b"\x0a\x00\x00\x02", 9092), (b"\x0a\x00\x00\x02", 9093)
    wanted = ether_ipv4_tcp(client, server, 1, 1, 0x18, b"kafka")
    not_wanted = ether_ipv4_tcp(client, other, 1, 1, 0x18, b"other")
    udp = wanted[:23] + b"\x11" + wanted[24:]
    tagged = wanted[:12] + b"\x81\x00\x00\x07" + wanted[12:]  # VLAN 7
    sent = tmp_path / "sent.pcap"
    sent.write_bytes(pcap([(TS + i, frame) for i, frame in enumerate([wanted, not_wanted, udp, tagged, wanted])]))
    probe = Probe(veth, RX, "tcp port 9092", tmp_path / "ring.pcap")
    dump = Tcpdump(veth, RX, "tcp port 9092", tmp_path / "tcpdump.pcap")
    _replay(veth, sent)
    dump.finish(3)
    probe.finish()
    ring = _packets(tmp_path / "ring.pcap")
    assert [p[1] for p in ring] == [wanted, tagged, wanted]  # the tag the kernel took out is back
    assert ring == _packets(tmp_path / "tcpdump.pcap")


def test_the_kernel_counts_what_it_drops_when_the_ring_is_full(veth, tmp_path):
    frames = [ether_ipv4_tcp((b"\x0a\x00\x00\x01", 40000), (b"\x0a\x00\x00\x02", 9092), 1 + 100 * i, 1, 0x18,
                             bytes(100)) for i in range(2000)]
    sent = tmp_path / "burst.pcap"
    sent.write_bytes(pcap([(TS + i, f) for i, f in enumerate(frames)]))
    # two blocks of 4 KiB, nobody reading while the burst arrives
    probe = Probe(veth, RX, "tcp", tmp_path / "ring.pcap", str(8192), "--hold")
    _replay(veth, sent, pps=20000)
    _settle()
    probe.say("go\n")
    stats = probe.finish()
    assert stats["kernel_drops"] > 1000
    assert stats["packets"] + stats["kernel_drops"] == 2000
    assert [p[1] for p in _packets(tmp_path / "ring.pcap")] == frames[:stats["packets"]]


def test_an_interface_that_goes_away_ends_the_capture_with_one_error(veth, tmp_path):
    probe = Probe(veth, RX, "tcp", tmp_path / "ring.pcap")
    subprocess.run(["ip", "-n", veth, "link", "del", RX], check=True, capture_output=True)
    stats = probe.finish()
    assert stats["error"] == f"capture on {RX} stopped: the interface went away"
