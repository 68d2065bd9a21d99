"""kwire.spark.probe and `kwire spark` over a directory where kwire fails on one capture (issue 49): the job runs
again without it, names it with its one-line error (exit status 1), and prints the document `kwire stats` prints
over the others. tests/hostile3/faulty.py makes the directory and the fault.

The fault must be met by the executors' Python processes too, which a test's monkeypatch does not reach: the
end-to-end test runs `python -m kwire spark` in a subprocess whose PYTHONPATH starts with a folder holding a
sitecustomize.py that injects it (every Python process Spark starts for the job reads it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.analytics import observe_groups
from kwire.spark.probe import file_fault, run_alone
from kwire.spark.results import DecodeOptions
from tests.hostile3.faulty import FAULT_GROUP, FAULT_MESSAGE, inject_fault, write_dir
from tests.hostile3.outputs import command

pytest.importorskip("pyspark")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "captures", write_dir(tmp_path / "captures")


def _stats(paths) -> dict:
    out, _ = command("stats", "--json", "-j", "0", *map(str, paths), exit_code=1)
    return json.loads(out)


def test_the_probe_finds_the_faulty_file_alone(folder, monkeypatch):
    _, files = folder
    options = DecodeOptions()
    assert [file_fault(str(p), options) for p in files["good"] + files["fault"] + files["damaged"]] == [None] * 7
    monkeypatch.setitem(observe_groups._READERS, "Heartbeat", observe_groups._READERS["Heartbeat"])
    inject_fault()
    line = file_fault(str(files["fault"][0]), options)
    assert line.startswith(f"RuntimeError: {FAULT_MESSAGE} {FAULT_GROUP} (kwire/analytics/observe_groups.py:")
    assert file_fault(str(files["good"][0]), options) is None


def test_a_file_alone_through_the_jobs_steps_is_its_stats_document(folder):
    _, files = folder
    path = files["good"][0]
    out, _ = command("stats", "--json", "-j", "0", str(path))
    assert run_alone(str(path), DecodeOptions()).aggregator.document() == json.loads(out)


def _spark(folder: Path, tmp_path: Path, fault: bool) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="160")
    if fault:
        site = tmp_path / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text("from tests.hostile3.faulty import inject_fault\ninject_fault()\n")
        env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    return subprocess.run([sys.executable, "-m", "kwire", "spark", "--master", "local[2]", "--json", "--partitions",
                           "2", str(folder)], env=env, capture_output=True, text=True, timeout=600)


def test_spark_leaves_the_faulty_file_out_and_keeps_the_others(folder, tmp_path):
    path, files = folder
    run = _spark(path, tmp_path, fault=True)
    assert run.returncode == 1, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if "left out" in line]
    assert len(lines) == 1 and lines[0].startswith(
        f"kwire: error: {files['fault'][0]}: left out: kwire failed on it (RuntimeError: {FAULT_MESSAGE} {FAULT_GROUP} "
        "(kwire/analytics/observe_groups.py:")
    assert json.loads(run.stdout) == _stats(files["good"] + files["damaged"])


def test_spark_counts_the_once_failing_nulls_capture(folder, tmp_path):
    """The issue's job: three good captures and the one that failed it (SyncGroup null member ids)."""
    path, files = folder
    run = _spark(path, tmp_path, fault=False)
    assert run.returncode == 1 and "left out" not in run.stderr, run.stderr[-2000:]  # (1: the damaged files)
    assert json.loads(run.stdout) == _stats(files["good"] + files["fault"] + files["damaged"])
