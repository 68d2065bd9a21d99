"""The decode stage of `kwire spark`: one busy connection's exchanges decoded by many tasks.

A connection is reassembled, decrypted and paired by one reduce task (kwire.spark.stitch): its bytes
must meet the stream layers in order. Decoding the bodies and counting them is most of what remains,
and needs nothing but each exchange's own bytes for the exchanges kwire.native.exchange_sink.offloadable picks (the
enricher needs none of them, their frames are small), so, as `kwire stats --jobs` does in process,
the reduce task leaves those undecoded (DecodeOptions.pipeline(spread=True)) and ships them in batches:

    reduce task   Facts.add(RawExchange)  --RawBatches-->  RAWS rows (a packed batch: kwire.native.exchange_wire)
                  --repartition(d), round robin-->         every task a like share of the batches, in
                                                           the order they left their reduce task; those of
                                                           one shard's Produce exchanges to one task
    decode task   decode_stage: RAWS -> Exchanges -> facts, a PartitionResult; other rows pass on

Aggregators merge exactly in any order (kwire.analytics.aggregate), so where an exchange is counted
does not change the document, as long as each task meets a connection's exchanges in capture order
(which Produce batches are read for resends depends on it: kwire.analytics.resends); Spark's round
robin sorts the rows before dealing them, so kwire.spark.job.dealt carries their order across. A
producer's Produce exchanges are batched apart, by its shard (kwire.parallel.produce_shard, as `kwire stats
--jobs` deals them to its workers), and dealt all to one decode task, so what one task reads for resends
depends on nothing another saw (each connection in capture order; connections of one producer in the order
their reduce tasks and flow keys give). Without it, the reduce stage lasts as long as the busiest connection:
one task decodes all of it while the other cores idle. A batch is packed by the kwire task that
built it and read by another kwire task of the same job (as kwire.parallel's batches between kwire's
own processes): ints, strings and bytes in kwire.native.exchange_wire's format; captured bytes stay bytes values.
"""

from __future__ import annotations

import pyarrow as pa

from kwire.gc_policy import settle_gc
from kwire.native.kafka_pairing import RawExchange
from kwire.parallel import BATCH, BATCH_BYTES, decode_packed, produce_shard
from kwire.native.exchange_wire import PartsWriter
from kwire.spark.results import DecodeOptions, Facts, PartitionResult
from kwire.spark.wire import RESULT, dumps, is_raws, out_batches, raws_kind


class RawBatches:
    """RawExchanges in, (kind, blob) rows out: batches of at most BATCH exchanges or BATCH_BYTES of frames, a
    shard's Produce exchanges apart (kind ROUTED + shard), every other exchange together (RAWS)."""

    def __init__(self) -> None:
        self.batches: dict[int | None, PartsWriter] = {}  # shard (None: the others) -> its batch in progress
        self.blobs: list[tuple[int, bytes]] = []

    def add(self, raw: RawExchange) -> None:
        shard = produce_shard(raw)
        batch = self.batches.get(shard)
        if batch is None:
            batch = self.batches[shard] = PartsWriter()
        batch.add(raw)
        if batch.rows >= BATCH or batch.frame_bytes >= BATCH_BYTES:
            self._out(shard)

    def _out(self, shard: int | None) -> None:
        self.blobs.append((raws_kind(shard), self.batches.pop(shard).getvalue()))

    def flush(self) -> None:
        for shard in sorted(self.batches, key=lambda s: -1 if s is None else s):
            self._out(shard)

    def take(self) -> list[tuple[int, bytes]]:
        """The full batches made since the last take, as (kind, blob) rows."""
        blobs, self.blobs = self.blobs, []
        return blobs


class Decoder:
    """One decode task: RAWS rows decoded and counted, every other row handed on as it came."""

    def __init__(self, options: DecodeOptions):
        self.facts = Facts(options)
        self.result = PartitionResult(self.facts.aggregator)
        self.batches = 0

    def batch(self, batch: pa.RecordBatch) -> list[pa.RecordBatch]:
        kinds = batch.column(0).to_pylist()
        if not any(is_raws(kind) for kind in kinds):
            return [batch]
        out = []
        for kind, blob in zip(kinds, batch.column(1).to_pylist()):
            if not is_raws(kind):
                out.append((kind, blob))
                continue
            exchanges, errors = decode_packed(blob)
            self.result.decode_errors += errors
            self.facts.add(exchanges)
            self.batches += 1
        return out_batches(out + self.facts.take_out())

    def end(self) -> list[pa.RecordBatch]:
        """The task's PartitionResult, when it decoded anything."""
        return out_batches([(RESULT, dumps(self.result))]) if self.batches else []


def decode_stage(options: DecodeOptions):
    """The decode stage as a mapInArrow function (OUT_SCHEMA rows in, OUT_SCHEMA rows out)."""
    def decode(batches):
        settle_gc(collect=True)
        decoder = Decoder(options)
        for batch in batches:
            yield from decoder.batch(batch)
        yield from decoder.end()

    return decode
