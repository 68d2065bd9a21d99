"""`kwire spark --follow DIR`: Structured Streaming over a directory that tcpdump -G / -C rotates into.

    readStream.format("kwire_files")  new complete files -> wire rows    FileStream: the map side per file
      .groupBy("flow")
      .applyInPandasWithState(...)     each flow key's pieces stitched  stitch_flow, state: FlowState
      .writeStream.foreachBatch(...)   exchanges appended to OUT/exchanges (Parquet); the summary document
                                       of everything so far in OUT/summary.json, per micro-batch

A file is complete once a newer one exists in DIR or it has not changed for `settle` seconds (tcpdump
writes the newest). Files are taken in the order they were completed (modification time, then name)
and keep their number across micro-batches and restarts (OUT/_checkpoint holds Spark's offsets and
state). Each new file goes through the map side as in the batch job (kwire.spark.mapside): the
connections it holds whole are finished there; the pieces of the others cross to the task of their
flow key, which continues the connection it carries in Spark's state (a pickled FlowState: the
stream layers' own state, TCP's next sequence numbers, the tail to play if the connection ends
there) with the new pieces, exactly as kwire.spark.stitch plays them, so a connection that goes on
into the next file is carried over, not cut. Known limits: where a file edge falls into a hole (no
packets to read again while following) the connection is cut there; a connection that falls silent
stays in the state until it goes on (TCP's idle timeout applies then, as in `kwire stats`), closes, or
the capture ends: when no file has come for --follow-idle seconds, the connections still carried
are ended as at the end of a capture (read back with Spark's state data source) and the summary is
final.
"""

from __future__ import annotations

import os
import tempfile
import time

from pyspark import cloudpickle
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from kwire.spark.mapside import read_file
from kwire.pipeline import RunSummary
from kwire.spark.pieces import Piece, Replayer
from kwire.spark.results import DecodeOptions, Facts, PartitionResult, add_counts
from kwire.spark.stitch import Chain, _Player, plan
from kwire.spark.wire import (DATA, OUT_DDL, PIECE, REPORT, RESULT, SORT_COLUMNS, WIRE_DDL, XROWS, dumps, loads,
                              out_batches, table_bytes)
from kwire.tcp.stream import Connection

STATE_DDL = "state binary"


class FileStream(DataSource):
    """The wire rows (kwire.spark.wire) of the complete capture files of a directory, as a stream."""

    @classmethod
    def name(cls) -> str:
        return "kwire_files"

    def schema(self) -> str:
        return WIRE_DDL

    def streamReader(self, schema) -> DataSourceStreamReader:
        # The decode options (the key log among them) come in a file only the driver's user can read,
        # never in an option string a query plan would show.
        with open(self.options["decode"], "rb") as f:
            decode = loads(f.read())
        return FileStreamReader(self.options["path"], float(self.options.get("settle", "10")),
                                int(self.options.get("parts", "1")), decode)


class FileStreamReader(DataSourceStreamReader):
    def __init__(self, folder: str, settle: float, parts: int, decode: DecodeOptions):
        self.folder, self.settle, self.parts, self.decode = folder, settle, parts, decode
        self.files: list[str] = []

    def _complete(self) -> list[str]:
        from kwire.capture.files import CAPTURE_NAME

        found = []
        for name in os.listdir(self.folder):
            path = os.path.join(self.folder, name)
            if CAPTURE_NAME.search(name) and os.path.isfile(path):
                st = os.stat(path)
                found.append((st.st_mtime_ns, name, path))
        found.sort()
        now = time.time_ns()
        done = [p for i, (m, _, p) in enumerate(found) if i < len(found) - 1 or now - m >= self.settle * 1e9]
        known = set(self.files)
        self.files += [p for p in done if p not in known]
        return self.files

    def initialOffset(self) -> dict:
        return {"files": 0}

    def latestOffset(self, start=None, limit=None) -> dict:
        return {"files": len(self._complete())}

    def partitions(self, start: dict, end: dict):
        self._complete()
        return [InputPartition((i, self.files[i])) for i in range(start["files"], end["files"])]

    def read(self, partition: InputPartition):
        index, path = partition.value
        for batch in read_file(index, path, self.parts, self.decode):
            yield batch

    def commit(self, end: dict) -> None:
        pass


class FlowState:
    """What a flow key carries from one micro-batch to the next: its open connection, if any."""

    def __init__(self, piece: Piece, replay: Replayer, pipeline, tail: list, next_id: int):
        self.piece = piece        # the connection's last piece, its nxt that of the whole connection
        self.replay = replay      # the stream layers (TLS, Kafka, decoding) in the middle of it...
        self.pipeline = pipeline  # ...and the Pipeline they hand exchanges to
        self.tail = tail          # what ending the last file made: played if the connection ends there
        self.next_id = next_id


