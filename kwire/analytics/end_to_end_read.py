"""What end-to-end latency reads from one exchange: offsets written, offsets delivered (observations).

Called by kwire.analytics.observe with what the compiled readers already read, so no body is walked
a second time:

- a Produce partition answered without error is (T.E2E_WRITE, topic, producer, ts, base offset, records,
  create_ms, partition), one flat tuple, made in kwire.analytics.observe's _produce (compiled, where the
  batches are walked): ts the request's capture time (ns), base offset the answer's BaseOffset
  (kwire.native.exchange_produce read_answer's bases), records the request's record count
  (produce_read.request_partitions), create_ms the first batch's BaseTimestamp (the producer's
  clock; -1 when not a v2 batch), producer its client id, else its address.
- `fetch_reads(ex, spans, out)`: a consumer's Fetch answer (a follower's, ReplicaId >= 0, is not a
  consumer): per partition answered, (T.E2E_READ, ts, "fetch", consumer, topic, partition,
  fetch offset, first, last, batches, False); ts the answer's capture time, fetch offset the one the
  request asked (kwire.native.exchange_enrich's lag rows; -1 when unknown), first/last/batches the whole batches the
  answer carried (kwire.analytics.resends.fetched reads them in its walk of the batch headers;
  -1, -1, 0 for an answer without records: it still says where the consumer stands), then the answer's
  correlation id and `leg`, a number for its broker address (zlib's CRC-32 of it): the same answer seen on
  both legs of a relay (a TLS terminator, a proxy) has one correlation id and two legs
  (kwire.analytics.end_to_end_doc keeps one).
- `share_reads(ex, group, out)`: a ShareFetch answer's acquired records: (T.E2E_READ, ts, "share",
  group, topic, partition, -1, first, last, batches, redelivered, correlation id, leg), redelivered when
  DeliveryCount > 1.
  One range of acquired records may span many batches (a share consumer that fell behind is handed
  offsets 8-28, 21 batches, in one range), so batches is what the range can hold of what the partition's
  answer carried: its length in offsets, at most the whole batches of its Records left by the ranges before
  it (plus one a range: a batch split between two ranges counts in both). So an answer claiming huge ranges
  walks no more writes than it carried batches and ranges.

Values from the wire that are not integers where integers belong are left out, so the state
(kwire.analytics.end_to_end) can sort what it keeps.
"""

from __future__ import annotations

from zlib import crc32

from kwire.analytics import tags as T
from kwire.codec.record_prints import CONTROL, batch_heads
from kwire.codec.values import RawRecords
from kwire.native.exchange_enrich import topic_label
from kwire.model import Exchange


def _consumer(ex: Exchange) -> str:
    client_id = ex.client_id
    return client_id if type(client_id) is str and client_id else str(ex.client)


def _leg(ex: Exchange) -> tuple[int, int]:
    """(correlation id, leg): which answer this is, and on which broker address it was seen."""
    broker = ex.broker
    corr = ex.correlation_id
    return (corr if type(corr) is int else -1), (crc32(broker.encode()) if type(broker) is str else 0)


def _follower(request: dict) -> bool:
    replica = request.get("ReplicaId")
    if type(replica) is int and replica >= 0:
        return True
    state = request.get("ReplicaState")
    return type(state) is dict and type(state.get("ReplicaId")) is int and state["ReplicaId"] >= 0


def fetch_reads(ex: Exchange, spans: dict | None, out: list) -> None:
    request = ex.request
    rows = ex.extra.get("lag")
    if not request or not (rows or spans) or _follower(request):
        return
    ts = ex.response_ts_ns or ex.ts_ns
    consumer = _consumer(ex)
    which = _leg(ex)
    seen = None
    for row in rows or ():
        key = (row["topic"], row["partition"])
        span = spans.get(key) if spans else None
        if type(key[1]) is not int or type(key[0]) is not str:
            continue
        if span is None:
            out.append((T.E2E_READ, ts, "fetch", consumer, key[0], key[1], row["fetch_offset"], -1, -1, 0, False)
                       + which)
            continue
        if seen is None:
            seen = set()
        seen.add(key)
        out.append((T.E2E_READ, ts, "fetch", consumer, key[0], key[1], row["fetch_offset"]) + span + (False,) + which)
    if spans:
        for key, span in spans.items():
            if (seen is None or key not in seen) and type(key[1]) is int and type(key[0]) is str:
                out.append((T.E2E_READ, ts, "fetch", consumer, key[0], key[1], -1) + span + (False,) + which)


def _whole_batches(records) -> int:
    """The whole v2 batches of a records field that are not control batches (no Produce wrote those)."""
    data = records.data if isinstance(records, RawRecords) else records
    if not isinstance(data, (bytes, bytearray, memoryview)) or not data:
        return 0
    return sum(1 for _, size, head in batch_heads(data) if not head[5] & CONTROL and size == 12 + head[1])


def share_reads(ex: Exchange, group, out: list) -> None:
    ts = ex.response_ts_ns or ex.ts_ns
    name = group if type(group) is str else "?"
    which = _leg(ex)
    for topic in ex.response.get("Responses") or ():
        label = topic_label(topic)
        for part in topic.get("Partitions") or ():
            index = part.get("PartitionIndex")
            acquired = part.get("AcquiredRecords")
            if type(index) is not int or not acquired:
                continue
            budget = _whole_batches(part.get("Records")) + len(acquired)
            for batch in acquired:
                first, last, count = batch.get("FirstOffset"), batch.get("LastOffset"), batch.get("DeliveryCount")
                if type(first) is int and type(last) is int and 0 <= first <= last:
                    batches = max(1, min(last - first + 1, budget))
                    budget -= batches
                    out.append((T.E2E_READ, ts, "share", name, label, index, -1, first, last, batches,
                                type(count) is int and count > 1) + which)
