"""Done-when of issue 4: a real capture split into rotated files gives, through Spark, the very
document `kwire stats` gives for the whole capture, key for key."""

import shutil
import subprocess
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.pipeline import RunSummary, analyze_files
from kwire.spark.job import run_job
from kwire.spark.results import DecodeOptions
from kwire.query import ExchangeFilter
from kwire.tls import KeyLog
from tests.spark.rotate import rotate

ROOT = Path(__file__).parents[2]
CAPTURES = ROOT / "captures"
QUICK = ROOT / "tests" / "analytics" / "data" / "quick.pcap"


def stats_document(paths, keep=None, keys=None) -> dict:
    """What `kwire stats --json` prints for these files."""
    agg = Aggregator()
    summary = RunSummary()
    for ex in analyze_files([str(p) for p in paths], summary=summary, keys=keys):
        if keep is None or keep(ex):
            agg.add_exchange(ex)
        else:
            agg.learn_names(ex)
    agg.tls.merge(summary.tls)
    return agg.document()


def assert_same(spark_doc: dict, stats_doc: dict) -> None:
    assert sorted(spark_doc) == sorted(stats_doc)
    for key in stats_doc:  # key by key first: a failure names the section that differs
        assert spark_doc[key] == stats_doc[key], key
    assert spark_doc == stats_doc


def _real(name):
    path = CAPTURES / name
    if not path.exists():
        pytest.skip(f"{path} not recorded")
    return path


@pytest.mark.parametrize("name,per_file", [("multi-broker-3.pcap", 13), ("share-consumer.pcap", 11), ("quick", 20)])
def test_rotated_parts_equal_whole_capture(spark, tmp_path, name, per_file):
    whole = QUICK if name == "quick" else _real(name)
    parts = rotate(whole, tmp_path, per_file, gzip_every=4)
    assert len(parts) >= 8
    expected = stats_document([whole])
    result = run_job(spark, [str(p) for p in parts], partitions=3)
    assert_same(result.document, expected)
    assert result.document["totals"]["exchanges"] > 40
    assert len(result.files) == len(parts) and not result.summary.capture_errors
    assert result.summary.capture.packets == sum(1 for _ in __import__("kwire.capture.files", fromlist=["x"])
                                                 .read_captures([str(whole)]))


@pytest.mark.skipif(shutil.which("editcap") is None, reason="editcap not installed")
def test_editcap_split_pcapng_nanosecond_capture(spark, tmp_path):
    whole = _real("produce-consume-zstd-nano.pcapng")
    subprocess.run(["editcap", "-c", "15", str(whole), str(tmp_path / "rot.pcapng")], check=True,
                   capture_output=True)
    parts = sorted(tmp_path.glob("rot*.pcapng"))
    assert len(parts) >= 5
    result = run_job(spark, [str(p) for p in parts], partitions=2)
    assert_same(result.document, stats_document([whole]))


def test_filters_run_on_the_executors(spark, tmp_path):
    whole = _real("multi-broker-3.pcap")
    parts = rotate(whole, tmp_path, 30)
    keep = ExchangeFilter(api_keys=frozenset({1, 0}))  # Fetch, Produce
    result = run_job(spark, [str(p) for p in parts], DecodeOptions(keep=keep), partitions=2)
    assert set(result.document["apis"]) == {"Fetch", "Produce"}
    assert_same(result.document, stats_document([whole], keep))


def test_tls_captures_are_decrypted_on_the_executors(spark, tmp_path):
    whole = _real("tls/py-tls13-chacha20.pcap")
    keys = KeyLog()
    keys.add_text(Path(str(whole) + ".keys").read_text())
    parts = rotate(whole, tmp_path, 25)
    expected = stats_document([whole], keys=keys)
    assert expected["tls"]["decrypted"] >= 3
    result = run_job(spark, [str(p) for p in parts], DecodeOptions(keylog=keys), partitions=2)
    assert_same(result.document, expected)
    without = run_job(spark, [str(p) for p in parts], partitions=2)
    assert without.document["tls"]["decrypted"] == 0 and without.document["tls"]["connections"] >= 3
