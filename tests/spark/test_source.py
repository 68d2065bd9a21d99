"""The `kwire` data source (kwire.spark.source) in a real SparkSession: the rows `--out` writes, one
partition per file, the CLI's filters as options, Spark SQL; and the `partitions` table names topics
as the document does."""

from __future__ import annotations

from pathlib import Path

from kwire.query import ExchangeFilter
from kwire.spark.job import run_job
from kwire.spark.results import DecodeOptions
from tests.spark.rotate import rotate

CAPTURES = Path(__file__).parents[2] / "captures"


def _rows(df) -> list:
    return sorted(repr(tuple(r)) for r in df.collect())


def test_data_source_gives_the_rows_of_out_parquet(spark, tmp_path):
    parts = rotate(CAPTURES / "multi-broker-3.pcap", tmp_path / "parts", 17)
    out = tmp_path / "out"
    run_job(spark, [str(p) for p in parts], out=str(out), partitions=3)
    written = spark.read.parquet(str(out / "exchanges"))
    read = spark.read.format("kwire").load(str(tmp_path / "parts"))
    assert read.columns == written.columns
    assert read.rdd.getNumPartitions() == len(parts)
    assert _rows(read) == _rows(written) and read.count() == 69


def test_data_source_options_are_the_cli_filters(spark, tmp_path):
    parts = rotate(CAPTURES / "multi-broker-3.pcap", tmp_path / "parts", 30)
    out = tmp_path / "out"
    keep = ExchangeFilter(api_keys=frozenset({0, 1}))
    run_job(spark, [str(p) for p in parts], DecodeOptions(keep=keep), out=str(out), partitions=2)
    read = spark.read.format("kwire").option("api", "Fetch,Produce").load(",".join(str(p) for p in parts))
    assert _rows(read) == _rows(spark.read.parquet(str(out / "exchanges")))
    assert {r["api"] for r in read.select("api").distinct().collect()} == {"Fetch", "Produce"}


def test_data_source_in_spark_sql(spark, tmp_path):
    parts = rotate(CAPTURES / "share-consumer.pcap", tmp_path / "parts", 11)
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW kwire_exchanges USING kwire OPTIONS (path '{tmp_path / 'parts'}')")
    counted = spark.sql("SELECT api, count(*) AS n FROM kwire_exchanges GROUP BY api").collect()
    result = run_job(spark, [str(p) for p in parts], partitions=2)
    assert {r["api"]: r["n"] for r in counted} == {api: figures["exchanges"]
                                                   for api, figures in result.document["apis"].items()}


def test_partitions_table_names_share_fetch_topics(spark, tmp_path):
    parts = rotate(CAPTURES / "share-consumer.pcap", tmp_path / "parts", 11)
    out = tmp_path / "out"
    result = run_job(spark, [str(p) for p in parts], out=str(out), partitions=2)
    named = set(result.document["partitions"])  # topics by name where a Metadata answer named them
    rows = spark.read.parquet(str(out / "partitions")).where("api = 'ShareFetch'").collect()
    assert rows and {r["topic"] for r in rows} <= named, (named, {r["topic"] for r in rows})


def test_data_source_names_shared_facts_as_json_lines_does(spark):
    """One vocabulary (docs/vocabulary.md): every column the data source shares with JSON Lines has
    the same name and the same value, exchange by exchange."""
    from kwire.pipeline import analyze_files
    from kwire.render.jsonl import exchange_record

    capture = CAPTURES / "multi-broker-3.pcap"
    records = {(r["ts_ns"], r["client"], r["correlation_id"]): r
               for r in map(exchange_record, analyze_files([str(capture)]))}
    df = spark.read.format("kwire").load(str(capture))
    shared = [c for c in df.columns if c in next(iter(records.values()))]
    assert {"ts_ns", "latency_ms", "request_bytes", "error_codes", "request_outcome", "unanswered"} <= set(shared)
    rows = df.collect()
    assert len(rows) == len(records)
    for row in rows:
        record = records[(row["ts_ns"], row["client"], row["correlation_id"])]
        for name in shared:
            value = row[name]
            assert (list(value) if isinstance(value, list) else value) == record[name], name
