"""`kwire spark` on a real standalone cluster (tests/spark/cluster.py): a master and two single-core
workers started here from the pyspark installation, executors on a Python with nothing installed, so kwire
and its dependencies reach them only as `kwire spark` ships them (kwire.spark.ship: one archive, the
compiled core included).

The executors run kwire as the driver does (the same modules compiled); the document equals `kwire stats` on
the whole capture, and the command says what it shipped; no zip is left behind; a
worker killed mid-job changes nothing; with every worker gone the command ends within a bounded
time with one line `kwire: error: ...`, never a traceback."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.spark.cluster import Cluster, clean_env
from tests.spark.rotate import interleaved_copies, rotate

ROOT = Path(__file__).parents[2]
CAPTURES = ROOT / "captures"
RUN_TIMEOUT = 600


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def kwire(*args, cluster=None, tmp: Path, wait: bool = True, **kw):
    """`python -m kwire ARGS` with its own TMPDIR; executors use the cluster's Python."""
    tmp.mkdir(exist_ok=True)
    env = clean_env(TMPDIR=str(tmp))
    env.pop("SPARK_NO_DAEMONIZE")
    if cluster is not None:
        env["PYSPARK_PYTHON"] = cluster.python
    argv = [sys.executable, "-m", "kwire", *map(str, args)]
    if not wait:
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp, text=True)
    return subprocess.run(argv, capture_output=True, env=env, cwd=tmp, text=True, timeout=RUN_TIMEOUT, **kw)


@pytest.mark.parametrize("module", ["kwire", "pyarrow", "pandas", "zstandard", "lz4", "cramjam", "crc32c",
                                    "cryptography", "rich"])
def test_executors_have_nothing_installed(cluster, module):
    no = subprocess.run([cluster.python, "-c", f"import {module}"], capture_output=True, text=True, cwd="/")
    assert no.returncode != 0 and f"No module named '{module}'" in no.stderr


def test_executors_run_what_the_driver_runs(cluster, tmp_path):
    """A task on an executor reports its Python and kwire's compiled modules: the driver's own."""
    from kwire.spark.ship import executor_report

    code = ("from kwire.spark.session import get_session; from kwire.spark.ship import executor_report; "
            f"s = get_session({cluster.url!r}); print(s.sparkContext.parallelize([0], 1).map(executor_report).first())")
    tmp_path.mkdir(exist_ok=True)
    env = clean_env(TMPDIR=str(tmp_path), PYSPARK_PYTHON=cluster.python)
    env.pop("SPARK_NO_DAEMONIZE")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=RUN_TIMEOUT)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == executor_report()
    assert "kwire: shipping kwire and " in run.stderr


def test_cluster_document_equals_stats(cluster, tmp_path):
    whole = CAPTURES / "multi-broker-3.pcap"
    parts = rotate(whole, tmp_path / "parts", 13, gzip_every=4)
    expected = kwire("stats", "--json", whole, tmp=tmp_path / "t1")
    assert expected.returncode == 0, expected.stderr
    run = kwire("spark", "--master", cluster.url, "--json", *parts, cluster=cluster, tmp=tmp_path / "t2")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout == expected.stdout
    assert [line for line in run.stderr.splitlines() if not line.startswith("kwire: ")] == []
    assert run.stderr.startswith("kwire: shipping kwire and ") and " MiB, for cp3" in run.stderr
    assert not list((tmp_path / "t2").glob("kwire-*/kwire.zip")), "the zip kwire ships must not stay behind"


def _wait_for_executors(cluster, count: int, proc) -> None:
    def ready(state):
        apps = state.get("activeapps") or []
        return apps and sum(app.get("cores", 0) for app in apps) >= count
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        try:
            if ready(cluster.state()):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError("the application got no executors")


def test_worker_killed_mid_job(cluster, tmp_path):
    cluster.start_workers()
    whole = interleaved_copies(CAPTURES / "bulk-fetch.pcap", tmp_path / "copies.pcap", 24)
    parts = rotate(whole, tmp_path / "parts", 2000)
    expected = kwire("stats", "--json", whole, tmp=tmp_path / "t1")
    proc = kwire("spark", "--master", cluster.url, "--json", "--partitions", "6", *parts, cluster=cluster,
                 tmp=tmp_path / "t2", wait=False)
    try:
        _wait_for_executors(cluster, 2, proc)
        time.sleep(3)  # into the job (a job of this size takes several times longer on two cores)
        cluster.kill_worker(1)
        out, err = proc.communicate(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert out == expected.stdout
    cluster.start_workers()


def test_every_worker_lost_is_one_line_in_bounded_time(cluster, tmp_path):
    cluster.start_workers()
    whole = interleaved_copies(CAPTURES / "bulk-fetch.pcap", tmp_path / "copies.pcap", 24)
    parts = rotate(whole, tmp_path / "parts", 2000)
    proc = kwire("spark", "--master", cluster.url, "--json", "--executor-timeout", "10", *parts, cluster=cluster,
                 tmp=tmp_path / "t2", wait=False)
    try:
        _wait_for_executors(cluster, 2, proc)
        # At once: the job cannot finish before its executors go (with a pause here, a fast build of kwire
        # sometimes finished it first, and the test saw a job that succeeded).
        cluster.kill_worker(0)
        cluster.kill_worker(1)
        out, err = proc.communicate(timeout=240)  # bounded: the command must end by itself well before
    finally:
        if proc.poll() is None:
            proc.kill()
    cluster.start_workers()
    assert proc.returncode == 1
    assert out == ""
    shipping, *lines = err.strip().splitlines()  # what was shipped, then the error alone
    assert shipping.startswith("kwire: shipping kwire and "), err[-3000:]
    assert len(lines) == 1 and lines[0].startswith("kwire: error: no Spark executor left for 10 s"), err[-3000:]
