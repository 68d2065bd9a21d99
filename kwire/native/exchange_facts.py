"""The facts one Exchange contributes to the statistics, as flat rows of plain values.

Owns the extraction from a decoded Exchange; nothing here counts or aggregates:

- `exchange_row(ex)`: one ExchangeRow (kwire.native.exchange_row: an object of fields, and a Mapping of their
  names) of scalars (and one list of error names) per exchange. These are the columns of the Spark job's
  `exchanges` Parquet table (kwire.spark.schemas.EXCHANGE_SCHEMA).
- `partition_rows(ex)`: one PartitionRow (kwire.native.exchange_row) per (topic, partition) the exchange moved
  records for or measured: Fetch (bytes, records, lag), Produce (bytes, records), ShareFetch (bytes, records,
  acquired, redelivered, acknowledgements), ShareAcknowledge (acknowledgements). The `partitions` table.
- `topic_names(ex)`: the (topic id, topic name) pairs a response states side by side (kwire.native.exchange_enrich).

Definitions (the statistics inherit them):
- ts_ns: the exchange's time, its request's capture time (its response's when it has no request).
- latency_ms: response time minus request time, in milliseconds to the nanosecond, paired exchanges
  only (the row also keeps it exactly as integer nanoseconds, `latency_ns`, not a column: the
  analytics' distributions are exact over it).
- request_outcome / response_outcome: what happened to each body, a kind of kwire.outcomes (null:
  no body); request_error / response_error their text when the body was left undecoded;
  request_trailing_bytes / response_trailing_bytes: bytes left after a decoded body; unanswered:
  why a no_response exchange was given up (docs/vocabulary.md).
- error_codes: the Kafka name of every non-zero ErrorCode anywhere in the response (one entry per
  occurrence, sorted); `failed` is kwire.query.has_error (not paired, a malformed body, or an error
  code).
  An ApiVersions answered UNSUPPORTED_VERSION is version negotiation (kwire.native.exchange_kinds):
  `negotiation` true, no error code, not failed.
- wait: a Fetch or ShareFetch answered empty at about its MaxWaitMs (kwire.native.exchange_kinds).
- records: the RecordCount of every whole (not cut), non-control batch of a records field; a legacy
  compressed wrapper is not opened and counts 0. bytes: the size of the records field.
- lag: exchange.extra["lag"] as kwire.native.exchange_enrich computes it (HighWatermark minus the FetchOffset asked).
- acknowledgements: records per AcknowledgeType (one type for the whole batch, or one per offset).
- topic: the topic's label as the bodies give it ("Topic", "TopicName", "Name", then "TopicId"),
  the precedence kwire.native.exchange_enrich uses; ids still unnamed are named later by `Aggregator.document`.
"""

from __future__ import annotations

from kwire.native.exchange_kinds import WAIT_APIS, is_negotiation, is_wait
from kwire.native.exchange_produce import request_partitions
# (ACK_TYPES and the columns are kwire.native.exchange_row's, given here too as before)
from kwire.native.exchange_row import (ACK_COLUMNS, ACK_TYPES, EXCHANGE_COLUMNS, PARTITION_COLUMNS, ExchangeRow,
                                 PartitionRow)
from kwire.codec.marks import message_tree, values
from kwire.native.codec_records import count_records, count_v2_records
from kwire.codec.schema import GROUP_ID
from kwire.codec.values import RawRecords
from kwire.native.exchange_enrich import topic_label, topic_pairs
from kwire.kafka.error_codes import error_name
from kwire.model import PAIRED, Exchange
from kwire.outcomes import DECODED, MALFORMED, error_text, trailing_size
from kwire.native.exchange_errors import response_error_codes

_GROUP_IDS = frozenset({GROUP_ID})


def error_code_names(ex: Exchange, found: list[int] | None = None) -> tuple[list[str], bool]:
    """(error_codes, negotiation): the names of the response's non-zero ErrorCodes, sorted, none for
    a version negotiation (which is the second value). One definition for every output. `found`:
    kwire.native.exchange_errors.error_codes of the response, when the caller has it already."""
    if found is None:
        found = response_error_codes(ex)
    if not found:
        return [], False
    if is_negotiation(ex, found):
        return [], True
    return sorted(map(error_name, found)), False


