"""`kwire spark`: the CLI over rotated files (directory, glob, .gz) prints exactly `kwire stats --json`;
and the same command runs as a spark-submit application."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kwire.cli.main import cli
from tests.spark.rotate import rotate

pytest.importorskip("pyspark")

ROOT = Path(__file__).parents[2]
WHOLE = ROOT / "captures" / "multi-broker-3.pcap"
if not WHOLE.exists():
    WHOLE = ROOT / "tests" / "analytics" / "data" / "quick.pcap"


def _stats_json() -> str:
    result = CliRunner().invoke(cli, ["stats", "--json", str(WHOLE)], catch_exceptions=False)
    assert result.exit_code == 0
    return result.stdout


def test_cli_directory_glob_and_gz_print_the_stats_document(tmp_path):
    parts = rotate(WHOLE, tmp_path / "rotated", 16, gzip_every=3)
    assert any(p.suffix == ".gz" for p in parts)
    runner = CliRunner()
    by_dir = runner.invoke(cli, ["spark", "--master", "local[2]", "--json", "--partitions", "3",
                                 "--html", str(tmp_path / "r.html"), "--out", str(tmp_path / "out"),
                                 str(tmp_path / "rotated")],
                           catch_exceptions=False)
    assert by_dir.exit_code == 0, by_dir.stderr
    assert by_dir.stdout == _stats_json()  # the very text, not only the same values
    assert "<svg" in (tmp_path / "r.html").read_text()
    exchanges = json.loads(by_dir.stdout)["totals"]["exchanges"]
    wrote = [line for line in by_dir.stderr.splitlines() if "as Parquet to" in line]  # it says what it wrote
    assert len(wrote) == 1 and f"wrote {exchanges:,} exchanges" in wrote[0]
    assert str(tmp_path / "out" / "exchanges") in wrote[0] and any((tmp_path / "out" / "exchanges").iterdir())
    by_glob = runner.invoke(cli, ["spark", "--json", "--no-summary", str(tmp_path / "rotated" / "part-*")],
                            catch_exceptions=False)
    assert by_glob.exit_code == 0 and by_glob.stdout == by_dir.stdout
    assert by_glob.stderr == ""


def test_cli_not_a_capture_as_stats(tmp_path):
    """A file that is not a capture among good ones: `kwire stats` and `kwire spark` both leave it out
    with one line, print the document of the others, and exit 1 (spark finds it before its JVM starts)."""
    parts = rotate(WHOLE, tmp_path, 40)
    bad = tmp_path / "part-99999.pcap"
    bad.write_bytes(b"\x00" * 64)
    args = [*map(str, parts), str(bad)]
    stats = CliRunner().invoke(cli, ["stats", "--json", "--no-summary", *args], catch_exceptions=False)
    spark = CliRunner().invoke(cli, ["spark", "--json", "--no-summary", *args], catch_exceptions=False)
    assert stats.exit_code == spark.exit_code == 1
    assert spark.stdout == stats.stdout and json.loads(spark.stdout)["totals"]["exchanges"] > 0
    assert spark.stderr == stats.stderr and len(spark.stderr.splitlines()) == 1 and "part-99999.pcap" in spark.stderr
    only_bad = CliRunner().invoke(cli, ["spark", "--json", str(bad)], catch_exceptions=False)
    assert only_bad.exit_code == 1 and only_bad.stdout == "" and only_bad.stderr.startswith("kwire: error: ")


def test_cli_tables_and_file_damaged_part_way(tmp_path):
    """A file cut inside its last record: the document of the good packets, the damage reported, exit 1,
    as `kwire stats` does."""
    parts = rotate(WHOLE, tmp_path, 40)
    parts[-1].write_bytes(parts[-1].read_bytes()[:-30])
    result = CliRunner().invoke(cli, ["spark", *map(str, parts)], catch_exceptions=False)
    stats = CliRunner().invoke(cli, ["stats", *map(str, parts)], catch_exceptions=False)
    assert result.exit_code == stats.exit_code == 1
    assert "By api and version" in result.stdout
    assert f"kwire: error: {parts[-1]}" in result.stderr and "Traceback" not in result.stderr


def test_no_files_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["spark", str(tmp_path / "nothing-*.pcap")])
    assert result.exit_code == 2 and "no file matches" in result.stderr


@pytest.mark.skipif(shutil.which("spark-submit") is None, reason="spark-submit not on PATH")
def test_spark_submit(tmp_path):
    parts = rotate(WHOLE, tmp_path, 20)
    script = subprocess.run([sys.executable, "-m", "kwire.spark.submit", "--path"], capture_output=True, text=True,
                            check=True).stdout.strip()
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(["spark-submit", "--master", "local[2]", "--conf", "spark.ui.enabled=false", script,
                           "--json", *map(str, parts)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == json.loads(_stats_json())
    assert done.stdout == _stats_json()


def test_selection_options_as_stats_and_the_jvm_kept_quiet(tmp_path):
    """--topic, --partition, --host, --since run on the executors as in `kwire stats` (Produce names its
    topic on the wire; a topic id is named only by a Metadata answer on its own connection in spark, see
    README); the JVM's own warnings stay in its log unless --verbose."""
    parts = rotate(WHOLE, tmp_path, 30)
    options = ["--json", "--api", "Produce,Metadata", "--topic", "kwire-multi-broker-none-3", "--partition", "1",
               "--host", "127.0.0.0/8", "--since", "1s"]
    stats = CliRunner().invoke(cli, ["stats", *options, str(WHOLE)], catch_exceptions=False)
    # A process of its own: the JVM writes to file descriptor 2, which only a subprocess's pipe sees.
    spark = subprocess.run([sys.executable, "-m", "kwire", "spark", "--master", "local[2]", *options,
                            *map(str, parts)], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"))
    assert spark.returncode == 0, spark.stderr[-2000:]
    assert spark.stdout == stats.stdout
    assert json.loads(spark.stdout)["totals"]["exchanges"] >= 1
    assert spark.stderr.splitlines() == [stats.stderr.splitlines()[-1]]  # kwire's closing line, nothing else


def test_spark_checks_paths_before_starting_the_jvm(tmp_path):
    code = ("import sys; from click.testing import CliRunner; from kwire.cli.main import cli; "
            "r = CliRunner().invoke(cli, ['spark', sys.argv[1]]); "
            "print(r.exit_code, 'pyspark' in sys.modules, 'py4j' in sys.modules); print(r.output, end='')")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "nonexistent.pcap")], capture_output=True,
                          text=True, timeout=60)
    status, output = proc.stdout.split("\n", 1)
    assert status == "1 False False"
    assert output.strip().splitlines() == [f"kwire: error: {tmp_path / 'nonexistent.pcap'}: no such file"]
