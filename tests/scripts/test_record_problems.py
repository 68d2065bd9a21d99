"""scripts/record_problems.py and its kit: the committed recordings are the scenarios', the fault
proxy rewrites what it says, and (where recording is possible) a real recording end to end."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return sys.modules[name]


rp = _load("record_problems")
kit = _load("problem_kit")
roles = _load("problem_roles")


def test_every_recording_is_a_scenario_and_every_scenario_is_recorded():
    recorded = {p.name[:-len(".pcap.gz")] for p in (SCRIPTS.parent / "captures" / "problems").glob("*.pcap.gz")}
    assert recorded == set(rp.PROBLEMS)
    for name in recorded:
        for suffix in (".pcap.truth.log.gz", ".pcap.truth.jsonl"):
            assert (SCRIPTS.parent / "captures" / "problems" / f"{name}{suffix}").exists()


def test_share_rules():
    rules = {"modulus": 10, "3": ["release", 1], "9": ["release", 99], "7": ["slow", 1]}
    assert roles.share_rule(rules, 13, 1) == "release" and roles.share_rule(rules, 13, 2) == "accept"
    assert roles.share_rule(rules, 19, 3) == "release" and roles.share_rule(rules, 7, 1) == "slow"
    assert roles.share_rule(rules, 4, 1) == "accept"


def test_fault_rules_rewrite_real_frames(tmp_path):
    truth = kit.Truth(tmp_path / "t.jsonl", "test")
    rules = kit.FaultRules(truth, corrupt_api_versions={"bad"}, throttle={"slow": (300, 1)})
    answer = bytearray(struct.pack(">ii", 10, 7) + b"\x00\x00" + struct.pack(">i", 1) + b"\x00\x12\x00\x00\x00\x03")
    rules.rewrite((18, 0, 7, "bad"), answer, 1)
    assert struct.unpack_from(">i", answer, 10)[0] == 100000
    fetch = bytearray(struct.pack(">ii", 9, 8) + b"\x00" + struct.pack(">i", 0))  # v12+: tagged fields byte
    rules.rewrite((1, 16, 8, "slow"), fetch, 1)
    assert struct.unpack_from(">i", fetch, 9)[0] == 300
    again = bytearray(fetch[:9] + struct.pack(">i", 0))
    rules.rewrite((1, 16, 9, "slow"), again, 1)  # only as many times as asked
    assert struct.unpack_from(">i", again, 9)[0] == 0
    truth.close()
    assert [json.loads(line)["event"] for line in (tmp_path / "t.jsonl").read_text().splitlines()] == \
        ["proxy_corrupted", "proxy_throttled"]


WHY_NOT = _load("record_capture").why_not_recordable()


@pytest.mark.skipif(WHY_NOT is not None, reason=f"cannot record here: {WHY_NOT}")
def test_a_real_recording(tmp_path):
    from kwire.analytics import Aggregator
    from kwire.pipeline import analyze_files

    out = rp.record("clean-share", tmp_path)
    events = [json.loads(line) for line in open(tmp_path / "clean-share.pcap.truth.jsonl")]
    delivered = [e for e in events if e["event"] == "delivered"]
    (flushed,) = [e for e in events if e["event"] == "flushed"]
    assert len(delivered) == flushed["sent"] > 0 and all(e["delivery_count"] == 1 for e in delivered)
    agg = Aggregator()
    for ex in analyze_files([str(out)]):
        agg.add_exchange(ex)
    doc = agg.document()
    assert doc["groups"]["kwire-workers"]["protocol"] == "share"
    assert all(f["severity"] == "info" for f in doc["findings"])
