"""Issue 49, answers that changed from run to run: producers that are not idempotent resending thousands of
records after failed sends (tests/hostile3/resends.py), past the cap of 16,384 records of failed sends. `kwire
stats` gave four different documents over three default runs and one `-j 0` run: which Produce batches a worker
read for resends depended on the batches the others had (dealt by arrival, fewest waiting first), and one
process missed resends past 256 failed records of a partition. Each test fails on the code before the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.analytics import Aggregator, resend_state
from kwire.analytics.findings_delivery import find as delivery_findings
from kwire.pipeline import analyze_files
from tests.hostile3.resends import resends

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> tuple[Path, dict]:
    path = tmp_path_factory.mktemp("resends") / "resends.pcap"
    return path, resends(path)


def stats_json(path: Path, *args: str, **env: str) -> bytes:
    run = subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", *args, str(path)], cwd=ROOT,
                         capture_output=True, timeout=600, env={**os.environ, **env})
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_stats_gives_one_document_whatever_the_workers_batches_and_hash_seed(capture):
    """One process, 1, 2 and 3 workers (as they come, with small batches, with states handed over after every
    few batches), each run with another PYTHONHASHSEED: the same bytes."""
    path, truth = capture
    alone = stats_json(path, "-j", "0", PYTHONHASHSEED="1")
    assert stats_json(path, "-j", "2", PYTHONHASHSEED="2") == alone
    assert stats_json(path, "-j", "1", KWIRE_TEST_BATCH="16", PYTHONHASHSEED="3") == alone
    assert stats_json(path, "-j", "3", KWIRE_TEST_BATCH="40", KWIRE_TEST_HOLD_BYTES="65536",
                      PYTHONHASHSEED="4") == alone
    document = json.loads(alone)
    retries = [f for f in document["findings"] if f["kind"] == "produce_retry" and f["records"]]
    assert retries and all("of a sample of 16384 records of failed sends" in f["summary"] for f in retries)
    assert truth["resent"] > 16384 and document["findings_total"] > 1000


def test_every_record_sent_again_after_a_failed_send_is_counted(capture, monkeypatch):
    """With room for every record of a failed send, produce_retry counts each one the producer sent again (the
    generator's own count): a partition's failed sends are held as CreateTime ranges, none dropped (the first
    256 records of a partition's failed sends were held, and resends of the later ones went unread)."""
    path, truth = capture
    monkeypatch.setattr(resend_state, "MAX_RECORDS", 1 << 20)
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    found = delivery_findings(agg.analysis, dict(agg.names.items()), agg.first_ns, agg.last_ns)
    assert sum(f["records"] for f in found if f["kind"] == "produce_retry") == truth["resent"]
