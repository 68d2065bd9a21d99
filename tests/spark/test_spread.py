"""kwire.spark.spread: a busy connection's exchanges leave the reduce task undecoded and are decoded by
every task of the decode stage, and the document, the counters and the fact rows come out the same
as when the reduce task decodes them itself, and as `kwire stats`'."""

from __future__ import annotations

import gzip
import struct
from collections import Counter
from pathlib import Path

import pyarrow as pa

from kwire.native.kafka_pairing import RawExchange
from kwire.native.exchange_sink import offloadable
from kwire.parallel import BATCH
from kwire.native.exchange_wire import pack, unpack
from kwire.pipeline import analyze_files
from kwire.spark.job import dealt, partition_keys
from kwire.spark.results import DecodeOptions
from kwire.spark.spread import Decoder, RawBatches
from kwire.spark.wire import OUT_DDL, OUT_SCHEMA, RAWS, RESULT, ROUTED, XROWS, loads, out_batches, table_of
from tests.spark.inprocess import run_in_process
from tests.spark.rotate import classic_pcap, rotate
from tests.spark.test_stitching import assert_same, stats_document

# 10,000 packets of a real busy producer, 3,038 Produce exchanges on one connection (tests/kafka)
BUSY = Path(__file__).parents[1] / "kafka" / "data" / "midstream-busy-producer.pcap.gz"


