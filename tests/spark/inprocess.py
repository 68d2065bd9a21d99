"""The job of kwire.spark.job without Spark, for tests: map every file (kwire.spark.mapside), sort the
rows by partition as the shuffle would, reduce every partition (kwire.spark.stitch), merge."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from kwire.spark.job import merge_results
from kwire.spark.mapside import read_file
from kwire.spark.results import DecodeOptions, PartitionResult
from kwire.spark.stitch import Reducer
from kwire.spark.spread import Decoder
from kwire.spark.wire import OUT_SCHEMA, RESULT, ROUTED, SORT_COLUMNS


def run_in_process(paths, parts: int = 3, options: DecodeOptions = DecodeOptions(),
                   spread: bool = True, placed: dict | None = None) -> tuple[PartitionResult, list]:
    """(the merged result, the Reducers) of the job over `paths` (in argument order); with `spread`, the
    reduce tasks' rows are dealt round robin to `parts` decode tasks (kwire.spark.spread), as the job does."""
    batches = []
    for i, path in enumerate(paths):
        batches += list(read_file(i, str(path), parts, options, placed))
    table = pa.Table.from_batches(batches)
    out, reducers = [], []
    for part in range(parts):
        rows = table.filter(pc.equal(table["part"], part)).sort_by([(c, "ascending") for c in SORT_COLUMNS])
        reducer = Reducer(options, spread=spread)
        for batch in rows.to_batches(max_chunksize=500):
            out += reducer.batch(batch)
        out += reducer.end()
        reducers.append(reducer)
    if spread:
        out = decoded(out, parts, options)
    blobs = []
    for batch in out:
        blobs += [d for k, d in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()) if k == RESULT]
    return merge_results(blobs), reducers


def decoded(out: list[pa.RecordBatch], parts: int, options: DecodeOptions) -> list[pa.RecordBatch]:
    """The decode stage: rows dealt round robin to `parts` Decoders, a shard's Produce batches to one (as
    kwire.spark.job.dealt deals them)."""
    rows = pa.Table.from_batches(out, schema=OUT_SCHEMA) if out else OUT_SCHEMA.empty_table()
    decoders = [Decoder(options) for _ in range(parts)]
    done = []
    kinds = rows.column(0).to_pylist()
    for i in range(rows.num_rows):
        at = (kinds[i] - ROUTED) % parts if kinds[i] >= ROUTED else i % parts
        done += decoders[at].batch(rows.slice(i, 1).to_batches()[0])
    for decoder in decoders:
        done += decoder.end()
    return done