def exchange_row(ex: Exchange, found: list[int] | None = None) -> ExchangeRow:
    """The exchange's row; `found`: kwire.native.exchange_errors.response_error_codes(ex), when the caller has it."""
    status = ex.status
    request_ts, response_ts = ex.request_ts_ns, ex.response_ts_ns
    latency = None
    if status == PAIRED and request_ts is not None and response_ts is not None:
        latency = response_ts - request_ts
    if found is None:
        found = response_error_codes(ex)
    codes, negotiation = error_code_names(ex, found) if found else ([], False)
    req, resp = ex.request_outcome, ex.response_outcome
    req_kind = None if req is None else req.kind
    resp_kind = None if resp is None else resp.kind
    # kwire.query.has_error: not paired, a malformed body (kwire.native.exchange_build.is_malformed), or an error code
    failed = status != PAIRED or req_kind == MALFORMED or resp_kind == MALFORMED or bool(codes)
    api = ex.api
    request = ex.request
    ts = request_ts if request_ts is not None else response_ts or 0  # Exchange.ts_ns
    client, broker, correlation_id = ex.client, ex.broker, ex.correlation_id
    api_key, version = ex.api_key, ex.api_version
    row = ExchangeRow()  # every name at the value most exchanges have (kwire.native.exchange_row): only the rest are set
    row.ts_ns = ts
    row.request_ts_ns = request_ts
    row.response_ts_ns = response_ts
    row.client = client
    row.broker = broker
    row.client_id = ex.client_id
    row.api_key = api_key
    row.api = api
    row.api_version = version
    row.correlation_id = correlation_id
    row.status = status
    unanswered = ex.unanswered
    if unanswered is not None:
        row.unanswered = unanswered
    if latency is not None:
        row.latency_ms = ns_to_ms(latency)
        row.latency_ns = latency  # not a column: the latency exactly
    row.request_bytes = ex.request_size
    row.response_bytes = ex.response_size
    row.error_codes = codes
    row.failed = failed
    row.request_outcome = req_kind
    row.response_outcome = resp_kind
    if req_kind != DECODED and req is not None:
        row.request_error = error_text(req)
        row.request_trailing_bytes = trailing_size(req)
    if resp_kind != DECODED and resp is not None:
        row.response_error = error_text(resp)
        row.response_trailing_bytes = trailing_size(resp)
    # group_id(ex), not called for an api whose request names no group (most exchanges)
    if request and _GROUP_TREES.get((api_key, version)) != ():
        row.group_id = group_id(ex)
    if api in WAIT_APIS:
        row.wait = is_wait(ex)
    if negotiation:
        row.negotiation = negotiation
    # Not columns (EXCHANGE_COLUMNS): which TCP connection, so that the analytics tell apart two
    # connections a client made from the same port one after the other; the latency exactly (above); the
    # exchange's evidence (kwire.analytics.observe), made once for every table that keeps it.
    row.connection_id = ex.connection_id
    row.evidence = (ts, client, broker, correlation_id, api)  # kwire.analytics.observe.evidence(ex)
    return row


# round(ns / 10**k, k) is ns / 10**k itself for every integer ns (k = 6: ms, 9: s), so these divide and do
# not round (round() writes and reads decimal digits: a hundred times a division). Where doubles near x = ns /
# 10**k lie closer than 10**-k (|x| under 2**33 ms, 2**23 s), ns is an exact double and x the double nearest
# the k-decimal number ns / 10**k, which rounding x to k decimals gives back, and reading it gives x; where
# they lie farther apart, the k-decimal number nearest x is nearer x than any other double, and reading it
# gives x again. tests/native/test_exchange_facts.py holds the two equal over the whole range of int64.


def ns_to_ms(ns: int) -> float:
    """round(ns / 1e6, 6): milliseconds to the nanosecond."""
    return ns / 1e6


def ns_to_s(ns: int) -> float:
    """round(ns / 1e9, 9): seconds to the nanosecond (the deprecated instants in epoch seconds)."""
    return ns / 1e9


_GROUP_TREES: dict[tuple, tuple] = {}  # (api key, version) -> message_tree of its group ids


def group_id(ex: Exchange) -> str | None:
    """The first group id the request names (a field the schema marks as holding one), else None."""
    request = ex.request
    if request:
        key = (ex.api_key, ex.api_version)
        tree = _GROUP_TREES.get(key)
        if tree is None:
            tree = message_tree(ex.api_key, "request", ex.api_version, _GROUP_IDS)
            if len(_GROUP_TREES) < 4096:  # versions come off the wire: bounded
                _GROUP_TREES[key] = tree
        if tree:
            for group in values(request, tree):
                if type(group) is str:
                    return group
    return None


