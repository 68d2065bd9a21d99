"""`kwire spark` gives the same `changes`, `quorum` and findings as `kwire stats` (the whole document), on
admin recordings and the scripted KRaft sequence split into rotated files, with and without a filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.query import ExchangeFilter
from kwire.spark.job import run_job
from kwire.spark.results import DecodeOptions
from tests.spark.rotate import rotate
from tests.spark.test_stitching import assert_same, stats_document

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name,per_file", [("changes/confluent-tansu.pcap", 40), ("changes/kafkajs-tansu.pcap", 30),
                                           ("kraft/kraft-quorum.pcap", 60)])
def test_spark_changes_and_quorum_equal_stats(spark, tmp_path, name, per_file):
    whole = ROOT / "captures" / name
    parts = rotate(whole, tmp_path / "parts", per_file, gzip_every=3)
    assert len(parts) >= 3
    expected = stats_document([whole])
    assert expected["changes"]["count"] or expected["quorum"]
    result = run_job(spark, [str(p) for p in parts], partitions=3)
    assert result.document["changes"] == expected["changes"]
    assert result.document["quorum"] == expected["quorum"]
    assert_same(result.document, expected)


def test_spark_topic_filter_keeps_principals_and_changes(spark, tmp_path):
    whole = ROOT / "captures" / "changes" / "confluent-tansu.pcap"
    parts = rotate(whole, tmp_path / "parts", 40, gzip_every=3)
    keep = ExchangeFilter(topics=frozenset({"kwire-admin-audit"}))
    expected = stats_document([whole], keep)
    assert [e["operation"] for e in expected["changes"]["entries"]] == ["create_topics", "delete_topics"]
    result = run_job(spark, [str(p) for p in parts], DecodeOptions(keep=keep), partitions=3)
    assert_same(result.document, expected)