class _FlowTask:
    """The _Player's owner for one flow key in one micro-batch (kwire.spark.stitch.Reducer's role)."""

    def __init__(self, options: DecodeOptions, metas: list, carried: FlowState | None, flow: bytes):
        self.options = options
        self.metas = metas
        self.carried = carried
        self.pipeline = carried.pipeline if carried is not None else options.pipeline()
        if carried is not None:  # counted in earlier micro-batches: count from here on
            self.pipeline.summary = RunSummary()
            closed = self.pipeline.kafka.counters.closed
            for name in closed:
                closed[name] = 0
        self.facts = Facts(options)
        self.result = PartitionResult(self.facts.aggregator, members=self.facts.members)
        self.next_id = carried.next_id if carried is not None else 1
        self.kept: FlowState | None = None
        self.gaps = self.gap_bytes = 0
        self.flow = flow

    def connection(self, first: Piece) -> Replayer:
        if self.carried is not None and first is self.carried.piece:
            return self.carried.replay
        # ids unique per flow key and connection (a connection's enrichment is its own)
        conn = Connection(self.next_id, first.a, first.b, first.initiator, first.first_ts)
        conn.start_seq = list(first.starts)
        self.next_id += 1
        return Replayer(self.pipeline.tls(conn), conn)

    def closing(self, chain: Chain, last: Piece, replay: Replayer) -> None:
        """The carried connection ends before its next piece (a new SYN, idle): what ending its last
        file made is played now, at the time it ends."""
        if self.carried is not None and last is self.carried.piece:
            replay.play(self.carried.tail, ts_ns=chain.close[0])

    def closed(self, replay: Replayer) -> None:
        self.gaps += replay.gaps
        self.gap_bytes += replay.gap_bytes
        self.facts.add(self.pipeline.take())

    def carry(self, chain: Chain, replay: Replayer, last: Piece, tail: list) -> None:
        flip = last.flipped(chain.first.a)
        piece = Piece(last.file, last.forder, last.index, chain.first.a, chain.first.b, chain.first.initiator,
                      chain.first.first_ts, list(chain.first.starts), last_ts=last.last_ts,
                      nxt=list(chain.nxt), clean=last.clean, fins=list(chain.fins), closer=chain.closer)
        if flip:
            tail = [(k, 1 - d, ts, v) for k, d, ts, v in tail]
        if self.carried is not None and last is self.carried.piece:
            tail = self.carried.tail  # nothing new came for it
        self.facts.add(self.pipeline.take())
        self.kept = FlowState(piece, replay, self.pipeline, tail, self.next_id)


def stitch_flow(options: DecodeOptions):
    """The applyInPandasWithState function: one flow key's rows of one micro-batch, its state."""
    def run(key, frames, state):
        import pandas as pd

        frame = pd.concat(list(frames), ignore_index=True).sort_values(list(SORT_COLUMNS))
        flow = key[0]
        if flow == b"":  # the files' reports and what their map tasks finished: passed on
            rows = frame[frame["kind"].isin([REPORT, RESULT, XROWS])]
            yield pd.DataFrame({"kind": rows["kind"].astype("int8"), "data": rows["data"]})
            return
        carried = cloudpickle.loads(state.get[0]) if state.exists else None
        metas = [loads(b) for b in frame[frame["section"] == 0]["data"]]
        if carried is not None:
            metas.insert(0, carried.piece)
        task = _FlowTask(options, metas, carried, flow)
        player = _Player(task, plan(metas, None, cut=True).steps)
        events = frame[frame["section"] == 1]
        for kind, direction, ts, size, data in zip(events["kind"], events["dir"], events["ts"], events["size"],
                                                   events["data"]):
            player.event(int(kind), int(direction), int(ts), data if kind == DATA else int(size))
        player.done()
        if task.kept is not None:
            state.update((cloudpickle.dumps(task.kept),))
        elif state.exists:
            state.remove()
        yield _frame(_outputs(task))
    return run


def _outputs(task: _FlowTask) -> list[tuple[int, bytes]]:
    task.result.add_run(task.pipeline)
    add_counts(task.result.tcp, {"gaps": task.gaps, "gap_bytes": task.gap_bytes})
    out = [(RESULT, dumps(task.result))]
    exchanges, _ = task.facts.take_tables()  # (the partitions table is the batch job's: names need it all)
    if exchanges is not None:
        out.append((XROWS, table_bytes(exchanges)))
    return out


def _frame(out: list[tuple[int, bytes]]):
    import pandas as pd

    return pd.DataFrame({"kind": pd.Series([k for k, _ in out], dtype="int8"), "data": [d for _, d in out]})


