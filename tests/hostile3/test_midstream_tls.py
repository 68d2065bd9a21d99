"""Issue 49: plaintext Kafka captured mid-stream whose first bytes chain as TLS records was taken for TLS
(with no key: "not decrypted") and gave none of its exchanges (tests/hostile3/midstream_tls.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.capture.files import read_captures
from kwire.native.net_decode import decode_segment
from kwire.pipeline import RunSummary, analyze_files
from kwire.tls import KeyLog
from tests.hostile3 import midstream_tls

ROOT = Path(__file__).resolve().parents[2]


def _paired(path, keys=None, fast=True) -> tuple[list[int], RunSummary]:
    summary = RunSummary()
    exchanges = list(analyze_files([str(path)], summary=summary, keys=keys, fast=fast))
    return sorted(ex.correlation_id for ex in exchanges if ex.status == "paired"), summary


@pytest.mark.parametrize("keylog", [False, True])
@pytest.mark.parametrize("records,side,packed", midstream_tls.VARIANTS)
def test_every_exchange_is_paired(tmp_path, records, side, packed, keylog):
    path = tmp_path / "midtls.pcap"
    count = midstream_tls.write_capture(path, records, side, packed, keylog=keylog)
    keys = None
    if keylog:
        keys = KeyLog()
        keys.add_text((tmp_path / "midtls.pcap.keys").read_bytes())
    paired, summary = _paired(path, keys)
    assert paired == list(range(1, count + 1)), summary.tls.rows
    assert summary.tls.connections == 0


def test_the_plain_path_agrees(tmp_path):
    path = tmp_path / "midtls.pcap"
    count = midstream_tls.write_capture(path, 6, "both", True)
    assert _paired(path, fast=False)[0] == list(range(1, count + 1))


@pytest.mark.parametrize("keylog", [False, True])
def test_the_command_shows_them_all(tmp_path, keylog):
    path = tmp_path / "midtls.pcap"
    midstream_tls.write_capture(path, 6, "client", False, keylog=keylog, scale=2)
    args = ["--keylog", f"{path}.keys"] if keylog else []
    run = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", *args, str(path)], capture_output=True,
                         timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["correlation_id"] for line in lines] == list(range(1, 41)), run.stderr
    assert b"TLS" not in run.stderr


class _CountingPattern:
    """A compiled pattern that counts the bytes its searches cover."""

    def __init__(self, pattern):
        self.pattern = pattern
        self.searched = 0

    def finditer(self, buf, pos: int = 0, endpos: int | None = None):
        end = len(buf) if endpos is None else min(endpos, len(buf))
        self.searched += max(0, end - pos)
        return self.pattern.finditer(buf, pos, end)


@pytest.mark.parametrize("capture", ["midstream", "rescan"])
def test_detection_work_is_linear_in_the_bytes(tmp_path, monkeypatch, capture):
    """Every byte a segment of its own, detection held to the end of its window: the bytes searched
    for record and request headers, and the chains and headers the detector looks at, stay a few
    per byte (the record chains waiting for their next header were all looked at again per segment)."""
    import kwire.native.kafka_resync as resync
    import kwire.tls.detect as detect
    from tests.hostile import generators

    records = _CountingPattern(detect.CANDIDATE_HEADER)
    requests = _CountingPattern(resync._REQUEST_CANDIDATE)
    monkeypatch.setattr(detect, "CANDIDATE_HEADER", records)
    monkeypatch.setattr(resync, "_REQUEST_CANDIDATE", requests)
    made = []

    class Chains(detect.Chains):
        def __init__(self):
            super().__init__()
            made.append(self)

    monkeypatch.setattr(detect, "Chains", Chains)
    path = tmp_path / "work.pcap"
    if capture == "midstream":
        midstream_tls.write_capture(path, 6, "both", False, mss=1)
    else:
        generators.tls_detector_rescan(path)  # headers every 5 bytes, 256 chains waiting at a time
    payload = sum(len(seg.payload) for seg in map(decode_segment, read_captures([str(path)])) if seg is not None)
    list(analyze_files([str(path)]))
    steps = sum(chains.steps for chains in made)
    assert made and records.searched <= payload, (records.searched, payload)
    assert steps <= 3 * payload, (steps, payload)
    # The request search reads again the 18 bytes before the end of what it searched last (a header cut
    # by a segment's end), in the detector and in Kafka's own resync: at 1-byte segments some 60 a byte.
    assert requests.searched <= 80 * payload, (requests.searched, payload)
