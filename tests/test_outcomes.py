"""Outcomes as kinds (kwire.outcomes): what happened to each body and exchange is data, read by the
counters and findings; bodies a bound did not keep are counted as such, never as malformed.

The real recording captures/problems/pending-cap.pcap.gz (scripts/record_problems.py): a
confluent-kafka Producer pipelines 12 Produce requests of ~240 KB to librdkafka's mock broker, which
answers each 2 s late, so its connection holds ~3 MB of unanswered requests, past a cap lowered to
1 MiB. Which bodies that cap drops is worked out from the client's own log (what it sent and
received, in order), not from kwire's framing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kwire.errors import DecodeError
from kwire.native import kafka_pairing as pairing
from kwire.outcomes import (BODY_KINDS, KINDS, MALFORMED, NOT_KEPT, SENDER, TRAILING_BYTES, BodyOutcome,
                            NOT_KEPT_BODY,
                            describe, error_text, malformed)
from kwire.pipeline import RunSummary, analyze_files
from tests import problems as P
from tests import truthlog

ROOT = Path(__file__).resolve().parents[1]
CAP = 1 << 20
NAME = "pending-cap"


def _committed_captures() -> list[Path]:
    root = ROOT / "captures"
    found = [p for p in root.rglob("*.pcap*") if not p.name.endswith((".log", ".keys", ".jsonl", ".log.gz"))]
    return sorted(p for p in found if "/tls/" not in str(p))


def _expected_not_kept(cap: int) -> set[tuple[str, int]]:
    """(api, correlation id) of the request bodies a per-connection cap of `cap` bytes drops, the
    oldest waiting first (README, kwire.native.kafka_pairing), from the client's own log in its order."""
    kept: dict[tuple, list] = {}  # connection -> [[corr, api, size, waiting]] oldest first
    dropped = set()
    for rec in truthlog.parse(P.log(NAME)):
        queue = kept.setdefault(rec.connection, [])
        if rec.direction == truthlog.SENT:
            queue.append([rec.corr_id, rec.api, rec.size])
            while sum(size for _, _, size in queue) > cap:
                corr, api, _ = queue.pop(0)
                dropped.add((api, corr))
        elif rec.direction == truthlog.RECEIVED:
            queue[:] = [item for item in queue if item[0] != rec.corr_id]
    return dropped