def end_carried(carried: FlowState, options: DecodeOptions, ts_ns: int, reason: str) -> list[tuple[int, bytes]]:
    """End a carried connection (evicted, or the capture ended): its tail at ts_ns, then close (at
    "fin" when both its FINs were in: kwire.spark.stitch._ended)."""
    task = _FlowTask(options, [carried.piece], carried, b"")
    carried.replay.play(carried.tail, ts_ns=ts_ns)
    fins = carried.piece.fins
    carried.replay.close(ts_ns, "fin" if fins[0] and fins[1] else reason, carried.piece.closer)
    task.closed(carried.replay)
    return _outputs(task)


def follow(spark, folder: str, out: str, options: DecodeOptions, *, settle: float = 10.0, idle_stop: float = 0,
           partitions: int = 8, on_batch=None):
    """Run the query until no new file has come for `idle_stop` seconds (0: until interrupted).
    `on_batch(result, files)` is called on the driver after each micro-batch with the merged
    PartitionResult so far (OUT/summary.json is rewritten with its document first)."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    from kwire.analytics import summary_json
    from kwire.spark.job import fact_rows
    from kwire.spark.schemas import EXCHANGE_SCHEMA

    spark.dataSource.register(FileStream)
    options = DecodeOptions(port_hints=options.port_hints, keep=options.keep, rows=True, keylog=options.keylog,
                            vxlan_ports=options.vxlan_ports)
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    fd, decode_file = tempfile.mkstemp(prefix="kwire-follow-")
    with os.fdopen(fd, "wb") as f:
        f.write(dumps(options))
    rows = (spark.readStream.format("kwire_files").option("settle", str(settle)).option("parts", "1")
            .option("decode", decode_file).load(folder))
    stitched = rows.groupBy("flow").applyInPandasWithState(stitch_flow(options), OUT_DDL, STATE_DDL, "append",
                                                           GroupStateTimeout.NoTimeout)
    total: dict = {"result": None, "batches": 0, "files": []}

    def write(batch, batch_id):
        batch.persist()
        try:
            fact_rows(batch, XROWS, EXCHANGE_SCHEMA).write.mode("append").parquet(os.path.join(out, "exchanges"))
            for row in batch.where(f"kind = {RESULT} or kind = {REPORT}").collect():
                part = loads(row["data"])
                if row["kind"] == REPORT:
                    total["files"].append(part)
                    continue
                part.files = []
                total["result"] = part if total["result"] is None else total["result"].merge(part)
        finally:
            batch.unpersist()
        total["batches"] += 1
        if total["result"] is not None:
            tmp = os.path.join(out, ".summary.json.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(summary_json(total["result"].aggregator.document()) + "\n")
            os.replace(tmp, os.path.join(out, "summary.json"))
            if on_batch is not None:
                on_batch(total["result"], batch_id)

    query = (stitched.writeStream.foreachBatch(write).outputMode("append")
             .option("checkpointLocation", os.path.join(out, "_checkpoint")).start())
    try:
        ended = _wait(query, idle_stop)
    finally:
        query.stop()
        os.unlink(decode_file)
    if ended:  # no new file for idle_stop seconds: the capture has ended, its open connections too
        write(end_of_capture(spark, os.path.join(out, "_checkpoint"), folder, options), -1)
    result = total["result"] or PartitionResult(Facts(options).aggregator)
    result.files = sorted(total["files"], key=lambda f: f.index)
    return result


def end_of_capture(spark, checkpoint: str, folder: str, options: DecodeOptions):
    """The connections still carried in the query's state, ended as at the end of a capture (at its
    latest record), as a DataFrame of OUT rows (read with Spark's state data source)."""
    from kwire.spark.source import last_time

    newest = max((os.path.join(folder, n) for n in os.listdir(folder)), key=os.path.getmtime, default=None)
    end = last_time(newest) if newest else 0
    states = spark.read.format("statestore").load(checkpoint)

    def ending(batches):
        for batch in batches:
            for value in batch.column(0).to_pylist():
                carried = cloudpickle.loads(value)
                out = end_carried(carried, options, max(end, carried.piece.last_ts), "end")
                yield from out_batches(out)

    return states.select("value.groupState.state").mapInArrow(ending, OUT_DDL)


def _wait(query, idle_stop: float) -> bool:
    """Until interrupted, or until no micro-batch has brought a file for idle_stop seconds (True)."""
    last = time.monotonic()
    seen = -1
    while query.isActive:
        query.awaitTermination(1)
        progress = query.lastProgress
        if query.status.get("isTriggerActive") or (progress and progress.get("batchId", -1) != seen
                                                   and progress.get("numInputRows", 0)):
            last = time.monotonic()  # a micro-batch at work, or one that brought files
            if progress:
                seen = progress.get("batchId", -1)
        if idle_stop and time.monotonic() - last >= idle_stop:
            return True
    error = query.exception()
    if error is not None:
        raise error
    return False


