"""The findings log: kwire.live.findings_log.FindingsTracker on the findings of real problem captures,
and `kwire live --replay ... --findings-log FILE` end to end: every finding `kwire stats` lists is
logged once as started and once as ended, with the same id."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.live.findings_log import FindingsTracker, finding_id
from kwire.pipeline import analyze_files
from tests.metrics.prometheus import Kwire, free_port

ROOT = Path(__file__).resolve().parents[2]
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
    latest = max(f["end"] or f["start"] for f in findings)
    events = tracker.update(findings, latest)
    assert [e["event"] for e in events] == ["start"] * len(findings)
    assert tracker.update(findings, latest + 1) == []  # nothing new: nothing logged
    quiet = tracker.update(findings, latest + 3600)
    assert sorted(e["id"] for e in quiet) == sorted(finding_id(f) for f in findings)
    assert {(e["event"], e["reason"]) for e in quiet} == {("end", "quiet")}
    grown = dict(findings[0], end=latest + 3700)
    again = tracker.update([grown] + findings[1:], latest + 3700)
    assert [(e["event"], e["reason"], e["id"]) for e in again] == [("start", "again", finding_id(findings[0]))]
    gone = tracker.update(findings[1:], latest + 3701)
    assert [(e["event"], e["reason"]) for e in gone] == [("end", "gone")]


def test_a_growing_finding_keeps_its_id():
    finding = _findings("error-burst")[0]
    grown = dict(finding, count=finding.get("count", 0) + 5, summary="more", end=(finding["end"] or 0) + 3)
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
