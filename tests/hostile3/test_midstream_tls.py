"""Issue 49: plaintext Kafka captured mid-stream whose first bytes chain as TLS records was taken for TLS
(with no key: "not decrypted") and gave none of its exchanges (tests/hostile3/midstream_tls.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
