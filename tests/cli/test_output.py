"""kwire.cli.output and the commands' writing: output is written whole or the run fails with one line
(exit 1); never a silent cut, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kwire.cli.output as output

CAPTURE = Path(__file__).resolve().parents[2] / "captures" / "produce-consume-zstd.pcap"


def test_short_writes_are_completed(monkeypatch, tmp_path):
    """os.write may move fewer bytes than asked (and at most 2 GiB - 4 KiB at once on Linux)."""
    calls = []
    real = os.write

    def stingy(fd, data):
        calls.append(len(data))
        return real(fd, bytes(data)[:7])

    monkeypatch.setattr(output, "MAX_WRITE", 100)
    monkeypatch.setattr(output.os, "write", stingy)
    path = tmp_path / "out"
    data = bytes(range(256)) * 4
    with open(path, "wb") as f:
        output.write_all(f.fileno(), data)
    assert path.read_bytes() == data
    assert max(calls) <= 100 and len(calls) >= len(data) // 7


def test_a_write_that_makes_no_progress_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setattr(output.os, "write", lambda fd, data: 0)
    with open(tmp_path / "out", "wb") as f, pytest.raises(output.OutputError, match="cannot write output"):
        output.write_all(f.fileno(), b"x" * 10)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", [["inspect", "--json"], ["inspect"], ["inspect", "-V"], ["stats", "--json"],
                                     ["stats"]])
def test_a_full_disk_is_one_line_and_exit_1(command):
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "kwire", *command, str(CAPTURE)], stdout=full,
                             stderr=subprocess.PIPE, text=True, timeout=120)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("kwire: error:")]
    assert errors == ["kwire: error: cannot write output: No space left on device"]


def test_a_closed_pipe_ends_quietly():
    with subprocess.Popen([sys.executable, "-m", "kwire", "inspect", "--json", str(CAPTURE)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        proc.stdout.readline()
        proc.stdout.close()
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"Traceback" not in err