def busy_files(tmp_path: Path, packets: int = 1500) -> list[Path]:
    """The busy recording (a pcapng) rotated into classic pcap files of `packets` packets each: its one
    connection crosses every file edge."""
    whole = tmp_path / "busy.pcapng"
    whole.write_bytes(gzip.decompress(BUSY.read_bytes()))
    files = rotate(classic_pcap(whole, tmp_path / "busy.pcap"), tmp_path / "files", packets)
    assert len(files) == -(-10_000 // packets)
    return files


def test_a_busy_connection_is_decoded_in_the_decode_stage(tmp_path):
    paths = busy_files(tmp_path)
    result, reducers = run_in_process(paths, parts=3, spread=True)
    assert_same(result.aggregator.document(), stats_document(paths))
    assert result.exchanges == 3038 and result.decode_errors == 0
    # the reduce tasks counted none of the Produce exchanges themselves: they shipped them
    assert sum(r.facts.aggregator.document()["totals"]["exchanges"] for r in reducers) == 0
    assert sum(r.result.exchanges for r in reducers) == 3038  # (but paired them, and counted them so)


def test_spread_or_not_the_same_result_and_rows(tmp_path):
    paths = busy_files(tmp_path, packets=700)
    rows = DecodeOptions(rows=True)
    spread, _ = run_in_process(paths, parts=4, options=rows, spread=True)
    whole, _ = run_in_process(paths, parts=4, options=rows, spread=False)
    assert spread.aggregator.document() == whole.aggregator.document()
    for name in ("connections", "exchanges", "paired", "no_response", "no_request", "decode_errors", "tcp", "kafka"):
        assert getattr(spread, name) == getattr(whole, name), name


def test_decode_stage_deals_batches_evenly_and_passes_other_rows_on(tmp_path):
    raws = [raw for raw in analyze_files(busy_files(tmp_path), offload=offloadable) if type(raw) is RawExchange]
    assert len(raws) == 3038
    batches = RawBatches()
    for raw in raws:
        batches.add(raw)
    full = batches.take()
    batches.flush()
    last = batches.take()
    whole = 3038 // BATCH
    assert [len(unpack(b)) for _, b in full] == [BATCH] * whole and len(unpack(last[0][1])) == 3038 - whole * BATCH
    # one producer's Produce exchanges: one shard's batches (kwire.spark.job.dealt deals them all to one task)
    assert len({kind for kind, _ in full + last}) == 1 and full[0][0] >= ROUTED
    kind_of = dict((b, k) for k, b in full + last)
    blobs = [b for _, b in full + last]
    decoders = [Decoder(DecodeOptions(rows=True)) for _ in range(3)]
    out = []
    for i, blob in enumerate(blobs + [b"a result row"]):
        kind = kind_of.get(blob, RESULT)
        rows = pa.RecordBatch.from_arrays([pa.array([kind], pa.int8()), pa.array([blob], pa.binary())],
                                          schema=OUT_SCHEMA)
        out += decoders[i % 3].batch(rows)
    kinds = Counter()
    exchange_rows = 0
    for batch in out:
        for kind, blob in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
            kinds[kind] += 1
            if kind == XROWS:
                exchange_rows += table_of(blob).num_rows
            if kind == RESULT:
                assert blob == b"a result row"  # handed on untouched
    assert kinds[RESULT] == 1 and exchange_rows == 3038
    ends = [decoder.end() for decoder in decoders]
    assert all(len(end) == 1 for end in ends)  # each decoded some: each has a result
    results = [loads(end[0].column(1)[0].as_py()) for end in ends]
    counted = [r.aggregator.document()["totals"]["exchanges"] for r in results]
    assert sum(counted) == 3038 and min(counted) >= BATCH


def test_decode_errors_are_counted_where_the_bodies_are_decoded(tmp_path):
    raws = [raw for raw in analyze_files(busy_files(tmp_path), offload=offloadable) if type(raw) is RawExchange]
    batches = RawBatches()
    for raw in raws[:10]:
        batches.add(raw)
    batches.flush()
    ((kind, blob),) = batches.take()
    parts = unpack(blob)
    body = parts[3][11]  # ExchangeParts.request_body: cut short, the Produce request cannot decode
    half = body[:len(body) // 2]  # (its size too: a body shorter than its frame is a capture's cut, not an error)
    parts[3] = parts[3][:10] + (len(half) + 4, half) + parts[3][12:]
    decoder = Decoder(DecodeOptions())
    decoder.batch(pa.RecordBatch.from_arrays([pa.array([kind], pa.int8()), pa.array([pack(parts)])],
                                             schema=OUT_SCHEMA))
    (end,) = decoder.end()
    result = loads(end.column(1)[0].as_py())
    assert result.decode_errors == 1
    assert result.aggregator.document()["totals"]["exchanges"] == 10



def test_each_decode_task_gets_a_reduce_task_rows_in_the_order_they_left_it(spark):
    """A decode task's Aggregator must meet a connection's exchanges in capture order (which Produce
    batches it reads for resends depends on it: kwire.analytics.resend_state), and all of a shard's Produce
    exchanges. Spark's round robin sorts the rows before it deals them; `dealt` puts each reduce task's rows
    back in order, and deals the rows of shard s (kind ROUTED + s) to task s % 4."""
    def reduce_tasks(batches):
        for batch in batches:
            for task in batch.column(0).to_pylist():
                yield from out_batches([(RAWS if row % 3 else ROUTED + row % 5, struct.pack(">II", task, row))
                                        for row in range(300)])

    def seen(batches):
        from pyspark import TaskContext

        at = TaskContext.get().partitionId()
        got = [blob for batch in batches for blob in batch.column(1).to_pylist()]
        yield pa.RecordBatch.from_arrays([pa.array([at] * len(got), pa.int32()), pa.array(got, pa.binary())],
                                         names=["at", "data"])

    results = spark.range(0, 3, 1, 3).mapInArrow(reduce_tasks, OUT_DDL)
    rows = dealt(results, 4, partition_keys(spark, 4)).mapInArrow(seen, "at int, data binary").collect()
    order: dict = {}
    for at, blob in rows:
        task, row = struct.unpack(">II", blob)
        order.setdefault((at, task), []).append(row)
        assert row % 3 or at == (row % 5) % 4
    assert sum(len(v) for v in order.values()) == 900 and len({at for at, _ in order}) == 4
    assert all(rows == sorted(rows) for rows in order.values())
