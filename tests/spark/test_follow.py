"""`kwire spark --follow DIR` (Spark Structured Streaming): rotated files arriving in two waves, with
connections that go on from the first wave into the second (carried in Spark's state); when no file
has come for --follow-idle seconds the capture has ended: the document equals `kwire stats` on the whole
capture, and the exchanges appended to --out DIR/exchanges are its exchanges."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.spark.rotate import rotate

CAPTURES = Path(__file__).parents[2] / "captures"


def _arrive(paths, folder: Path, start: float) -> None:
    for i, path in enumerate(paths):
        shutil.copy(path, folder / path.name)
        os.utime(folder / path.name, (start + i, start + i))  # completed one after another


def test_follow_a_rotating_directory(spark, tmp_path):
    whole = CAPTURES / "multi-broker-3.pcap"
    parts = rotate(whole, tmp_path / "parts", 13)
    folder, out = tmp_path / "dir", tmp_path / "out"
    folder.mkdir()
    half = len(parts) // 2
    start = time.time() - 1000
    _arrive(parts[:half], folder, start)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    proc = subprocess.Popen([sys.executable, "-m", "kwire", "spark", "--master", "local[2]", "--follow", str(folder),
                             "--out", str(out), "--settle", "1", "--follow-idle", "15", "--json", "--partitions", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 240
        while not (out / "summary.json").exists():  # the first wave's micro-batch is done
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.5)
        first = json.loads((out / "summary.json").read_text())
        _arrive(parts[half:], folder, start + half)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr[-3000:]
    expected = subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", str(whole)], capture_output=True,
                              text=True, check=True).stdout
    assert stdout == expected
    assert (out / "summary.json").read_text() == expected
    assert first["totals"]["exchanges"] < json.loads(expected)["totals"]["exchanges"]
    assert sum("micro-batch" in line for line in stderr.splitlines()) >= 2
    rows = spark.read.parquet(str(out / "exchanges"))
    assert rows.count() == json.loads(expected)["totals"]["exchanges"]
