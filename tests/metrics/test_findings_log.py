"""The findings log: kwire.live.findings_log.FindingsTracker on the findings of real problem captures,
and `kwire live --replay ... --findings-log FILE` end to end: every finding `kwire stats` lists is
logged once as started and once as ended, with the same id; the findings open when the capture ends are
ended once, on every kind of end (a replay's or standard input's end, a live capture that stopped, an
error, a signal, q, --duration), with what ended it (`ended_by`)."""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.cli import service
from kwire.cli.live import QuitEvent, _stop_cause
from kwire.live.findings_log import (CAPTURE_STOPPED, DURATION, FAILED, QUIT, REPLAY_FINISHED, SIGNAL,
                                     FindingsTracker, capture_end, finding_id)
from kwire.live.state import DashboardState
from kwire.pipeline import analyze_files
from tests.metrics.prometheus import Kwire, free_port

ROOT = Path(__file__).resolve().parents[2]
NS = 1_000_000_000
PROBLEMS = ["member-expired", "error-burst", "share-redelivery", "txn-stall", "proxy-faults"]


def _findings(name: str) -> list[dict]:
    agg = Aggregator()
    for ex in analyze_files([str(ROOT / "captures" / "problems" / f"{name}.pcap.gz")]):
        agg.add_exchange(ex)
    return agg.document()["findings"]


def test_start_once_then_end_when_quiet_or_gone():
    findings = _findings("proxy-faults")
    assert len({finding_id(f) for f in findings}) == len(findings) >= 2  # distinct findings, distinct ids
    tracker = FindingsTracker(quiet_s=60)
    latest = max(f["end_ts_ns"] or f["start_ts_ns"] for f in findings)
    events = tracker.update(findings, latest)
    assert [e["event"] for e in events] == ["start"] * len(findings)
    assert {(e["at_ts_ns"], e["at"]) for e in events} == {(latest, latest / 1e9)}
    assert tracker.update(findings, latest + NS) == []  # nothing new: nothing logged
    quiet = tracker.update(findings, latest + 3600 * NS)
    assert sorted(e["id"] for e in quiet) == sorted(finding_id(f) for f in findings)
    assert {(e["event"], e["reason"], e["at_ts_ns"]) for e in quiet} == {("end", "quiet", latest + 3600 * NS)}
    grown = dict(findings[0], end_ts_ns=latest + 3700 * NS)
    again = tracker.update([grown] + findings[1:], latest + 3700 * NS)
    assert [(e["event"], e["reason"], e["id"]) for e in again] == [("start", "again", finding_id(findings[0]))]
    gone = tracker.update(findings[1:], latest + 3701 * NS)
    assert [(e["event"], e["reason"]) for e in gone] == [("end", "gone")]


def test_a_growing_finding_keeps_its_id():
    finding = _findings("error-burst")[0]
    grown = dict(finding, count=finding.get("count", 0) + 5, summary="more",
                 end_ts_ns=(finding["end_ts_ns"] or 0) + 3_000_000_000)
    assert finding_id(grown) == finding_id(finding)


