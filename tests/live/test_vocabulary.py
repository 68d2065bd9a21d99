"""The `kwire live --json` document and the findings log hold exactly what kwire.vocabulary declares of them
(LIVE_DOCUMENT, FINDINGS_LOG and the stats document's `findings[]`): replays of committed captures, run as a user
runs them (`kwire live --replay FILE --speed 0 --json`, `... --no-screen --exit-when-done --findings-log FILE`), are
walked against the declaration: every key declared, with its type and nullability; every declared key shown by
some replay unless it is declared rare, with why; deprecated keys holding their replacement in the old unit. The
keys a replay cannot show (a live capture's lost connections, its -w files) are checked on the document
`final_document` makes of what a live capture reports."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.live.report import final_document
from kwire.vocabulary import FINDINGS_LOG, findings_log_keys, live_keys
from tests.vocabulary_walk import (beside, deprecated_checked, misplaced, shown, trie, type_problems,
                                   unit_problems)

ROOT = Path(__file__).resolve().parents[2]
# plain traffic of several brokers, a share group, problem recordings (findings, malformed answers, unanswered
# requests), TLS decrypted with its key log
REPLAYED = ["captures/multi-broker-3.pcap", "captures/share-consumer.pcap", "captures/problems/proxy-faults.pcap.gz",
            "captures/problems/unanswered.pcap.gz", "captures/tls/py-tls13-aes128gcm.pcap"]
# problem recordings whose findings start and end (findings of most kinds, evidence, deprecated keys in seconds)
LOGGED = ["captures/problems/proxy-faults.pcap.gz", "captures/problems/member-expired.pcap.gz",
          "captures/problems/error-burst.pcap.gz", "captures/problems/txn-stall.pcap.gz"]
LIVE, LOG = live_keys(), findings_log_keys()
LIVE_TRIE, LOG_TRIE = trie(LIVE), trie(LOG)


def _kwire(*args: str) -> str:
    run = subprocess.run([sys.executable, "-m", "kwire", *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, (args, run.stderr[-2000:])
    return run.stdout


def _keylog(capture: str) -> list[str]:
    keys = ROOT / f"{capture}.keys"
    return ["--keylog", str(keys)] if keys.exists() else []


@pytest.fixture(scope="module")
def documents() -> dict[str, dict]:
    """capture -> the document `kwire live --replay CAPTURE --json` printed."""
    return {capture: json.loads(_kwire("live", "--replay", capture, "--speed", "0", "--json", *_keylog(capture)))
            for capture in REPLAYED}


@pytest.fixture(scope="module")
def events(tmp_path_factory) -> dict[str, list[dict]]:
    """capture -> the findings log's events of a replay of it, as the file holds them."""
    out = {}
    for capture in LOGGED:
        log = tmp_path_factory.mktemp("log") / "findings.jsonl"
        _kwire("live", "--replay", capture, "--speed", "0", "--no-screen", "--exit-when-done", "--findings-log",
               str(log))
        out[capture] = [json.loads(line) for line in log.read_text().splitlines()]
        assert out[capture], f"{capture}: no finding logged"
    return out


def _live_capture_document() -> dict:
    """What `final_document` makes of a live capture's report: a connection that lost bytes, -w files, the
    kernel's drops and the figures' lag (values no replay has)."""
    health = {"packets": 1104, "bytes": 200_000, "kernel_drops": 3, "queue_drops": 0, "figures_lag_max_s": 0.0125,
              "truncated": 2}
    report = {"gaps": 1, "gap_bytes": 1448, "kafka_connections": 4,
              "lost": [("10.0.0.7:51234 → 10.0.0.9:9092", 1, 1448)],
              "exchanges": {"total": 371, "paired": 370, "no_response": 1, "no_request": 0}}
    return final_document(where="eth0", expression="tcp port 9092", seconds=20.0004, health=health, report=report,
                          counted=371, files=["kept.pcap", "kept.pcap1"], error="the capture process ended")


def test_every_key_of_the_live_documents_is_declared_with_its_type(documents):
    problems = set()
    for name, doc in {**documents, "a live capture": _live_capture_document()}.items():
        problems |= type_problems(name, doc, LIVE, LIVE_TRIE)
    assert not problems, "\n".join(sorted(problems))


def _stale_or_unseen(keys, seen: set[str]) -> tuple[list[str], list[str]]:
    unseen = [path for path, key in keys.items() if path not in seen and not key.rare]
    stale = [path for path, key in keys.items() if key.rare and path in seen]
    return unseen, stale


def test_every_declared_key_of_the_live_document_shows_in_a_replay_unless_rare(documents):
    unseen, stale = _stale_or_unseen(LIVE, shown(documents.values(), LIVE_TRIE))
    assert not unseen, f"declared, but no replay's document has them (declare them rare, with why): {unseen}"
    assert not stale, f"declared rare, yet a replay shows them: {stale}"
    # the rare ones are what a live capture gives
    rare = {path for path, key in LIVE.items() if key.rare}
    assert rare and rare <= shown([_live_capture_document()], LIVE_TRIE)


def test_the_live_documents_deprecated_keys_hold_their_replacement_in_the_old_unit(documents):
    checked = set()
    for name, doc in {**documents, "a live capture": _live_capture_document()}.items():
        checked |= deprecated_checked(name, doc, LIVE, LIVE_TRIE)
    assert checked == {path for path in LIVE if beside(path, LIVE)} == {"seconds", "figures_lag_max_s"}


def test_every_key_of_the_findings_log_is_declared_with_its_type(events):
    problems = set()
    for name, lines in events.items():
        for event in lines:
            problems |= type_problems(name, event, LOG, LOG_TRIE)
    assert not problems, "\n".join(sorted(problems)[:50])


def test_every_key_the_log_puts_in_front_shows_unless_rare(events):
    """The log's own keys (a finding's are the stats document's, seen on every capture by tests/test_vocabulary.py),
    in the order declared, in front of the finding."""
    own = {key.path: key for key in FINDINGS_LOG}
    seen = shown([e for lines in events.values() for e in lines], LOG_TRIE) & set(own)
    unseen, stale = _stale_or_unseen(own, seen)
    assert not unseen and not stale, (unseen, stale)
    order = [key.path for key in FINDINGS_LOG]
    for lines in events.values():
        for event in lines:
            front = [k for k in event if k in own]
            assert front == [k for k in order if k in event] == list(event)[:len(front)], front


def test_the_findings_logs_deprecated_keys_hold_their_replacement_in_the_old_unit(events):
    checked = set()
    for name, lines in events.items():
        for event in lines:
            checked |= deprecated_checked(name, event, LOG, LOG_TRIE)
    assert {"at", "start", "end", "evidence[].ts"} <= checked
    assert all(isinstance(e["at_ts_ns"], int) for lines in events.values() for e in lines)


@pytest.mark.parametrize("keys", [LIVE, LOG], ids=["live document", "findings log"])
def test_declared_units_and_deprecated_keys_are_in_their_place(keys):
    assert unit_problems(keys) == []
    assert misplaced(keys) == []

