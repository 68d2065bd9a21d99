"""`kwire live` in a real terminal: tmux runs it, send-keys presses q or Ctrl-C, capture-pane reads
what the screen shows. A replay of a real capture (Produce, Fetch and ShareFetch), and a live capture
on the loopback of a fresh network namespace while real clients talk to librdkafka's mock cluster.
Errors are checked as they reach a user: one line on stderr, no traceback.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files
from kwire.render.dashboard_cells import fmt_ms

ROOT = Path(__file__).resolve().parents[2]
MIXED = "tests/live/data/mixed.pcap"
PY = sys.executable
WAIT_S = 60.0  # the longest any screen may take to appear (a loaded CI machine)

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
_ids = itertools.count()


class Pane:
    """One command in a detached tmux session of a private tmux server."""

    def __init__(self, command: str, width: int = 100, height: int = 30):
        self.server = f"kwire-test-{os.getpid()}-{next(_ids)}"
        # After kwire: its exit status and the terminal's settings, then stay around to be read.
        shell = (f"{command}; echo KWIRE_EXIT=$?; echo TTY: $(stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)');"
                 " sleep 600")
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env["PYTHONPATH"] = str(ROOT)
        self._tmux("new-session", "-d", "-s", "t", "-x", str(width), "-y", str(height), "-c", str(ROOT),
                   shell, env=env)

    def _tmux(self, *args: str, env=None) -> str:
        proc = subprocess.run(["tmux", "-L", self.server, "-f", "/dev/null", *args], capture_output=True, text=True,
                              env=env, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def lines(self) -> list[str]:
        return self.screen().splitlines()

    def wait_for(self, condition, what: str, timeout: float = WAIT_S) -> str:
        """Poll the screen until condition(screen) holds; fail showing the last screen."""
        if isinstance(condition, str):
            text = condition
            condition = lambda screen: text in screen  # noqa: E731
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if condition(screen):
                return screen
            time.sleep(0.2)
        raise AssertionError(f"the screen never showed {what}:\n{screen}")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True)


@pytest.fixture
def panes():
    opened: list[Pane] = []

    def open_pane(command: str, width: int = 100, height: int = 30) -> Pane:
        pane = Pane(command, width, height)
        opened.append(pane)
        return pane

    yield open_pane
    for pane in opened:
        pane.close()


@pytest.fixture(scope="module")
def mixed_stats() -> dict:
    agg = Aggregator()
    for ex in analyze_files([str(ROOT / MIXED)]):
        agg.add_exchange(ex)
    return agg.document()


_NUMBER = r"[0-9][0-9.,]*[kMG]?"
_ROW = re.compile(rf"^(?P<api>[A-Za-z]\S*)\s+(?P<rate>{_NUMBER})\s+(?P<total>{_NUMBER})\s+(?P<p50>{_NUMBER}|-)\s+"
                  rf"(?P<p99>{_NUMBER}|-)\s+(?P<err>{_NUMBER})\b")


def api_rows(screen: str) -> dict[str, dict]:
    """The api table as the screen shows it: api -> {rate, total, p50, p99, err} (as text)."""
    rows = {}
    for line in screen.splitlines():
        match = _ROW.match(line)
        if match:
            rows[match["api"]] = match.groupdict()
    return rows


def _number(text: str) -> float:
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}.get(text[-1], 1)
    return float(text.rstrip("kMG").replace(",", "")) * scale


def _exited_cleanly(pane: Pane) -> str:
    screen = pane.wait_for("TTY:", "kwire's exit")
    assert "KWIRE_EXIT=0" in screen, screen
    # The alternate screen is gone and the terminal is back in canonical mode with echo.
    assert "requests by api" not in screen
    assert "TTY: icanon echo" in screen, screen
    assert "Traceback" not in screen
    return screen


@needs_tmux
def test_replay_shows_a_row_per_api_with_rate_and_p99_then_q_quits(panes, mixed_stats):
    pane = panes(f"{PY} -m kwire live --replay {MIXED} --speed 0")
    screen = pane.wait_for("replay finished", "the end of the replay")
    rows = api_rows(screen)
    for api in ("Produce", "Fetch", "ShareFetch", "ShareAcknowledge"):
        assert api in rows, screen
        expected = mixed_stats["apis"][api]
        assert _number(rows[api]["rate"]) > 0
        assert _number(rows[api]["total"]) == expected["exchanges"]
        assert rows[api]["p99"] == fmt_ms(expected["latency_ms"]["p99"])
        assert rows[api]["p50"] == fmt_ms(expected["latency_ms"]["p50"])
    assert "replay finished: 1,104 packets, 371 exchanges" in screen
    # ApiVersions refused and retried lower is version negotiation, not an error: the errors panel,
    # in its place whatever the traffic, says there are none
    lines = screen.splitlines()
    at = next(n for n, line in enumerate(lines) if "errors by code (since start)" in line)
    column = lines[at].index("errors by code")
    assert lines[at + 1][column:].startswith("none so far"), screen
    for panel in ("findings (since start)", "protocol_violation", "consumer lag", "kwire-live[", "share groups",
                  "live-share-group", "slowest (last 10 s)", "brokers (last 10 s"):
        assert panel in screen, panel
    assert re.search(r"capture since start: 1,104 pkts", screen)
    assert all(len(line) <= 100 for line in screen.splitlines())
    pane.keys("q")
    after = _exited_cleanly(pane)
    assert "kwire: live tests/live/data/mixed.pcap: 1,104 packets, 371 exchanges" in after.replace("\n", "")


@needs_tmux
def test_80x24_is_readable_and_ctrl_c_quits_cleanly(panes):
    pane = panes(f"{PY} -m kwire live --replay {MIXED} --speed 0", 80, 24)
    screen = pane.wait_for("replay finished", "the end of the replay")
    lines = screen.splitlines()
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
    rows = api_rows(screen)
    assert {"Produce", "Fetch", "ShareFetch"} <= set(rows), screen
    assert all(rows[api]["p99"] != "-" for api in ("Produce", "Fetch", "ShareFetch"))
    assert lines[0].startswith("kwire live") and "q quits" in lines[0]
    assert any(line.startswith("capture since start: 1,104 pkts") for line in lines)
    pane.keys("C-c")
    _exited_cleanly(pane)


@needs_tmux
def test_replay_at_the_recorded_pace_is_in_progress_until_its_end(panes):
    # At a tenth of the recorded pace the 3.6 s capture takes 36 s: the first screens show it running.
    pane = panes(f"{PY} -m kwire live --replay {MIXED} --speed 0.1")
    screen = pane.wait_for(lambda s: "Produce" in api_rows(s), "the first Produce row")
    assert "replay finished" not in screen
    assert re.search(r"exchanges\s+replay\s+q quits", screen.splitlines()[0])
    assert "Fetch" not in api_rows(screen)  # the consumer's first Fetch is 3.2 s into the capture
    pane.keys("q")
    _exited_cleanly(pane)


@needs_tmux
def test_exit_when_done_quits_at_the_end_of_the_replay(panes):
    pane = panes(f"{PY} -m kwire live --replay {MIXED} --speed 0 --exit-when-done")
    screen = _exited_cleanly(pane)
    assert "371 exchanges" in screen.replace("\n", "")


def test_without_a_terminal_the_last_view_is_printed_once():
    proc = subprocess.run([PY, "-m", "kwire", "live", "--replay", MIXED, "--speed", "0"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("requests by api") == 1
    assert "replay finished" in proc.stdout and "ShareFetch" in proc.stdout
    assert proc.stderr.startswith("kwire: live tests/live/data/mixed.pcap: 1,104 packets, 371 exchanges")
    assert "\x1b[?1049h" not in proc.stdout  # no alternate screen


# ----------------------------------------------------------------------------------------------
# Errors: one line on exit, never a traceback


def _kwire(*args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, PY, "-m", "kwire", "live", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def _one_error_line(proc: subprocess.CompletedProcess, pattern: str) -> None:
    assert proc.returncode == 1, proc
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert re.fullmatch(pattern, lines[0]), lines[0]
    assert proc.stdout == ""


def test_unknown_interface():
    _one_error_line(_kwire("-i", "kwire-nope0"),
                    r"kwire: error: no interface named 'kwire-nope0' \(this machine has: .*\blo\b.*\)")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to reach the filter compiler through a capture socket")
def test_bad_filter():
    _one_error_line(_kwire("-i", "lo", "--bpf", "tcp port"),
                    r"kwire: error: bad capture filter 'tcp port': .*syntax error.*")


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to take CAP_NET_RAW away")
def test_no_permission_to_capture():
    proc = _kwire("-i", "lo", prefix=("setpriv", "--bounding-set", "-net_raw", "--inh-caps", "-net_raw"))
    _one_error_line(proc, r"kwire: error: no permission to capture on lo: run as root or give python CAP_NET_RAW"
                          r" \(or watch a recorded capture with --replay FILE\)")


def test_replay_of_something_that_is_not_a_capture():
    _one_error_line(_kwire("--replay", "README.md"), r"kwire: error: README.md: not a pcap or pcapng capture .*")
    _one_error_line(_kwire("--replay", "no/such.pcap"), r"kwire: error: no/such.pcap: no such file")


def test_options_that_do_not_go_together():
    proc = _kwire("--speed", "2")
    assert proc.returncode == 2 and "--speed applies to --replay only" in proc.stderr
    proc = _kwire("--replay", MIXED, "-i", "lo")
    assert proc.returncode == 2 and "-i and --bpf do not apply" in proc.stderr


# ----------------------------------------------------------------------------------------------
# Live: -i lo in a network namespace of its own, real clients, the mock cluster


def _can_make_namespaces() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespace, packet socket)"
    if shutil.which("ip") is None:
        return "needs iproute2"
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        return "needs confluent-kafka"
    return None


@pytest.fixture
def namespace():
    name = f"kwire-live-test-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True)
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True,
                       capture_output=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


def _in_namespace(ns: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


_NOT_KAFKA = """
import socket, time
server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen()
client = socket.create_connection(server.getsockname()); peer, _ = server.accept()
for _ in range(20):
    client.sendall(b"GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"); peer.recv(100); time.sleep(0.05)
