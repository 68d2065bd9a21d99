"""Damaged files are reported and skipped; Parquet tables; the extract step's keys."""

from pathlib import Path


from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files
from kwire.spark.extract import FileReport, file_records, flow_bytes
from kwire.spark.job import run_job
from kwire.spark.schemas import EXCHANGE_SCHEMA, PARTITION_SCHEMA
from kwire.analytics.facts import EXCHANGE_COLUMNS, PARTITION_COLUMNS
from tests.spark.rotate import rotate

QUICK = Path(__file__).parents[1] / "analytics" / "data" / "quick.pcap"


def _doc(paths):
    agg = Aggregator()
    for ex in analyze_files([str(p) for p in paths]):
        agg.add_exchange(ex)
    return agg.document()


def test_flow_key_is_the_same_both_ways():
    a, b = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    assert flow_bytes(a, 5000, b, 9092) == flow_bytes(b, 9092, a, 5000)
    assert flow_bytes(a, 5000, b, 9092) != flow_bytes(a, 5001, b, 9092)


def test_file_records_keys_and_report():
    records = list(file_records(3, str(QUICK), 4))
    packets = [r for r in records if r[0][1] != b""]
    reports = [r for r in records if r[0][1] == b""]
    assert len(packets) == 157
    assert {r[0][0] for r in reports} == {0, 1, 2, 3}  # one report per partition
    report = reports[0][1]
    assert isinstance(report, FileReport) and report.packets == 157 and report.error is None
    assert report.last_ts_ns == max(k[2] for k, _ in packets)
    assert all(k[3] == 3 for k, _ in packets)
    assert [k[4] for k, _ in packets] == sorted(k[4] for k, _ in packets)


def test_damaged_files_are_reported_and_skipped(spark, tmp_path):
    parts = rotate(QUICK, tmp_path / "parts", 20)
    garbage = tmp_path / "parts" / "zz-garbage.pcap"
    garbage.write_bytes(b"this is not a capture file" * 10)
    empty = tmp_path / "parts" / "zz-empty.pcap"
    empty.write_bytes(b"")
    cut = parts[-1]
    cut.write_bytes(cut.read_bytes()[:-30])  # the last file ends inside its last packet
    good = list(parts)
    result = run_job(spark, [str(p) for p in good + [garbage, empty]], partitions=2)
    errors = result.summary.capture_errors
    assert len(errors) == 3
    assert any("zz-garbage" in e for e in errors) and any("zz-empty" in e for e in errors)
    assert any(cut.name in e for e in errors)
    assert result.document == _doc(good)  # kwire stats over the same files: the same damage


def test_parquet_tables(spark, tmp_path):
    parts = rotate(QUICK, tmp_path / "parts", 25)
    out = tmp_path / "out"
    result = run_job(spark, [str(p) for p in parts], out=str(out), partitions=2)
    assert result.document == _doc([QUICK])
    exchanges = spark.read.parquet(str(out / "exchanges"))
    partitions = spark.read.parquet(str(out / "partitions"))
    assert [f.name for f in exchanges.schema.fields] == list(EXCHANGE_COLUMNS)
    assert [f.name for f in partitions.schema.fields] == [f.name for f in PARTITION_SCHEMA.fields]
    assert [f.name for f in PARTITION_SCHEMA.fields][:len(PARTITION_COLUMNS)] == list(PARTITION_COLUMNS)
    assert exchanges.count() == result.document["totals"]["exchanges"] == 47
    rows = {r["api"]: r["n"] for r in exchanges.groupBy("api").count().withColumnRenamed("count", "n").collect()}
    assert rows["Produce"] == 4 and rows["JoinGroup"] == 1
    slow = exchanges.orderBy(exchanges.latency_ns.desc()).first()
    assert slow["api"] == "JoinGroup" and slow["latency_ns"] == 3_001_216_000
    fetched = partitions.where("api = 'Fetch'").groupBy().sum("records").first()[0]
    assert fetched == 50
    lag = {r["partition"]: r["lag"] for r in partitions.where("lag is not null").collect()}
    assert lag == {0: 13, 1: 12, 2: 13, 3: 12}
    assert EXCHANGE_SCHEMA["latency_ns"].nullable
