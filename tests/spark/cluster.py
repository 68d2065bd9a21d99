"""A real Spark standalone cluster for the tests: one master and two single-core workers on 127.0.0.1.

Started from the pyspark installation (its bin/spark-class: a pip-installed pyspark has no
sbin/start-master.sh), each daemon a child process of the test run, stopped by its PID (and the
executor processes a worker started, found by their parent PID). Executors run Python from a venv
with nothing installed (`executor_python`): kwire and its dependencies reach them only as `kwire spark`
ships them (kwire.spark.ship). Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).parent
WAIT_S = 90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def executor_python(root: Path) -> str:
    """A venv of this interpreter's Python with nothing installed: no kwire and none of its dependencies
    (pyarrow, pandas, zstandard, ...), so the executors run only what `kwire spark` ships them."""
    venv = root / "executor-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    return str(python)


def clean_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_")) and k != "PYTHONPATH"}
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")
    env.update(extra)
    return env


class Cluster:
    """`pin`: each worker, and the executors and Python workers it starts, confined to one CPU of its
    own (worker i to CPU i, as a machine of one core would have it); otherwise Spark's `--cores 1` is
    only a task slot, and one executor's JVM and Python worker run on two CPUs at once."""

    def __init__(self, root: Path, workers: int = 2, pin: bool = False):
        if pin and workers > len(os.sched_getaffinity(0)):
            raise ValueError(f"cannot pin {workers} workers to a CPU each on {len(os.sched_getaffinity(0))} CPUs")
        self.pin = pin
        self.root = root
        self.python = executor_python(root)
        self.port, self.ui = free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.master: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen | None] = [None] * workers
        self.logs = root / "logs"
        self.logs.mkdir(exist_ok=True)

    def _daemon(self, name: str, args: list[str], cpu: int | None = None) -> subprocess.Popen:
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - kept open by the child
        env = clean_env(SPARK_WORKER_DIR=str(self.root / "work"), SPARK_LOG_DIR=str(self.logs))
        # set before exec: every thread and child of the daemon inherits it
        pin = None if cpu is None else (lambda: os.sched_setaffinity(0, {cpu}))
        return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], stdout=log, stderr=log, env=env,
                                cwd=self.root, start_new_session=True, preexec_fn=pin)

    def start(self) -> None:
        self.master = self._daemon("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                              "--port", str(self.port), "--webui-port", str(self.ui)])
        self.start_workers()

    def start_workers(self) -> None:
        for i, worker in enumerate(self.workers):
            if worker is None or worker.poll() is not None:
                self.workers[i] = self._daemon(f"worker-{i}", [
                    "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1", "--memory", "2g",
                    "--webui-port", str(free_port()), "--work-dir", str(self.root / "work"), self.url],
                    cpu=sorted(os.sched_getaffinity(0))[i] if self.pin else None)
        count = len(self.workers)
        self.wait_for(lambda state: state.get("aliveworkers", 0) >= count, f"{count} alive workers")

    def state(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as r:
            return json.load(r)

    def wait_for(self, ready, what: str, timeout: float = WAIT_S) -> dict:
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                state = self.state()
                if ready(state):
                    return state
                last = state
            except OSError:
                pass
            time.sleep(0.5)
        raise TimeoutError(f"cluster: no {what} within {timeout} s (last state {last}); logs in {self.logs}")

    def executors_of(self, worker: subprocess.Popen) -> list[int]:
        """PIDs of the executor processes a worker started (children of its JVM)."""
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == worker.pid:
                    pids.append(int(entry.name))
        return pids

    def kill_worker(self, i: int) -> None:
        """As a machine that goes away: the worker and its executors, at once. The worker is stopped first, so
        that it cannot start an executor between the listing of its executors and its own end (an executor
        started then outlived it once, and finished the job a test had meant to lose)."""
        worker = self.workers[i]
        if worker is None:
            return
        try:
            os.kill(worker.pid, signal.SIGSTOP)
        except ProcessLookupError:
            pass
        for pid in self.executors_of(worker):
            _kill(pid)
        _kill(worker.pid)
        worker.wait(timeout=30)
        self.workers[i] = None

    def stop(self) -> None:
        for i in range(len(self.workers)):
            self.kill_worker(i)
        if self.master is not None:
            _kill(self.master.pid)
            self.master.wait(timeout=30)
            self.master = None


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
