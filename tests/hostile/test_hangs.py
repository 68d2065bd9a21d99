"""Issue 25, hangs and tracebacks: a key log that is a device or a pipe nobody closes, unparseable
times, a capture past the year 9999 in the HTML report, a time past int64 nanoseconds in Spark's map
side. Each ends in one line (or the output), never a hang or a traceback; each fails on the code
before the fix. (The subprocess timeouts are guards against a hang, not timed assertions.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kwire.cli.main import cli
from tests.hostile import generators

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "captures" / "produce-consume-none.pcap"
GUARD = 120  # seconds: far above what any of these needs; past it the run counts as hung


def _kwire(*args, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kwire", *args], capture_output=True, text=True,
                          timeout=GUARD, env=env, **kw)


def test_a_key_log_that_is_a_device_is_refused_not_read_for_ever():
    run = _kwire("inspect", "--keylog", "/dev/zero", str(SMALL))
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "kwire: error: /dev/zero: not a regular file or a pipe" in run.stderr


def test_a_key_log_fifo_nobody_writes_is_not_waited_for(tmp_path):
    fifo = tmp_path / "keys.fifo"
    os.mkfifo(fifo)
    run = _kwire("stats", "--keylog", str(fifo), str(SMALL))
    assert run.returncode == 1 and "nothing read for" in run.stderr and "Traceback" not in run.stderr


def test_a_key_log_from_a_pipe_is_read(tmp_path):
    keys = ROOT / "captures" / "tls" / "py-tls13-aes128gcm.pcap.keys"
    capture = ROOT / "captures" / "tls" / "py-tls13-aes128gcm.pcap"
    run = _kwire("inspect", "--keylog", "/dev/stdin", str(capture), input=keys.read_text())
    assert run.returncode == 0 and "(6 decrypted" in run.stderr, run.stderr


@pytest.mark.parametrize("option, value", [("--since", "@inf"), ("--until", "@-Infinity"), ("--since", "@1e999999"),
                                           ("--since", "@nan"), ("--until", "99999999999999999999s"),
                                           ("--min-latency", "nan"), ("--min-latency", "inf"), ("--group", "")])
def test_unparseable_values_are_usage_errors(option, value):
    result = CliRunner().invoke(cli, ["inspect", option, value, str(SMALL)])
    assert result.exit_code == 2, result.output  # click's usage error, not a traceback (exit 1)
    assert "Invalid value" in result.output


def test_the_html_report_of_a_capture_past_the_year_9999(tmp_path):
    capture = tmp_path / "far.pcapng"
    generators.far_future(capture)
    report = tmp_path / "report.html"
    run = _kwire("stats", "--html", str(report), str(capture))
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    page = report.read_text()
    assert "kwire-group-produce-consume-lz4" in page and "@300000000000" in page


def test_spark_map_side_reads_a_time_past_int64_nanoseconds(tmp_path):
    """`kwire stats` reads it; Spark's map side turned it into rows of 64-bit columns and failed the job."""
    pytest.importorskip("pyarrow")
    from kwire.spark.mapside import read_file
    from kwire.spark.results import DecodeOptions

    capture = tmp_path / "far.pcapng"
    generators.far_future(capture)
    batches = list(read_file(0, str(capture), 2, DecodeOptions()))
    assert sum(batch.num_rows for batch in batches) > 0