def records_facts(value) -> tuple[int, int]:
    """(bytes, records) of a records field (RawRecords, bytes, or None), in constant memory however
    many batches it holds (count_v2_records, else count_records: nothing kept per batch)."""
    if value is None:
        return 0, 0
    data = value.data if isinstance(value, RawRecords) else value
    size = len(data)
    if not size:
        return 0, 0
    records = count_v2_records(data)  # whole v2 batches: their headers say it all
    if records is None:  # a legacy message, a batch cut at the end, garbage: walked, nothing kept per batch
        records = count_records(data)
    return size, records


def _new_row(ts_ns: int, api: str, group_id, topic: str, partition) -> PartitionRow:
    row = PartitionRow()
    row.ts_ns = ts_ns
    row.api = api
    row.group_id = group_id
    row.topic = topic
    row.partition = partition
    return row


def _count_acks(row: PartitionRow, batches) -> None:
    for batch in batches or ():
        types = batch.get("AcknowledgeTypes") or ()
        first, last = batch.get("FirstOffset"), batch.get("LastOffset")
        if len(types) == 1 and isinstance(first, int) and isinstance(last, int):
            pairs = ((types[0], max(last - first + 1, 0)),)
        else:
            pairs = ((t, 1) for t in types)
        for kind, n in pairs:
            name = ACK_TYPES.get(kind)
            if name is not None:
                row["ack_" + name.lower()] += n


def partition_rows(ex: Exchange) -> list[PartitionRow]:
    api = ex.api
    if api == "Fetch":
        return _fetch_rows(ex)
    if api == "Produce":
        return _produce_rows(ex)
    if api in ("ShareFetch", "ShareAcknowledge"):
        return _share_rows(ex)
    return []


def _fetch_rows(ex: Exchange) -> list[PartitionRow]:
    if not ex.response:
        return []
    lag = {(r["topic"], r["partition"]): r for r in ex.extra.get("lag") or ()}
    rows = []
    ts = ex.ts_ns
    for topic in ex.response.get("Responses") or ():
        label = topic_label(topic)
        for part in topic.get("Partitions") or ():
            index = part.get("PartitionIndex")
            row = _new_row(ts, "Fetch", None, label, index)
            row.bytes, row.records = records_facts(part.get("Records"))
            sample = lag.get((label, index))
            if sample is not None:
                row.fetch_offset = sample["fetch_offset"]
                row.high_watermark = sample["high_watermark"]
                row.lag = sample["lag"]
            rows.append(row)
    return rows


def _produce_rows(ex: Exchange) -> list[PartitionRow]:
    return produce_rows(ex.ts_ns, request_partitions(ex.request))


def produce_rows(ts_ns: int, partitions: list[tuple]) -> list[PartitionRow]:
    """The rows of a Produce's partitions, as kwire.native.exchange_produce.request_partitions read them."""
    rows = []
    for label, index, _, size, records, _ in partitions:
        row = PartitionRow()  # _new_row, inline
        row.ts_ns = ts_ns
        row.api = "Produce"
        row.group_id = None
        row.topic = label
        row.partition = index
        row.bytes = size
        row.records = records
        rows.append(row)
    return rows


def _share_rows(ex: Exchange) -> list[PartitionRow]:
    group = group_id(ex)
    rows: dict[tuple, dict] = {}

    def row_for(label, index):
        key = (label, index)
        row = rows.get(key)
        if row is None:
            row = rows[key] = _new_row(ex.ts_ns, ex.api, group, label, index)
        return row

    if ex.request:
        for topic in ex.request.get("Topics") or ():
            label = topic_label(topic)
            for part in topic.get("Partitions") or ():
                batches = part.get("AcknowledgementBatches")
                if batches:
                    _count_acks(row_for(label, part.get("PartitionIndex")), batches)
    if ex.api == "ShareFetch" and ex.response:
        for topic in ex.response.get("Responses") or ():
            label = topic_label(topic)
            for part in topic.get("Partitions") or ():
                row = row_for(label, part.get("PartitionIndex"))
                row.bytes, row.records = records_facts(part.get("Records"))
        for share in ex.extra.get("share") or ():
            row = row_for(share["topic"], share["partition"])
            row.acquired = share["acquired"]
            row.redelivered = share["redelivered"]
    return list(rows.values())


def topic_names(ex: Exchange) -> list[tuple[str, str]]:
    return topic_pairs(ex.api_key, ex.api_version, ex.response)