@pytest.mark.parametrize("name", PROBLEMS)
def test_replay_logs_every_finding_started_and_ended(tmp_path, name):
    capture = ROOT / "captures" / "problems" / f"{name}.pcap.gz"
    log = tmp_path / "findings.jsonl"
    port = free_port()
    kwire = Kwire(["live", "--replay", str(capture), "--speed", "0", "--no-screen", "--findings-log", str(log),
                   "--metrics", f"127.0.0.1:{port}"])
    try:
        kwire.wait_line("serving the final figures")
    finally:
        assert kwire.stop() == 0
    events = [json.loads(line) for line in log.read_text().splitlines()]
    doc = json.loads(subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", "--no-summary", str(capture)],
                                    cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    expected = {finding_id(f): f for f in doc["findings"]}
    assert expected
    starts = [e for e in events if e["event"] == "start"]
    ends = [e for e in events if e["event"] == "end"]
    assert {e["id"] for e in starts} >= set(expected)
    assert sorted(e["id"] for e in ends) == sorted(e["id"] for e in starts)
    for e in ends:
        if e["id"] in expected and e["reason"] == "capture ended":
            f = expected[e["id"]]
            assert (e["kind"], e["severity"], e["summary"], e["start"], e["end"]) == \
                (f["kind"], f["severity"], f["summary"], f["start"], f["end"])


def test_findings_log_to_stdout_needs_no_screen():
    out = subprocess.run([sys.executable, "-m", "kwire", "live", "--replay", str(ROOT / "captures" / "problems" /
                          "unanswered.pcap.gz"), "--speed", "0", "--json", "--findings-log", "-"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--findings-log - writes to stdout" in out.stderr


def test_findings_log_to_stdout_as_a_service():
    kwire = Kwire(["live", "--replay", str(ROOT / "captures" / "problems" / "unanswered.pcap.gz"), "--speed", "0",
                   "--no-screen", "--exit-when-done", "--findings-log", "-"], stdout=subprocess.PIPE)
    out, _ = kwire.process.communicate(timeout=120)
    assert kwire.process.returncode == 0
    events = [json.loads(line) for line in out.splitlines()]
    assert events and {e["event"] for e in events} == {"start", "end"}
    assert all(e["kind"] and e["evidence"] is not None for e in events)


# ---- the end of the capture: every finding still open ends once, with what ended it (issue 48) ----------


def test_what_ended_a_capture_on_its_own_is_read_from_the_state():
    assert capture_end("replay", False, None) is None
    assert capture_end("replay", True, None) == REPLAY_FINISHED
    assert capture_end("live", True, None) == CAPTURE_STOPPED
    assert capture_end("live", True, "the capture process ended") == capture_end("replay", True, "cut") == FAILED


def test_the_capture_end_ends_every_open_finding_once():
    findings = _findings("proxy-faults")
    tracker = FindingsTracker()
    latest = max(f["end_ts_ns"] or f["start_ts_ns"] for f in findings)
    tracker.update(findings, latest)
    ended = tracker.update(findings, latest, SIGNAL)
    assert sorted(e["id"] for e in ended) == sorted(finding_id(f) for f in findings)
    assert {(e["event"], e["reason"], e["ended_by"]) for e in ended} == {("end", "capture ended", SIGNAL)}
    assert all("capture_error" not in e for e in ended)
    assert tracker.update(findings, latest, DURATION) == []  # ended once: a second end writes nothing
    with pytest.raises(ValueError):
        FindingsTracker().update(findings, latest, "capture ended")


class _Feeder:
    """A feeder whose thread has ended: `call` runs the job in the asker's thread, as SnapshotThread does."""

    def call(self, job):
        return job()


def _state(kind: str, name: str = "proxy-faults") -> DashboardState:
    state = DashboardState(kind, name)
    state.add_exchanges(list(analyze_files([str(ROOT / "captures" / "problems" / f"{name}.pcap.gz")])))
    return state


def _logged(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _ends(events: list[dict]) -> dict[str, list[dict]]:
    """Each finding's end events, by id: a finding that started and ended once has one."""
    out: dict[str, list[dict]] = {}
    for e in events:
        if e["event"] == "end":
            out.setdefault(e["id"], []).append(e)
    return out


def _ended_once_by(events: list[dict], ended_by: str) -> None:
    starts = {e["id"] for e in events if e["event"] == "start"}
    ends = _ends(events)
    assert starts and set(ends) == starts
    assert all(len(each) == 1 and each[0]["reason"] == "capture ended" and each[0]["ended_by"] == ended_by
               for each in ends.values()), ends


@pytest.mark.parametrize("kind, error, ended_by", [("replay", None, REPLAY_FINISHED), ("live", None, CAPTURE_STOPPED),
                                                    ("replay", "a.pcap: absurd record length", FAILED)])
def test_the_log_ends_the_findings_when_the_capture_ends_on_its_own(tmp_path, monkeypatch, kind, error, ended_by):
    """The log's own thread sees the end (a replay served on after its end, a live capture that stopped, an
    error) and ends the open findings then, not at the signal that stops kwire later; close adds nothing."""
    monkeypatch.setattr(service, "FINDINGS_EVERY_S", 0.05)
    state = _state(kind)
    state.finished, state.error = True, error
    log = service.FindingsLog(str(tmp_path / "log.jsonl"), _Feeder(), state)
    log.start()
    log._thread.join(10)
    assert not log._thread.is_alive() and log.ended == ended_by  # it stopped looking once it had ended them
    before = (tmp_path / "log.jsonl").read_text()
    log.close(SIGNAL)
    events = _logged(tmp_path / "log.jsonl")
    assert (tmp_path / "log.jsonl").read_text() == before
    _ended_once_by(events, ended_by)
    assert all(e.get("capture_error") == error for e in events if e["event"] == "end")


@pytest.mark.parametrize("cause", [SIGNAL, QUIT, DURATION, FAILED])
def test_a_run_stopped_from_outside_ends_the_findings_by_its_cause(tmp_path, cause):
    state = _state("replay")  # not finished: kwire was stopped before the replay's end
    log = service.FindingsLog(str(tmp_path / "log.jsonl"), _Feeder(), state)
    log.close(cause)
    _ended_once_by(_logged(tmp_path / "log.jsonl"), cause)


def test_the_quit_event_keeps_the_first_cause_and_duration_is_told_apart():
    event = QuitEvent()
    assert _stop_cause(event, None, 0.0) is None  # the capture ended on its own: the state says how
    assert _stop_cause(event, 5.0, time.monotonic() - 6) == DURATION
    event.quit(QUIT)
    event.quit(SIGNAL)
    assert event.is_set() and _stop_cause(event, 5.0, time.monotonic() - 6) == QUIT


def _live(args: list[str], log: Path, **popen) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kwire", "live", *args, "--no-screen", "--findings-log", str(log)],
                          cwd=ROOT, capture_output=True, text=True, timeout=180, **popen)


def test_a_replay_served_on_logs_its_end_when_it_ends(tmp_path):
    """Issue 48: the replay's end was logged only at the SIGINT that stopped kwire, not when the replay ended."""
    log = tmp_path / "findings.jsonl"
    kwire = Kwire(["live", "--replay", str(ROOT / "captures" / "problems" / "slow-broker.pcap.gz"), "--speed", "0",
                   "--no-screen", "--findings-log", str(log)])
    try:
        kwire.wait_line("serving the final figures")
        deadline = time.monotonic() + 30
        while not (log.exists() and _ends(_logged(log))) and time.monotonic() < deadline:
            time.sleep(0.2)
        served = log.read_text()
    finally:
        assert kwire.stop() == 0
    assert log.read_text() == served  # the signal ended nothing more
    _ended_once_by(_logged(log), REPLAY_FINISHED)


def test_a_signal_before_the_replays_end_ends_the_findings_by_the_signal(tmp_path):
    log = tmp_path / "findings.jsonl"
    kwire = Kwire(["live", "--replay", str(ROOT / "captures" / "problems" / "error-burst.pcap.gz"), "--speed", "1",
                   "--no-screen", "--findings-log", str(log)])
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        assert kwire.stop() == 0  # SIGTERM, well before the recording's end (it lasts minutes at speed 1)
    _ended_once_by(_logged(log), SIGNAL)


def test_duration_ends_the_findings_by_duration(tmp_path):
    log = tmp_path / "findings.jsonl"
    run = _live(["--replay", str(ROOT / "captures" / "problems" / "error-burst.pcap.gz"), "--speed", "1",
                 "--duration", "5"], log)
    assert run.returncode == 0, run.stderr
    _ended_once_by(_logged(log), DURATION)


def test_standard_input_at_its_end_ends_the_findings_as_a_replay(tmp_path):
    log = tmp_path / "findings.jsonl"
    data = gzip.decompress((ROOT / "captures" / "problems" / "slow-broker.pcap.gz").read_bytes())
    run = subprocess.run([sys.executable, "-m", "kwire", "live", "--replay", "-", "--speed", "0", "--no-screen",
                          "--exit-when-done", "--findings-log", str(log)], cwd=ROOT, input=data, capture_output=True,
                         timeout=180)
    assert run.returncode == 0, run.stderr
    _ended_once_by(_logged(log), REPLAY_FINISHED)


def test_a_capture_error_ends_the_findings_with_the_error(tmp_path):
    """A replay that stops at a broken record: exit 1, its findings ended by the error, which they quote."""
    capture, log = tmp_path / "broken.pcap", tmp_path / "findings.jsonl"
    data = gzip.decompress((ROOT / "captures" / "problems" / "error-burst.pcap.gz").read_bytes())
    capture.write_bytes(data + struct.pack("<IIII", 1795470700, 0, 0x7FFFFFF0, 0x7FFFFFF0) + b"x" * 64)
    run = _live(["--replay", str(capture), "--speed", "0", "--exit-when-done"], log)
    assert run.returncode == 1 and "absurd record length" in run.stderr
    events = _logged(log)
    _ended_once_by(events, FAILED)
    assert all("absurd record length" in e["capture_error"] for e in events if e["event"] == "end")
