"""The `kwire` Spark data source: `spark.read.format("kwire").load(PATH)` -> the exchanges DataFrame.

Spark 4's Python Data Source API. The DataFrame has the schema of the Parquet table `kwire spark --out`
writes (kwire.spark.schemas.EXCHANGE_SCHEMA) and the same rows; one partition per capture file
(PATH: a file, a directory of captures, a glob, or several of them comma-separated, as `kwire spark`
takes them). Options are the CLI's filters: `api`, `clientId`, `topic`, `partition`, `host` (each
comma-separated), `since`, `until`, `errors` (true/false), `minLatency` (ms), `port` (broker port
hints) and `keylog` (a key log file, read where the DataFrame is planned).

Each exchange comes from exactly one partition: the file its connection starts in (the first file it
appears in, unless it goes on from the file before). A partition runs the map side
(kwire.spark.mapside) over its file, over the file before it (to know which connections go on from
it) and over the files after it for as long as connections that start in its file go on; then it
stitches them (kwire.spark.stitch) as a reduce task would, keeping only its own. So partitions are
independent and exact; a connection that lasts for the whole archive is read by the partition of
its first file through every file (the CLI's job, with its shuffle, is the faster way through such
archives). Files must be rotated, not overlapping in time (two partitions would not agree on
connections spread over files that overlap: the partition says so with an error; `kwire spark`
handles such captures).

Registration: `register(spark)` (kwire.spark.session.get_session does it), or nothing at all where
kwire is installed in the Python Spark runs: the `pyspark_kwire` package is found by Spark's
automatic registration of Python data sources.
"""

from __future__ import annotations

import os
from dataclasses import replace

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kwire.errors import KwireError
from kwire.spark.mapside import IDLE_NS, read_file
from kwire.spark.results import ARROW_EXCHANGES, DecodeOptions
from kwire.spark.reread import SWEEP_NS, files_overlap
from kwire.spark.stitch import Reducer
from kwire.spark.wire import (INTERIOR, PIECE, REPORT, SORT_COLUMNS, WIRE_SCHEMA, XROWS, loads, table_of)

def _ddl_type(t: pa.DataType) -> str:
    if pa.types.is_list(t):
        return f"array<{_ddl_type(t.value_type)}>"
    return {pa.int64(): "bigint", pa.int32(): "int", pa.string(): "string", pa.bool_(): "boolean",
            pa.float64(): "double"}[t]


# The `exchanges` rows, as `--out DIR/exchanges` has them (kwire.spark.results.ARROW_EXCHANGES).
EXCHANGE_DDL = ", ".join(f"{f.name} {_ddl_type(f.type)}" for f in ARROW_EXCHANGES)


def _words(options, *names) -> tuple:
    for name in names:
        value = options.get(name)
        if value:
            return tuple(w.strip() for w in str(value).split(",") if w.strip())
    return ()


def decode_options(options, paths: list[str]) -> DecodeOptions:
    """The CLI's filters from data source options (module docstring)."""
    from kwire.keyfile import read_key_file
    from kwire.selection import Selection, parse_when

    since, until = options.get("since"), options.get("until")
    latency = options.get("minLatency") or options.get("min_latency")
    selection = Selection(apis=_words(options, "api"), client_ids=_words(options, "clientId", "client_id"),
                          topics=_words(options, "topic"), hosts=_words(options, "host"),
                          partitions=tuple(int(p) for p in _words(options, "partition")),
                          since=parse_when(since) if since else None, until=parse_when(until) if until else None,
                          errors_only=str(options.get("errors", "false")).lower() == "true",
                          min_latency=float(latency) if latency else None)
    keys = read_key_file(options.get("keylog"))[0] if options.get("keylog") else None
    ports = tuple(int(p) for p in _words(options, "port"))
    return DecodeOptions(port_hints=ports, keep=selection.exchange_filter(paths), rows=True, keylog=keys)


def capture_files(path_option: str) -> list[tuple[int, str]]:
    """(first capture time, path) of every capture the option names, in time order."""
    from kwire.capture.files import open_capture
    from kwire.capture.files import find_captures

    paths = find_captures([p.strip() for p in path_option.split(",") if p.strip()])
    files = []
    for index, path in enumerate(paths):
        reader = open_capture(os.path.abspath(path))
        try:
            first = next(iter(reader), None)
        finally:
            reader.close()
        files.append((first.ts_ns if first is not None else 0, index, os.path.abspath(path)))
    return [(first, path) for first, _, path in sorted(files)]


