"""Test-only: a real Prometheus server (Debian's `prometheus`) and kwire's exporter as processes.

`Prometheus(tmp, targets)` writes a scrape config for kwire's exporters at `targets` (host:port,
scraped every second), starts the server on a free port with its own data directory, and stops it
by PID. `query(expr)` asks its HTTP API (/api/v1/query) and returns the vector as
[(labels, value)]. `Kwire(argv)` runs `python -m kwire ...` with PYTHONPATH at this tree and waits
for the lines it writes on stderr.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
needs = [name for name in ("prometheus", "promtool") if shutil.which(name) is None]
MISSING = f"Debian's prometheus package is not installed ({', '.join(needs)} missing)" if needs else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, accept: str | None = None, timeout: float = 10.0) -> tuple[str, str]:
    """(content type, body) of an HTTP GET."""
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.headers.get("Content-Type", ""), response.read().decode()


class Prometheus:
    def __init__(self, tmp: Path, targets: list[str]):
        self.port = free_port()
        config = tmp / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                          "scrape_configs:\n  - job_name: kwire\n    static_configs:\n"
                          f"      - targets: [{', '.join(json.dumps(t) for t in targets)}]\n")
        self.log = open(tmp / "prometheus.log", "w")
        self.process = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:
            try:
                get(f"http://127.0.0.1:{self.port}/-/ready", timeout=2)
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"prometheus did not start: {(tmp / 'prometheus.log').read_text()[-2000:]}")
                time.sleep(0.2)

    def query(self, expr: str) -> list[tuple[dict, float]]:
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        _, body = get(url)
        doc = json.loads(body)
        assert doc["status"] == "success", doc
        return [(item["metric"], float(item["value"][1])) for item in doc["data"]["result"]]

    def wait_for(self, expr: str, ok, timeout: float = 90.0):
        """Poll `expr` until ok(result) holds; the last result."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if ok(result):
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"{expr}: still {result} after {timeout} s")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


class Kwire:
    """`python -m kwire ARGV...`; its stderr lines are collected by a thread."""

    def __init__(self, argv: list[str], stdout=subprocess.DEVNULL):
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        self.process = subprocess.Popen([sys.executable, "-m", "kwire", *argv], cwd=ROOT, env=env, stdout=stdout,
                                        stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_line(self, text: str, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines:
                if text in line:
                    return line
            if self.process.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.1)
        raise AssertionError(f"no line with {text!r} from kwire: {self.lines[-10:]}")

    def stop(self) -> int:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._reader.join(5)
        return self.process.returncode
