"""The driver's merge (kwire.spark.job.merged): results merged on the executors, never collected whole."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from kwire.spark.job import FAN_IN, merged, run_job
from kwire.spark.wire import OUT_DDL
from tests.spark.rotate import rotate
from tests.spark.test_files import QUICK, _doc


@pytest.fixture
def driver_collects(spark, monkeypatch):
    """What the driver collects while the test runs: the length of every RDD.collect, and the columns
    of every DataFrame collected or iterated locally."""
    from pyspark import RDD

    DataFrame = type(spark.range(1))  # pyspark.sql.classic's, which defines its own collect

    seen = SimpleNamespace(rdd=[], frames=[])
    rdd_collect, frame_collect, frame_iterate = RDD.collect, DataFrame.collect, DataFrame.toLocalIterator

    def spy_rdd(self):
        out = rdd_collect(self)
        seen.rdd.append(len(out))
        return out

    def spy_frame(self):
        seen.frames.append(tuple(self.columns))
        return frame_collect(self)

    def spy_iterate(self, *args, **kwargs):
        seen.frames.append(tuple(self.columns))
        return frame_iterate(self, *args, **kwargs)

    monkeypatch.setattr(RDD, "collect", spy_rdd)
    monkeypatch.setattr(DataFrame, "collect", spy_frame)
    monkeypatch.setattr(DataFrame, "toLocalIterator", spy_iterate)
    return seen


def results_frame(spark, tasks: int):
    """`tasks` partitions of one pickled PartitionResult each: task i counts i + 1 exchanges and
    carries the reports of files i % 7 and 6 (as every reduce task carries every file's report)."""
    def make(batches):
        import pyarrow as pa

        from kwire.analytics import Aggregator
        from kwire.spark.results import PartitionResult
        from kwire.spark.wire import RESULT, dumps

        for batch in batches:
            for i in batch.column(0).to_pylist():
                files = [SimpleNamespace(index=i % 7), SimpleNamespace(index=6)]
                blob = dumps(PartitionResult(Aggregator(), exchanges=i + 1, files=files))
                yield pa.RecordBatch.from_arrays([pa.array([RESULT], pa.int8()), pa.array([blob], pa.binary())],
                                                 names=["kind", "data"])

    return spark.range(0, tasks, 1, tasks).mapInArrow(make, OUT_DDL)


@pytest.mark.parametrize("fan_in", [FAN_IN, 3])
def test_merged_brings_at_most_fan_in_partials_to_the_driver(spark, driver_collects, fan_in):
    result = merged(results_frame(spark, 100), fan_in)
    assert result.exchanges == 100 * 101 // 2  # every task counted once
    assert [f.index for f in result.files] == list(range(7))  # each file's report kept once, in order
    assert driver_collects.frames == []
    assert driver_collects.rdd and max(driver_collects.rdd) <= fan_in


def test_the_job_never_collects_its_results(spark, driver_collects, tmp_path):
    """More results than FAN_IN (16 reduce tasks, the decode tasks), yet the driver collects at most
    FAN_IN of them, and no frame of results (kind, data) whole; the document is still `kwire stats`'."""
    parts = rotate(QUICK, Path(tmp_path), 40)
    result = run_job(spark, [str(p) for p in parts], partitions=16)
    assert result.document == _doc([QUICK])
    assert ("kind", "data") not in driver_collects.frames
    assert driver_collects.rdd and max(driver_collects.rdd) <= FAN_IN


def test_only_partition_0_s_result_carries_the_files_reports(spark, tmp_path):
    """Every reduce task reads every file's report, but only partition 0's result carries them; the job still
    reports every file once, in order."""
    from kwire.spark.job import stitched
    from kwire.spark.results import DecodeOptions
    from kwire.spark.wire import RESULT, loads

    parts = rotate(QUICK, Path(tmp_path), 40)
    paths = [str(p) for p in parts]
    frame = stitched(spark, paths, DecodeOptions(), 4)
    results = [loads(row["data"]) for row in frame.where(f"kind = {RESULT}").collect()]
    assert len(results) == 4
    carrying = [r for r in results if r.files]
    assert len(carrying) == 1 and [f.index for f in carrying[0].files] == list(range(len(paths)))
    job = run_job(spark, paths, partitions=4)
    assert [f.index for f in job.files] == list(range(len(paths)))
    assert job.document == _doc([QUICK])
