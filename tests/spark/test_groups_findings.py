"""`kwire spark` gives the same groups and findings as `kwire stats` on the same traffic split into
rotated files (issue 14), with and without --group."""

from __future__ import annotations

import gzip

import pytest

from kwire.group_filter import AllOf, GroupFilter, group_members
from kwire.query import ExchangeFilter
from kwire.spark.job import run_job
from kwire.spark.results import DecodeOptions
from tests import problems as P
from tests.hostile3.resends import resends
from tests.spark.rotate import rotate
from tests.spark.test_stitching import assert_same, stats_document


def _parts(name: str, tmp_path, per_file: int):
    whole = tmp_path / f"{name}.pcap"
    whole.write_bytes(gzip.decompress(P.capture(name).read_bytes()))
    return whole, rotate(whole, tmp_path / "parts", per_file, gzip_every=3)


@pytest.mark.parametrize("name,per_file", [("member-expired", 150), ("error-burst", 200),
                                           ("share-redelivery", 120), ("txn-stall", 40), ("kip848-expired", 250),
                                           ("proxy-faults", 1000), ("dup-write-librdkafka", 100),
                                           ("dup-write-kafka-python", 100)])
def test_spark_groups_and_findings_equal_stats(spark, tmp_path, name, per_file):
    whole, parts = _parts(name, tmp_path, per_file)
    assert len(parts) >= 5
    expected = stats_document([whole])
    assert expected["findings"] and (expected["groups"] or name == "txn-stall" or name.startswith("dup-write"))
    result = run_job(spark, [str(p) for p in parts], partitions=3)
    assert result.document["groups"] == expected["groups"]
    assert result.document["findings"] == expected["findings"]
    assert_same(result.document, expected)


def test_spark_group_filter_equals_stats(spark, tmp_path):
    whole, parts = _parts("rebalance-storm", tmp_path, 300)
    keep = AllOf(ExchangeFilter(), group_members([str(whole)], "kwire-app"))
    expected = stats_document([whole], keep)
    assert set(expected["client_ids"]) == {"kwire-consumer-1", "kwire-consumer-2", "kwire-flapper"}
    pending = AllOf(ExchangeFilter(), GroupFilter("kwire-app", resolved=False))
    result = run_job(spark, [str(p) for p in parts], DecodeOptions(keep=pending), partitions=3)
    assert_same(result.document, expected)


def test_spark_counts_the_resends_stats_counts(spark, tmp_path):
    """Issue 49: thousands of failed sends resent, past the 16,384 records of failed sends kept
    (tests/hostile3/resends.py), in rotated files: the document of `kwire stats`, findings and sample alike (a
    decode task read for resends only the batches of a connection it was dealt, and counted fewer)."""
    whole = tmp_path / "resends.pcap"
    resends(whole)
    parts = rotate(whole, tmp_path / "parts", 3000)
    expected = stats_document([whole])
    assert expected["findings_total"] > 500
    result = run_job(spark, [str(p) for p in parts], partitions=3)
    assert_same(result.document, expected)


@pytest.mark.parametrize("name,per_file", [("end-to-end", 60), ("end-to-end-commits", 120)])
def test_spark_end_to_end_equals_stats(spark, tmp_path, name, per_file):
    """Issue 47: the end_to_end section (latencies, lag in time of fetches and of commits) of `kwire spark` on
    rotated files is the one `kwire stats` makes of the whole capture: writes, deliveries and commits are
    kept apart and matched when the merged document is made."""
    whole, parts = _parts(name, tmp_path, per_file)
    assert len(parts) >= 5
    expected = stats_document([whole])["end_to_end"]
    assert expected["consumers"] and all(row["deliveries"] for row in expected["consumers"])
    assert bool(expected["commits"]) == (name == "end-to-end-commits")
    result = run_job(spark, [str(p) for p in parts], partitions=3)
    assert result.document["end_to_end"] == expected