def _run(*args: str, cap: int = CAP) -> subprocess.CompletedProcess:
    env = dict(os.environ, KWIRE_MAX_PENDING_BYTES=str(cap), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kwire", *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_the_recording_goes_past_the_cap_by_the_clients_own_log():
    sent = [r for r in truthlog.parse(P.log(NAME)) if r.direction == truthlog.SENT and r.api == "Produce"]
    assert len(sent) >= 8 and sum(r.size for r in sent) > 2 * CAP
    assert len(_expected_not_kept(CAP)) >= 4
    assert not _expected_not_kept(pairing.MAX_PENDING_BYTES)  # the default cap holds it all


@pytest.mark.parametrize("jobs", ["0", "2"])
def test_inspect_json_past_the_cap(jobs):
    proc = _run("inspect", "--json", "-j", jobs, str(P.capture(NAME)))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    not_kept = {(x["api"], x["correlation_id"]) for x in lines if x["request_outcome"] == NOT_KEPT}
    assert not_kept == _expected_not_kept(CAP)
    for x in lines:
        if x["request_outcome"] == NOT_KEPT:  # paired and timed, its body not decoded, nothing blamed
            assert x["status"] == "paired" and x["latency_ms"] > 1000 and x["request"] is None
            assert x["request_error"] == describe(NOT_KEPT_BODY)
            assert x["response_outcome"] == "decoded"
    produce = [x for x in lines if x["api"] == "Produce"]
    truth = [r for r in truthlog.parse(P.log(NAME)) if r.direction == truthlog.SENT and r.api == "Produce"]
    assert sorted(x["correlation_id"] for x in produce) == sorted(r.corr_id for r in truth)
    assert all(x["request_outcome"] in ("decoded", NOT_KEPT) for x in produce)
    assert "decode error" not in proc.stderr and f"{len(not_kept)} unanswered request bodies not kept" in proc.stderr


@pytest.mark.parametrize("jobs", ["0", "2"])
def test_stats_counts_bodies_not_kept_not_as_malformed(jobs):
    proc = _run("stats", "--json", "-j", jobs, str(P.capture(NAME)))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    totals = doc["totals"]
    expected = Counter(api for api, _ in _expected_not_kept(CAP))
    assert totals["decode_errors"] == 0 and totals["failed"] == 0
    assert totals["body_outcomes"].get(NOT_KEPT) == sum(expected.values())
    for api, n in expected.items():
        assert doc["apis"][api]["body_outcomes"][NOT_KEPT] == n
    assert not [f for f in doc["findings"] if f["kind"] == "protocol_violation" and f["api"] == "Produce"]
    assert "decode error" not in proc.stderr


def _run_in_process(capture: Path, cap: int, monkeypatch) -> tuple[RunSummary, list]:
    monkeypatch.setattr(pairing, "MAX_PENDING_BYTES", cap)
    summary = RunSummary()
    exchanges = list(analyze_files([str(capture)], summary=summary))
    return summary, exchanges


def _violations(exchanges) -> Counter:
    from kwire.analytics.observe import observations

    return Counter((obs[1], obs[2]) for ex in exchanges for obs in observations(ex) if obs[0] == "pv")


@pytest.mark.parametrize("capture", _committed_captures(), ids=lambda p: p.name)
def test_a_tiny_cap_adds_no_decode_error_and_no_violation(capture, monkeypatch):
    base_summary, base = _run_in_process(capture, pairing.MAX_PENDING_BYTES, monkeypatch)
    summary, capped = _run_in_process(capture, 10, monkeypatch)
    assert summary.decode_errors == base_summary.decode_errors  # malformed bodies are the sender's alone
    assert len(capped) == len(base)
    kinds = Counter(ex.request_outcome.kind for ex in capped if ex.request_outcome is not None)
    assert kinds[NOT_KEPT] == summary.kafka.get("dropped_bodies", 0)
    for side_kind, n in _violations(capped).items():  # a body not kept has nothing to blame its sender for
        assert n <= _violations(base)[side_kind]


def test_kinds_are_registered_once_with_their_text():
    assert set(BODY_KINDS) == {"decoded", "malformed", "trailing_bytes", "null_not_nullable", "cut_by_snaplen",
                               "not_kept", "kept_in_part", "no_decoder", "undecryptable"}
    assert [k for k, v in KINDS.items() if v.blames == SENDER] == [MALFORMED, TRAILING_BYTES, "null_not_nullable"]
    for name in BODY_KINDS:
        assert describe(BodyOutcome(name, size=3))
    assert error_text(BodyOutcome("decoded")) is None and error_text(BodyOutcome("no_decoder")) is None


def test_malformed_carries_the_field_and_offset_as_data():
    from kwire.native.exchange_build import decode_body

    body = bytes.fromhex("00000003" "00000001" "00")  # Metadata v0 request: Topics claims 3, then 1 byte
    decoded, outcome = decode_body(3, "request", 0, body, 0)
    assert decoded is None and outcome.kind == MALFORMED
    assert outcome.field == "Topics" and outcome.offset is not None and outcome.reason
    assert outcome.field in describe(outcome) and f"byte {outcome.offset}" in describe(outcome)
    made = malformed(DecodeError("need 2 bytes, 0 left", 7, "Name"))
    assert (made.field, made.offset, made.reason) == ("Name", 7, "need 2 bytes, 0 left")


def test_a_body_the_packet_path_marks_cut_maps_to_its_kind():
    """What issue 26's packet path sets (PendingRequest.lost / RawExchange.response_lost =
    CUT_BY_SNAPLEN) becomes the body's outcome: not decoded, not malformed, blaming nobody on the wire."""
    from kwire.analytics.observe import observations
    from kwire.native.exchange_build import build_from_parts, exchange_parts
    from kwire.native.exchange_build import is_malformed
    from kwire.outcomes import CUT_BY_SNAPLEN

    raw = next(iter(_raw_exchanges(ROOT / "captures" / "produce-consume-none.pcap")))
    raw.response_lost = CUT_BY_SNAPLEN
    raw.request.lost = CUT_BY_SNAPLEN
    ex = build_from_parts(exchange_parts(raw))
    assert ex.request_outcome.kind == ex.response_outcome.kind == CUT_BY_SNAPLEN
    assert ex.request is None and ex.response is None and not is_malformed(ex)
    assert ex.response_error == describe(BodyOutcome(CUT_BY_SNAPLEN))
    assert not [o for o in observations(ex) if o[0] == "pv"]


def _raw_exchanges(capture: Path):
    """The capture's RawExchanges (the pipeline's `offload` takes every one before decoding)."""
    taken = []
    list(analyze_files([str(capture)], offload=lambda raw: taken.append(raw) or True))
    return [raw for raw in taken if raw.request is not None and raw.response_body is not None]


def test_a_body_past_the_entries_bound_is_not_kept_not_malformed():
    # kwire.codec.compiler stops a body that would make more than KWIRE_MAX_BODY_ENTRIES entries with
    # BodyTooLarge: a bound of kwire's, so the body is `not_kept` (nothing blamed), its reason naming the bound
    from kwire.errors import BodyTooLarge
    from kwire.outcomes import KWIRE, blames
    outcome = malformed(BodyTooLarge("more than 250,000 entries in one body (KWIRE_MAX_BODY_ENTRIES)",
                                     19, "Results[].Configs", "DescribeConfigsResponse v4"))
    assert outcome.kind == NOT_KEPT and blames(outcome.kind) == KWIRE
    assert "KWIRE_MAX_BODY_ENTRIES" in error_text(outcome) and error_text(outcome).startswith("not kept: ")


def test_a_body_past_the_entries_bound_is_kept_in_part(monkeypatch):
    """decode_body reads a body past KWIRE_MAX_BODY_ENTRIES in part (kwire.codec.partial): the elements the
    bound holds kept, the rest counted in the body and in the outcome, which blames nobody on the wire."""
    from kwire.codec import compiler
    from kwire.native.exchange_build import decode_body
    from kwire.outcomes import KEPT_IN_PART, KWIRE, blames
    from tests.render.hostile import encode_body

    monkeypatch.setattr(compiler, "MAX_BODY_ENTRIES", 10)
    body = encode_body(20, "request", 6, {"Topics": [{"Name": f"t{i}"} for i in range(25)], "TimeoutMs": 7})
    decoded, outcome = decode_body(20, "request", 6, body, 0)
    assert outcome.kind == KEPT_IN_PART and blames(outcome.kind) == KWIRE and outcome.size == 15
    assert [t["Name"] for t in decoded["Topics"]] == [f"t{i}" for i in range(10)] and decoded["TimeoutMs"] == 7
    assert decoded["_not_kept"] == {"Topics": 15}
    assert error_text(outcome).startswith("kept in part: more than 10 entries") and "15 array elements" in \
        error_text(outcome)
