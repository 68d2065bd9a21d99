"""Issue 49, answers that changed from run to run: every hostile input of the campaigns (tests/hostile's
generators and tests/hostile3's) gives `kwire stats` the same document with any number of workers, batches of a
few exchanges and workers' states handed over after every batch, as one process gives it; and `kwire live`'s
final figures say what `kwire stats` says of the same capture."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.counts import count
from tests.hostile import generators
from tests.hostile3 import changes, control, midstream_tls, nulls, resends, secrets
from tests.test_parallel import same_document_whatever_the_workers

ROOT = Path(__file__).resolve().parents[2]
# (name, how to write it at its smallest): every capture generator of tests/hostile/generators.py and
# tests/hostile3 (faulty.py's directory is committed captures and nulls.py's; scrapes.py makes connections)
HOSTILE = {
    "tls_detector_rescan": generators.tls_detector_rescan,
    "tls_gap_garbage": generators.tls_gap_garbage,
    "assignment_repeats": generators.assignment_repeats,
    "unanswered_joins": generators.unanswered_joins,
    "excerpt_ranges": generators.excerpt_ranges,
    "many_names": generators.many_names,
    "many_client_ids": lambda path: generators.many_client_ids(path, 2_000),
    "big_metadata": generators.big_metadata,
    "secrets_block": generators.secrets_block,
    "short_key_lines": generators.short_key_lines,
    "client_hellos": generators.client_hellos,
    "far_future": generators.far_future,
    "midstream_fake_tls": generators.midstream_fake_tls,
    "big_first_request": generators.big_first_request,
    "resends": resends.resends,
    "control": control.write_capture,
    "midstream_tls": midstream_tls.write_capture,
    "midstream_tls_windows": lambda path: midstream_tls.tls_windows(path, 40),
    "nulls": nulls.write_capture,
    "secrets": lambda path: path.write_bytes(secrets.secret_capture().pcap),
    "padded_acls": changes.padded_acls,
    "huge_acls": changes.huge_acls,
    "full_log": lambda path: changes.full_log(path, 60, 30),
    "leader_changes": changes.leader_changes,
    "many_brokers": changes.many_brokers,
    "unreadable": changes.unreadable,
}


def written(tmp_path: Path, name: str) -> Path:
    path = tmp_path / (name + (".pcap.gz" if name in ("many_client_ids", "many_brokers") else ".pcap"))
    HOSTILE[name](path)
    return path


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_every_hostile_input_gives_one_document_whatever_the_workers(name, tmp_path, monkeypatch):
    same_document_whatever_the_workers(written(tmp_path, name), monkeypatch)


def kwire(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kwire", *args], cwd=ROOT, capture_output=True, timeout=600)


def _closing_line(stderr: bytes) -> str:
    return next(line for line in stderr.decode().splitlines() if " packets, " in line)


@pytest.mark.parametrize("name", ["resends", "unanswered_joins", "midstream_fake_tls", "tls_gap_garbage"])
def test_live_final_figures_say_what_stats_says(name, tmp_path):
    """`kwire live --replay FILE --speed 0 --json`: its exchanges (by status), the exchanges it counted,
    Kafka connections, gaps and packets are those of `kwire stats` (its document and closing line)."""
    path = written(tmp_path, name)
    keys = ["--keylog", str(path) + ".keys"] if Path(str(path) + ".keys").exists() else []
    stats = kwire("stats", "--json", *keys, str(path))
    live = kwire("live", "--replay", str(path), "--speed", "0", "--json", *keys)
    assert stats.returncode == live.returncode == 0, (stats.stderr, live.stderr)
    totals, figures = json.loads(stats.stdout)["totals"], json.loads(live.stdout)
    assert figures["exchanges"] == {"paired": totals["paired"], "no_response": totals["no_response"],
                                    "no_request": totals["no_request"], "total": totals["exchanges"]}
    assert figures["counted"] == totals["exchanges"]
    line = _closing_line(stats.stderr)
    assert line.startswith(f"kwire: {count(figures['packets'], 'packet')}, "
                           f"{count(figures['kafka_connections'], 'Kafka connection')}")
    assert f", {count(figures['gaps'], 'gap')}" in line
