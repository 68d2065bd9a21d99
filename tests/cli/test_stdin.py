"""`kwire inspect -`: a capture read from standard input, shown as it comes (each exchange as soon as
it completes, JSON included), as `tcpdump -U -w - | kwire inspect -` needs."""

from __future__ import annotations

import select
import subprocess
import sys
from pathlib import Path

import pytest

from kwire.capture.files import read_captures
from kwire.pipeline import analyze_files

CAPTURE = Path(__file__).resolve().parents[2] / "captures" / "produce-consume-zstd.pcap"


def _first_exchange_end() -> int:
    """Bytes of the capture file up to the end of the record that completes its first exchange."""
    first = next(iter(analyze_files([str(CAPTURE)])))
    done = max(first.request_ts_ns or 0, first.response_ts_ns or 0)
    data = CAPTURE.read_bytes()
    pos = 24
    for packet in read_captures([CAPTURE]):
        pos += 16 + len(packet.data)
        if packet.ts_ns >= done:
            return pos
    raise AssertionError("no such record")


@pytest.mark.parametrize("args", [["--json"], []], ids=["json", "lines"])
def test_exchanges_come_out_before_the_input_ends(args):
    data = CAPTURE.read_bytes()
    cut = _first_exchange_end()
    with subprocess.Popen([sys.executable, "-m", "kwire", "inspect", "-", *args], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        proc.stdin.write(data[:cut])
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)  # the input is still open
        assert ready, "no output while the capture was still being written"
        first = proc.stdout.readline()
        proc.stdin.write(data[cut:])
        proc.stdin.close()
        rest = proc.stdout.read()
        err = proc.stderr.read()
        proc.wait(timeout=60)
    assert proc.returncode == 0, err
    assert b"ApiVersions" in first
    whole = subprocess.run([sys.executable, "-m", "kwire", "inspect", str(CAPTURE), *args], capture_output=True,
                           timeout=120)
    assert first + rest == whole.stdout  # the same output as from the file


def test_several_files_with_a_bad_one_keep_the_good_ones(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a capture\n")
    empty = tmp_path / "empty.pcap"
    empty.write_bytes(b"")
    run = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", str(CAPTURE), str(notes), str(empty)],
                         capture_output=True, text=True, timeout=120)
    alone = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", str(CAPTURE)], capture_output=True,
                           text=True, timeout=120)
    assert run.returncode == 1 and run.stdout == alone.stdout and alone.stdout
    errors = [line for line in run.stderr.splitlines() if line.startswith("kwire: error:")]
    assert len(errors) == 2 and "notes.txt" in errors[0] + errors[1] and "empty.pcap: empty file" in "".join(errors)
    stats = subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", str(CAPTURE), str(notes)],
                           capture_output=True, text=True, timeout=120)
    assert stats.returncode == 1 and '"exchanges"' in stats.stdout
