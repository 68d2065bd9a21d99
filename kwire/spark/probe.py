"""Which capture files a failed `kwire spark` job failed on: each file run alone, one task per file.

When the job fails with an error kwire did not raise on purpose (a fault: a bug of kwire's that some
traffic meets, kwire.errors.is_fault), `kwire spark` asks `faulty_files(spark, paths, options)`: a job of
one task per file, each running `file_fault(path, options)`, the job's own steps over that file alone in
the task's process (the map side, kwire.spark.mapside; the reduce side of every flow key, kwire.spark.stitch;
the decode stage, kwire.spark.spread; the merge and the document), then the renderers of the document
(tables, JSON, HTML). It returns the fault's one line (kwire.errors.fault_line), or None when the file
goes through (a damaged file's KwireError is the job's to report, as ever). The command then runs the job
again over the other files and names those left out (kwire.cli.spark).

Memory: a task holds the rows its file ships (the payload of the connections that touch the file's edges,
at most about the file), as a map task does.
"""

from __future__ import annotations

import io

from kwire.errors import KwireError, fault_line, is_fault
from kwire.spark.results import DecodeOptions, PartitionResult


def run_alone(path: str, options: DecodeOptions) -> PartitionResult:
    """The job's steps over one file, in this process: its merged PartitionResult."""
    import pyarrow as pa

    from kwire.spark.job import merge_results
    from kwire.spark.mapside import read_file
    from kwire.spark.spread import Decoder
    from kwire.spark.stitch import Reducer
    from kwire.spark.wire import OUT_SCHEMA, RESULT, SORT_COLUMNS

    rows = pa.Table.from_batches(list(read_file(0, path, 1, options)))
    reducer = Reducer(options, spread=True)
    out = []
    for batch in rows.sort_by([(column, "ascending") for column in SORT_COLUMNS]).to_batches():
        out += reducer.batch(batch)
    out += reducer.end()
    decoder = Decoder(options)
    done = []
    for batch in out:
        done += decoder.batch(batch)
    done += decoder.end()
    table = pa.Table.from_batches(done, schema=OUT_SCHEMA)
    kinds, blobs = table.column(0).to_pylist(), table.column(1).to_pylist()
    return merge_results(blob for kind, blob in zip(kinds, blobs) if kind == RESULT)


def render_all(document: dict, path: str) -> None:
    """What the command would make of the document: tables, JSON, the HTML report (thrown away)."""
    from rich.console import Console

    from kwire.analytics import summary_json
    from kwire.render.html_report import html_report
    from kwire.render.stats_view import stats_view

    summary_json(document)
    html_report(document, sources=[path])
    Console(file=io.StringIO(), width=150).print(stats_view(document))


def file_fault(path: str, options: DecodeOptions) -> str | None:
    """The one line of the fault kwire meets on this file alone, or None."""
    try:
        render_all(run_alone(path, options).aggregator.document(), path)
    except Exception as exc:  # noqa: BLE001 - a fault is what is looked for
        if is_fault(exc):
            return fault_line(exc)
        if not isinstance(exc, KwireError):
            raise
    return None


def faulty_files(spark, paths: list[str], options: DecodeOptions) -> dict[str, str]:
    """{path: its fault's line} of the files kwire fails on alone (a Spark job, one task per file)."""
    def probe(batches):
        import pyarrow as pa

        for batch in batches:
            for i in batch.column(0).to_pylist():
                line = file_fault(paths[i], options)
                yield pa.RecordBatch.from_arrays([pa.array([i], pa.int32()), pa.array([line], pa.string())],
                                                 names=["file", "fault"])

    rows = spark.range(0, len(paths), 1, len(paths)).mapInArrow(probe, "file int, fault string").collect()
    return {paths[i]: line for i, line in rows if line is not None}
