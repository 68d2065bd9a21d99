"""The job of kwire.spark.job without Spark, for tests: map every file (kwire.spark.mapside), sort the
rows by partition as the shuffle would, reduce every partition (kwire.spark.stitch), merge."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from kwire.spark.job import merge_results
from kwire.spark.mapside import read_file
from kwire.spark.results import DecodeOptions, PartitionResult
from kwire.spark.stitch import Reducer
from kwire.spark.wire import RESULT, SORT_COLUMNS


def run_in_process(paths, parts: int = 3, options: DecodeOptions = DecodeOptions()) -> tuple[PartitionResult, list]:
    """(the merged result, the Reducers) of the job over `paths` (in argument order)."""
    batches = []
    for i, path in enumerate(paths):
        batches += list(read_file(i, str(path), parts, options))
    table = pa.Table.from_batches(batches)
    blobs, reducers = [], []
    for part in range(parts):
        rows = table.filter(pc.equal(table["part"], part)).sort_by([(c, "ascending") for c in SORT_COLUMNS])
        reducer = Reducer(options)
        out = []
        for batch in rows.to_batches(max_chunksize=500):
            out += reducer.batch(batch)
        out += reducer.end()
        reducers.append(reducer)
        for batch in out:
            blobs += [d for k, d in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()) if k == RESULT]
    return merge_results(blobs), reducers
