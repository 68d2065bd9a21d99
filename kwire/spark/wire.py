"""The rows that cross the shuffle of `kwire spark`, as Arrow: one schema, a `kind` per row.

A map task (kwire.spark.mapside) reads one capture file and writes rows of WIRE_SCHEMA; Spark
repartitions them by `part` and sorts each partition by SORT_COLUMNS; a reduce task
(kwire.spark.stitch) reads them in that order. What each kind carries:

    REPORT    flow b"", section 0: the file's FileReport (pickled), one row for every partition, so
              every reduce task knows every file's time range before any connection
    RESULT    flow b"", section 1: what the map task finished itself (pickled PartitionResult)
    XROWS     flow b"", section 1: the exchange rows it finished (`--out`), an Arrow IPC stream
    PROWS     flow b"", section 1: their partition rows (`--out`), an Arrow IPC stream
    PIECE     section 0: one connection as one file saw it (pickled kwire.spark.pieces.Piece meta)
    INTERIOR  section 0: a connection the map task finished itself (pickled Piece meta, no events)
    DATA      section 1: in-order bytes of one direction (`dir`), captured at `ts`
    GAP       section 1: `size` bytes of `dir` never captured

A reduce task's rows (OUT_SCHEMA) are RESULT, XROWS and PROWS, and, when it spreads decoding
(kwire.spark.stitch.Reducer's `spread`),

    RAWS      exchanges paired but not decoded: a batch of kwire.native.exchange_build.ExchangeParts packed by
              kwire.native.exchange_wire, for the decode stage (kwire.spark.spread), dealt to any decode task
    ROUTED+s  the same, of Produce exchanges whose producer is of shard s (kwire.parallel.produce_shard):
              every such batch of shard s goes to one decode task (kwire.spark.job.dealt)

Within a connection's flow key, section 0 (what each file saw, small) sorts before section 1 (the
bytes), and both in file order (`forder`: the file's first capture time, then `file`), then `n`.
Only payload bytes and gaps cross: ACKs, headers and retransmissions were consumed by TCP in the
map task. Nothing is pickled per packet; pickles are per connection or per task.
"""

from __future__ import annotations

import io
import pickle
import struct

import pyarrow as pa

REPORT, RESULT, XROWS, PROWS, PIECE, INTERIOR, DATA, GAP, RAWS = range(9)
ROUTED = 16  # kinds ROUTED to ROUTED + kwire.analytics.resend_state.SHARDS - 1: RAWS of one shard


def raws_kind(shard: int | None) -> int:
    """The kind of a batch of RawExchanges: RAWS, or ROUTED + its shard."""
    return RAWS if shard is None else ROUTED + shard


def is_raws(kind: int) -> bool:
    return kind == RAWS or kind >= ROUTED

WIRE_SCHEMA = pa.schema([
    ("part", pa.int32()),
    ("flow", pa.binary()),
    ("section", pa.int8()),
    ("forder", pa.int64()),
    ("file", pa.int32()),
    ("n", pa.int64()),
    ("kind", pa.int8()),
    ("dir", pa.int8()),
    ("ts", pa.int64()),
    ("size", pa.int64()),
    ("data", pa.binary()),
])
WIRE_DDL = ("part int, flow binary, section tinyint, forder bigint, file int, n bigint, kind tinyint, "
            "dir tinyint, ts bigint, size bigint, data binary")
SORT_COLUMNS = ("flow", "section", "forder", "file", "n")

# What a reduce task hands back: its PartitionResult (pickled) and Arrow IPC blobs of fact rows.
OUT_SCHEMA = pa.schema([("kind", pa.int8()), ("data", pa.binary())])
OUT_DDL = "kind tinyint, data binary"

_PORT = struct.Struct(">H").pack


def flow_bytes(src_ip: bytes, src_port: int, dst_ip: bytes, dst_port: int) -> bytes:
    """A connection's canonical key (lower ip, port first, as kwire.native.tcp_flows.FlowKey): both
    directions, in every file, share it."""
    if (src_ip, src_port) <= (dst_ip, dst_port):
        return src_ip + _PORT(src_port) + dst_ip + _PORT(dst_port)
    return dst_ip + _PORT(dst_port) + src_ip + _PORT(src_port)


class RowBuffer:
    """Rows of WIRE_SCHEMA gathered column by column, taken as RecordBatches."""

    __slots__ = ("columns", "bytes")

    def __init__(self) -> None:
        self.columns: list[list] = [[] for _ in WIRE_SCHEMA]
        self.bytes = 0

    def add(self, part: int, flow: bytes, section: int, forder: int, file: int, n: int, kind: int,
            direction: int = 0, ts: int = 0, size: int = 0, data: bytes | None = None) -> None:
        for column, value in zip(self.columns, (part, flow, section, forder, file, n, kind, direction, ts, size,
                                                data)):
            column.append(value)
        if data is not None:
            self.bytes += len(data)

    def __len__(self) -> int:
        return len(self.columns[0])

    def take(self) -> pa.RecordBatch:
        batch = pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(self.columns, WIRE_SCHEMA)],
                                           schema=WIRE_SCHEMA)
        self.columns = [[] for _ in WIRE_SCHEMA]
        self.bytes = 0
        return batch


def out_batches(out: list[tuple[int, bytes]]) -> list[pa.RecordBatch]:
    """(kind, blob) pairs as OUT_SCHEMA rows (no batch when there are none)."""
    if not out:
        return []
    kinds, blobs = zip(*out)
    return [pa.RecordBatch.from_arrays([pa.array(kinds, pa.int8()), pa.array(blobs, pa.binary())],
                                       schema=OUT_SCHEMA)]


def dumps(value) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


loads = pickle.loads


def table_bytes(table: pa.Table) -> bytes:
    """An Arrow table as one IPC stream (how fact rows ride in one binary cell)."""
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def table_of(blob: bytes) -> pa.Table:
    return pa.ipc.open_stream(blob).read_all()