"""


@needs_tmux
@pytest.mark.skipif(_can_make_namespaces() is not None, reason=str(_can_make_namespaces()))
def test_live_on_lo_while_real_clients_talk_to_the_mock_cluster(panes, namespace):
    import confluent_kafka

    pane = panes(" ".join(_in_namespace(namespace, PY, "-m", "kwire", "live", "-i", "lo")))
    pane.wait_for("waiting for packets on lo (tcp)", "the waiting note")
    # TCP that is not Kafka: the dashboard says so instead of showing nothing.
    subprocess.run(_in_namespace(namespace, PY, "-c", _NOT_KAFKA), check=True, timeout=60)
    pane.wait_for("no Kafka seen yet", "the no-Kafka note")
    traffic = subprocess.Popen(_in_namespace(namespace, PY, str(ROOT / "scripts" / "bench_live.py"), "traffic",
                                             "--seconds", "30", "--rate", "50"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wanted = ["Produce", "Fetch"] + (["ShareFetch"] if hasattr(confluent_kafka, "ShareConsumer") else [])

        def every_api_has_rate_and_p99(screen: str) -> bool:
            rows = api_rows(screen)
            return all(api in rows and _number(rows[api]["rate"]) > 0 and rows[api]["p99"] != "-"
                       for api in wanted)

        screen = pane.wait_for(every_api_has_rate_and_p99, f"rows for {wanted} with rates and p99")
        assert "no Kafka seen yet" not in screen
        assert re.search(r"capture since start: [0-9.,k]+ pkts .* drops kernel [0-9.,k]+ queue [0-9.,k]+ · gaps",
                         screen)
        assert "capturing" in screen.splitlines()[0]
        pane.keys("q")
        after = _exited_cleanly(pane)
        assert re.search(r"kwire: live lo: [0-9,]+ packets, [0-9,]+ exchanges", after.replace("\n", ""))
    finally:
        traffic.terminate()
        try:
            traffic.wait(30)
        except subprocess.TimeoutExpired:
            traffic.kill()
            traffic.wait(10)

