"""Damaged files are reported and skipped; Parquet tables; the map side's rows."""

from pathlib import Path


from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files
from kwire.spark.mapside import FileReport, read_file
from kwire.spark.results import DecodeOptions
from kwire.spark.wire import DATA, INTERIOR, PIECE, REPORT, RESULT, flow_bytes, loads
from kwire.spark.job import run_job
from kwire.spark.schemas import EXCHANGE_SCHEMA, PARTITION_SCHEMA
from kwire.native.exchange_facts import EXCHANGE_COLUMNS, PARTITION_COLUMNS
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


def test_map_side_rows_and_report():
    """One capture file: each partition gets the file's report, the task's result goes once, and
    only payload runs cross (fewer rows than packets)."""
    import pyarrow as pa

    table = pa.Table.from_batches(list(read_file(3, str(QUICK), 4, DecodeOptions())))
    kinds = table.column("kind").to_pylist()
    reports = [loads(d) for k, d in zip(kinds, table.column("data").to_pylist()) if k == REPORT]
    assert sorted(table.column("part").to_pylist()[i] for i, k in enumerate(kinds) if k == REPORT) == [0, 1, 2, 3]
    report = reports[0]
    assert isinstance(report, FileReport) and report.packets == 157 and report.error is None
    assert report.first_ts_ns <= report.last_ts_ns
    assert kinds.count(RESULT) == 1 and (PIECE in kinds or INTERIOR in kinds)
    assert 0 < kinds.count(DATA) < 157  # no row for a pure ACK


def test_map_side_ships_pieces_of_a_cut_file(tmp_path):
    """A connection cut by a file's edge crosses as payload runs: fewer rows than packets, no more
    payload bytes than the file's TCP payload."""
    import pyarrow as pa

    parts = rotate(QUICK, tmp_path, 60)
    table = pa.Table.from_batches(list(read_file(0, str(parts[1]), 2, DecodeOptions())))
    kinds = table.column("kind").to_pylist()
    assert PIECE in kinds and DATA in kinds
    data = [len(d) for k, d in zip(kinds, table.column("data").to_pylist()) if k == DATA]
    assert 0 < len(data) < 60 and sum(data) < parts[1].stat().st_size


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
    slow = exchanges.orderBy(exchanges.latency_ms.desc()).first()
    assert slow["api"] == "JoinGroup" and slow["latency_ms"] == 3001.216
    fetched = partitions.where("api = 'Fetch'").groupBy().sum("records").first()[0]
    assert fetched == 50
    lag = {r["partition"]: r["lag"] for r in partitions.where("lag is not null").collect()}
    assert lag == {0: 13, 1: 12, 2: 13, 3: 12}
    assert EXCHANGE_SCHEMA["latency_ms"].nullable