class KwireDataSource(DataSource):
    """`spark.read.format("kwire")`: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return "kwire"

    def schema(self) -> str:
        return EXCHANGE_DDL

    def reader(self, schema) -> DataSourceReader:
        path = self.options.get("path") or self.options.get("paths")
        if not path:
            raise KwireError('the kwire data source needs a path: spark.read.format("kwire").load(PATH)')
        return KwireReader(path, self.options)


class KwireReader(DataSourceReader):
    def __init__(self, path: str, options):
        self.files = capture_files(path)
        self.decode = decode_options(options, [p for _, p in self.files])
        self.end_ts = last_time(self.files[-1][1]) if self.files else 0

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(i) for i in range(len(self.files))]

    def read(self, partition: InputPartition):
        for table in owned_exchanges([p for _, p in self.files], [t for t, _ in self.files], partition.value,
                                     self.decode, self.end_ts):
            yield from table.to_batches()


def register(spark) -> None:
    """Make `spark.read.format("kwire")` work in this session (kwire shipped to executors first)."""
    from kwire.spark.session import ship_kwire

    ship_kwire(spark)
    spark.dataSource.register(KwireDataSource)


def _column(table: pa.Table, name: str) -> list:
    return table.column(name).to_pylist()


def last_time(path: str) -> int:
    """The latest capture time in a file (the capture's end, for its last file)."""
    from kwire.capture.files import open_capture
    from kwire.errors import CaptureError

    latest = 0
    reader = open_capture(path)
    try:
        for packet in reader:
            if packet.ts_ns > latest:
                latest = packet.ts_ns
    except CaptureError:
        pass
    finally:
        reader.close()
    return latest


def owned_exchanges(paths: list[str], firsts: list[int], k: int, options: DecodeOptions, end_ts: int = 0):
    """The exchange tables of the connections that start in file k (paths in time order; the capture
    ends at end_ts; module docstring)."""
    options = replace(options, rows=True)
    tables: dict[int, pa.Table] = {}

    def rows_of(j: int) -> pa.Table:
        if j not in tables:
            tables[j] = pa.Table.from_batches(list(read_file(j, paths[j], 1, options)), schema=WIRE_SCHEMA)
        return tables[j]

    own = rows_of(k)
    kinds, blobs = _column(own, "kind"), _column(own, "data")
    for kind, blob in zip(kinds, blobs):
        if kind == XROWS:
            yield table_of(blob)  # the connections finished in file k's map side
    metas = [(flow, loads(blob)) for flow, kind, blob in zip(_column(own, "flow"), kinds, blobs) if kind == PIECE]
    if not metas:
        return
    owned = {flow for flow, _ in metas}
    window = _back(k, rows_of, firsts, {flow: piece.first_ts for flow, piece in metas if piece.mid}, owned) + [k]
    alive = {flow: piece for flow, piece in metas}  # each flow's latest piece
    j = k
    while j + 1 < len(paths) and any(p.end == "open" and firsts[j + 1] <= p.last_ts + IDLE_NS + SWEEP_NS
                                     for p in alive.values()):
        j += 1
        window.append(j)
        nxt = rows_of(j)
        for flow, kind, blob in zip(_column(nxt, "flow"), _column(nxt, "kind"), _column(nxt, "data")):
            if flow in owned and kind in (PIECE, INTERIOR):
                alive[flow] = loads(blob)
    parts = []
    for i in window:
        table = rows_of(i)
        keep = [kind == REPORT or (flow in owned) for flow, kind in zip(_column(table, "flow"), _column(table, "kind"))]
        parts.append(table.filter(pa.array(keep)))
    _check_rotated(window, tables)
    merged = pa.concat_tables(parts).sort_by([(c, "ascending") for c in SORT_COLUMNS])
    reducer = Reducer(options, own_file=k, end_ts=end_ts)
    out = []
    for batch in merged.to_batches(max_chunksize=4096):
        out += reducer.batch(batch)
    out += reducer.end()
    for batch in out:
        for kind, blob in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
            if kind == XROWS:
                yield table_of(blob)


def _back(k: int, rows_of, firsts: list[int], unfound: dict, owned: set) -> list[int]:
    """The files before k to read: back to the piece each connection that starts mid-stream in file k
    may go on from (it can only be one within TCP's idle timeout), in time order."""
    files = []
    j = k - 1
    while j >= 0 and unfound and firsts[j + 1] >= min(unfound.values()) - IDLE_NS - SWEEP_NS:
        files.append(j)
        table = rows_of(j)
        for flow, kind in zip(_column(table, "flow"), _column(table, "kind")):
            if kind in (PIECE, INTERIOR):
                unfound.pop(flow, None)
        j -= 1
    return files[::-1]


def _check_rotated(window: list[int], tables: dict) -> None:
    reports = []
    for j in window:
        table = tables[j]
        for kind, blob in zip(_column(table, "kind"), _column(table, "data")):
            if kind == REPORT:
                reports.append(loads(blob))
                break
    if files_overlap(reports):
        names = ", ".join(os.path.basename(r.path) for r in reports)
        raise KwireError(f"capture files overlap in time ({names}): the kwire data source reads rotated files "
                         "(kwire spark reads any)")
