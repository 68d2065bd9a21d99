"""Test-only: one campaign case run as `python -m kwire ...` in a process of its own, under limits.

`run_case(case, folder)` writes the case's capture into `folder`, runs kwire on it with
resource.setrlimit (address space MEMORY_LIMIT, CPU time CPU_LIMIT, per process: its worker
processes inherit both) and a wall-clock guard against hangs (WALL_LIMIT, then the process group is
killed), and returns a Result: exit status, the problems found, wall seconds and peak RSS (of kwire's
main process and its workers, the largest: os.wait4's rusage). stdout goes to a file, checked and
dropped.

Problems (the promise: a result or one-line errors, never a traceback, a crash or a hang):
an exit status other than 0 or 1 (a signal: killed by a limit, a crash), "Traceback" on stderr, an
input file (the capture, its key log) modified,
a stderr line that is not one of kwire's own ("kwire: ..."), exit 1 without a "kwire: error:"
line, an error line at exit 0, and with --json a stdout line that is not one JSON object.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import orjson

from tests.campaign.cases import Case

ROOT = Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 1 << 30  # address space of each process, bytes
CPU_LIMIT = 120  # seconds of CPU time of each process
WALL_LIMIT = 300  # seconds before a run counts as hung (a guard, far above any case's needs)


class Result(NamedTuple):
    case: str
    argv: tuple
    status: int  # exit status, or -signal
    problems: list
    seconds: float
    peak_rss: int  # bytes
    capture_bytes: int


# The child's peak RSS is measured by a small process that starts it: Linux keeps a process's
# maxrss across fork and exec, so kwire forked straight from the test process (hundreds of MB)
# would report at least the test process's size. This one sets the limits, becomes a process group
# of its own (the guard kills it whole), forks kwire and writes "status maxrss_kb" to its argv[3].
_STARTER = """
import os, resource, sys
memory, cpu, report = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.setsid()
resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[4], sys.argv[4:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as f:
    f.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}")
"""


def run_case(case: Case, folder: Path, env: dict | None = None) -> Result:
    folder.mkdir(parents=True, exist_ok=True)
    capture = folder / ("capture" + case.suffix)
    case.write(capture)
    inputs = [p for p in (capture, Path(str(capture) + ".keys")) if p.exists()]
    before = [_digest(p) for p in inputs]
    argv = tuple(arg.replace("{out}", str(folder)) for arg in case.argv)
    out, err, report = folder / "stdout", folder / "stderr", folder / "report"
    report.unlink(missing_ok=True)
    environment = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-c", _STARTER, str(MEMORY_LIMIT), str(CPU_LIMIT), str(report),
           sys.executable, "-m", "kwire", *argv, str(capture)]
    start = time.monotonic()
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, env=environment, cwd=ROOT)
    hung = False
    try:
        proc.wait(WALL_LIMIT)
    except subprocess.TimeoutExpired:
        hung = True
        _kill(proc.pid)
        proc.wait()
    seconds = time.monotonic() - start
    status, peak = (int(x) for x in report.read_text().split()) if report.exists() else (proc.returncode, 0)
    problems = check(argv, status, out.read_bytes(), err.read_bytes().decode("utf-8", "replace"))
    if [_digest(p) for p in inputs] != before:
        problems.append("an input file was modified")
    if hung:
        problems.insert(0, f"still running after {WALL_LIMIT} s: killed")
    result = Result(case.name, argv, status, problems, seconds, peak * 1024, capture.stat().st_size)
    for path in (capture, out, err, report, Path(str(capture) + ".keys"), folder / "cut.pcap", folder / "report.html"):
        path.unlink(missing_ok=True)
    return result


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def check(argv: tuple, status: int, stdout: bytes, stderr: str) -> list[str]:
    problems = []
    if status not in (0, 1):
        name = signal.Signals(-status).name if status < 0 and -status in signal.Signals._value2member_map_ \
            else str(status)
        problems.append(f"exit status {name}")
    if "Traceback" in stderr:
        problems.append("a traceback on stderr: " + stderr[stderr.index("Traceback"):][:300])
    lines = stderr.splitlines()
    foreign = [line for line in lines if not line.startswith("kwire: ")]
    if foreign:
        problems.append(f"{len(foreign)} stderr lines not kwire's own, first: {foreign[0][:200]!r}")
    errors = [line for line in lines if line.startswith("kwire: error: ")]
    if status == 1 and not errors:
        problems.append("exit 1 without a 'kwire: error:' line")
    if status == 0 and errors:
        problems.append(f"exit 0 with an error line: {errors[0][:200]}")
    if "--json" in argv and argv[0] == "inspect":
        for number, line in enumerate(stdout.splitlines()):
            try:
                if type(orjson.loads(line)) is not dict:
                    raise ValueError("not an object")
            except ValueError as e:
                problems.append(f"stdout line {number + 1} is not a JSON object: {e}")
                break
    return problems
