"""What one Exchange tells the group and finding analysis, as flat tuples of plain values.

`observations(ex, watch)` returns a list of tuples, each starting with a tag. Like the rows of
kwire.native.exchange_facts they are pure functions of the exchange (and, for the records read after a
failed send, of `watch`: kwire.analytics.resends), picklable, and fed to the
Aggregator (`add(row, partitions, names, observations)`), where kwire.analytics.analysis keeps
them. Group apis are read by kwire.analytics.observe_groups; this module reads the rest:

    ("sw", client, broker, software)              ApiVersions: ClientSoftwareName/Version ("name/version")
    ("pb", topic, partition, key, evidence, bad)  a Produce batch; key: ("pid", producer id, epoch, base
                                                  sequence) or ("crc", crc, -1, -1) when not idempotent; bad:
                                                  its partition was answered with an error or not at all
    ("tx", topic, partition, producer_id, ts)     a transactional Produce batch
    ("ap", topic, partition, producer_id, ts)     AddPartitionsToTxn (v0-v3)
    ("et", producer_id, ts, committed)            EndTxn
    ("pi", producer_id, transactional_id, client_id, client, ts)
                                                  who a producer id is: a transactional Produce's batches,
                                                  and the requests kwire.analytics.producer_read reads
    ("st", topic, partition, ts, lso, hw, client_id, evidence, answered_ts)
                                                  a read_committed Fetch stopped at the LastStableOffset
                                                  while the HighWatermark is above it (answered_ts: its
                                                  answer's time, or None)
    ("sa", group, topic, partition, first, last, delivery_count, evidence)   ShareFetch acquisitions
    ("sk", group, topic, partition, first, last, types)                      acknowledgements the
                                                                             broker took (no error)
    ("th", client_id, broker, throttle_ms, evidence)                         ThrottleTimeMs > 0
    ("pv", side, kind, api, version, client, broker, evidence, where)        trailing bytes, malformed body
                                                                             (where: the decode error)
    ("a0",)                                       a Produce with Acks 0 (no answer expected)
    ("ch", change)                                a change to the cluster (kwire.analytics.changes_read)
    ("pr", client, broker, principal)             the principal a connection authenticated as (SASL)
    ("sl", client_id, throttle_ms, layout, evidence, answered_ts, api_version)
                                                  an answer whose ThrottleTimeMs is SILENCING_MS or more; layout:
                                                  None, or the refusal layout of kwire.codec.version_refusal that a
                                                  client reading the version it asked reads that throttle from
    ("qr", index, event)                          a KRaft quorum event (kwire.analytics.quorum_read)
    ("rs", topic, partition, producer, client_id, crc, error, base_offset, evidence, prints)
                                                  records of a batch of a producer that is not idempotent
                                                  (kwire.analytics.resends says which are read); producer:
                                                  its client id, else its address; error: the answer's
                                                  error name, "no_response", or None; base_offset: the
                                                  answer's or None; prints: ((offset delta,
                                                  CreateTime, fingerprint), ...)
    ("fb", topic, partition, crc, base_offset, evidence)   a batch of a producer that is not idempotent
                                                  in a Fetch answer (where a record sent twice was read)
    ("ew", topic, producer, ts, base_offset, records, create_ms, partition)
    ("er", ts, kind, consumer, topic, partition, fetch_offset, first, last, batches, redelivered)
                                                  offsets written and delivered (kwire.analytics.end_to_end_read)
    ("rb", ...), ("ra", ...), ("rh", ...), ("rl", ...), ("rt", ...), ("ro", ...), ("rg", ...), ("rw", ...)   what the protocol rules read
                                                  (kwire.analytics.rules_read)

An evidence is (ts_ns, client, broker, correlation_id, api): it names an exchange for `kwire inspect`.
"""

from __future__ import annotations

from kwire.native.exchange_enrich import topic_label
from kwire.analytics.changes_read import change_of
from kwire.codec.version_refusal import throttle_read_as_asked
from kwire.analytics.changes_apis import READERS as CHANGE_APIS
from kwire.analytics.end_to_end_read import fetch_reads, share_reads
from kwire.analytics.observe_groups import GROUP_APIS, group_observations
from kwire.native.exchange_produce import read_answer, request_partitions
from kwire.analytics.producer_read import producer_apis, producer_observations
from kwire.analytics.quorum_read import QUORUM_APIS, quorum_events
from kwire.analytics.rules_read import RULE_APIS, broker_closed, rule_observations, throttle_window
from kwire.codec.sasl import principal
from kwire.analytics.resends import ResendReader, fetched
from kwire.model import PAIRED, Exchange
from kwire.outcomes import DECODED, SENDER, TRAILING_BYTES, blames
from kwire.analytics import tags as T
from kwire.analytics.tags import E2E_WRITE, PRODUCE_BATCH


SILENCING_MS = 60_000  # a throttle this long silences a client that honours it (Kafka's own stay within seconds)


def evidence(ex: Exchange) -> tuple:
    return (ex.ts_ns, ex.client, ex.broker, ex.correlation_id, ex.api)


def observations(ex: Exchange, watch=None, row: dict | None = None, produce: tuple | None = None) -> list[tuple]:
    """The observations of one exchange; `watch`: the state of the Aggregator they go to, which says
    which Produce batches after a failed send to read for resends (kwire.analytics.resends); `row`:
    the exchange's kwire.native.exchange_facts row, when the caller has it (its evidence); `produce`: a Produce's
    (partitions, codes, failed, bases) as kwire.native.exchange_produce reads them, when the caller has them."""
    api = ex.api
    out: list[tuple] = []
    if api in GROUP_APIS:
        group_observations(ex, out)
    if api == "Produce":
        _produce(ex, out, watch, produce, row)
    else:
        reader = _READERS.get(api)
        if reader is not None:
            reader(ex, out)
    if api in _PRODUCER_APIS:
        producer_observations(ex, out)
    if api in CHANGE_APIS:
        change = change_of(ex)
        if change is not None:
            out.append((T.CHANGE, change))
    if api in QUORUM_APIS:
        out += [(T.QUORUM_EVENT, i, event) for i, event in enumerate(quorum_events(ex))]
    if api in RULE_APIS:
        rule_observations(ex, out)
    if ex.unanswered is not None and ex.extra:  # connection_closed with its closed_by (kwire.native.exchange_build)
        broker_closed(ex, out)
    response = ex.response
    if response:
        throttle = response.get("ThrottleTimeMs")
        if type(throttle) is int and throttle > 0:
            out.append((T.THROTTLED, ex.client_id, ex.broker, throttle, evidence(ex)))
            throttle_window(ex, throttle, out)
            if throttle >= SILENCING_MS:
                out.append((T.SILENCING, ex.client_id, throttle, None, evidence(ex), ex.response_ts_ns, ex.api_version))
        elif api == "ApiVersions" and "_layout" in response:
            _silencing_refusal(ex, response, out)
    req, resp = ex.request_outcome, ex.response_outcome
    if (req is not None and req.kind != DECODED) or (resp is not None and resp.kind != DECODED):
        _violations(ex, out)
    return out


def _silencing_refusal(ex: Exchange, response: dict, out: list) -> None:
    """A refusal in the mock's layout, read as the version the client asked (the Java client's reading), may carry
    a throttle the answer never meant (kwire.codec.version_refusal)."""
    read = throttle_read_as_asked(response)
    if read is not None and read >= SILENCING_MS and (ex.api_version or 0) >= 3:
        out.append((T.SILENCING, ex.client_id, read, response["_layout"], evidence(ex), ex.response_ts_ns,
                    ex.api_version))


def _violations(ex: Exchange, out: list) -> None:
    """A body the sender wrote against Kafka's schema (a kind that blames the sender: malformed,
    trailing bytes); bodies not kept, cut by the snap length or without a decoder blame nobody. The kind is
    the fault the decoder named (null_not_nullable), else the outcome's. The last item says where: the
    message, the field and the byte decoding stopped at, or the bytes left over."""
    for side, outcome in (("client", ex.request_outcome), ("broker", ex.response_outcome)):
        if outcome is not None and blames(outcome.kind) == SENDER:
            out.append((T.VIOLATION, side, outcome.fault or outcome.kind, ex.api, ex.api_version, ex.client, ex.broker, evidence(ex),
                        _where(ex, side, outcome)))


def _where(ex: Exchange, side: str, outcome) -> str:
    if outcome.kind == TRAILING_BYTES:
        return f"{outcome.size} bytes left after the body"
    message = f"{ex.api}{'Request' if side == 'client' else 'Response'} v{ex.api_version}"
    at = f" (at byte {outcome.offset})" if outcome.offset is not None else ""
    return f"{message}: {outcome.field or 'the body'}: {outcome.reason}{at}"


def sasl_principal(ex: Exchange) -> tuple | None:
    """(T.PRINCIPAL, client, broker, principal) of a SaslAuthenticate the broker accepted, else None."""
    request, response = ex.request, ex.response
    if ex.api != "SaslAuthenticate" or not request or not response or response.get("ErrorCode"):
        return None
    name = principal(request.get("AuthBytes"))
    return (T.PRINCIPAL, ex.client, ex.broker, name) if name else None


def _sasl(ex: Exchange, out: list) -> None:
    found = sasl_principal(ex)
    if found is not None:
        out.append(found)


def _software(ex: Exchange, out: list) -> None:
    request = ex.request
    if request and request.get("ClientSoftwareName"):
        name = f"{request.get('ClientSoftwareName')}/{request.get('ClientSoftwareVersion') or '?'}"
        out.append((T.SOFTWARE, ex.client, ex.broker, name))


def _produce(ex: Exchange, out: list, watch=None, read: tuple | None = None, row: dict | None = None) -> None:
    """`read`: (partitions, codes, failed, bases) of kwire.native.exchange_produce, when the caller has them;
    `row`: the exchange's row (its evidence)."""
    request = ex.request
    if not request:
        return
    if read is None:
        read = (request_partitions(request),) + read_answer(ex)
    partitions, _, failed, bases = read
    acks = request.get("Acks")
    if acks == 0:
        out.append((T.NO_ANSWER_EXPECTED,))
    if ex.status != PAIRED:  # not answered: every partition failed (acks=0 aside: no answer expected)
        failed = True if acks != 0 else set()
    reads = watch is not None or bool(failed)  # batches of producers that are not idempotent: resends
    reader = None  # the ResendReader, made at the first such batch
    ev = None  # one tuple for every batch of the exchange
    producer = None
    for label, index, data, _, count, batches in partitions:
        if not batches:
            continue
        if ev is None:
            ev = row["evidence"] if row is not None else evidence(ex)
        bad = failed is True or (bool(failed) and (label, index) in failed)
        if bases and not bad and count:  # offsets written (kwire.analytics.end_to_end_read), read in C here
            for written in bases:
                if written[1] == index and written[0] == label and type(index) is int:
                    head = batches[0][4]
                    if producer is None:
                        producer = ex.client_id or ex.client
                    out.append((E2E_WRITE, label, producer, ev[0], written[2], count,
                                head[7] if head is not None else -1, index))
                    break
        transactions = None  # a producer's batches of one exchange are one moment: one "tx"
        for key, pid, transactional, pos, head in batches:
            out.append((PRODUCE_BATCH, label, index, key, ev, bad))
            if reads and head is not None and key[0] == "crc":
                if reader is None:
                    reader = ResendReader(ex, watch)
                reader.batch(label, index, bad, data, pos, head, out)
            if transactional and pid >= 0 and (transactions is None or pid not in transactions):
                if transactions is None:
                    transactions = set()
                transactions.add(pid)
                out.append((T.TXN_BATCH, label, index, pid, ex.ts_ns))
                txn = request.get("TransactionalId")
                out.append((T.PRODUCER, pid, txn if type(txn) is str else None, ex.client_id, ex.client, ex.ts_ns))


def _fetch(ex: Exchange, out: list) -> None:
    fetch_reads(ex, fetched(ex, out), out)
    fetch = ex.extra.get("fetch")
    if not fetch or fetch.get("isolation_level") != "read_committed":
        return
    for row in ex.extra.get("lag") or ():
        lso = row.get("last_stable_offset")
        if lso is not None and lso < row["high_watermark"] and row["fetch_offset"] >= lso:
            out.append((T.STALLED_FETCH, row["topic"], row["partition"], ex.ts_ns, lso, row["high_watermark"], ex.client_id,
                        evidence(ex), ex.response_ts_ns))


def _add_partitions(ex: Exchange, out: list) -> None:
    request = ex.request
    if not request:
        return
    pid = request.get("V3AndBelowProducerId")
    if pid is not None:
        for topic in request.get("V3AndBelowTopics") or ():
            for partition in topic.get("Partitions") or ():
                out.append((T.TXN_ADD, topic.get("Name"), partition, pid, ex.ts_ns))
    for txn in request.get("Transactions") or ():
        for topic in txn.get("Topics") or ():
            for partition in topic.get("Partitions") or ():
                out.append((T.TXN_ADD, topic.get("Name"), partition, txn.get("ProducerId"), ex.ts_ns))


def _end_txn(ex: Exchange, out: list) -> None:
    request = ex.request
    if request and request.get("ProducerId") is not None:
        out.append((T.END_TXN, request["ProducerId"], ex.ts_ns, bool(request.get("Committed"))))


def _ack_refused(ex: Exchange) -> set | None:
    """(topic, partition) whose acknowledgements the broker refused (an error code for them), or None
    when the request was not answered (none of them counts)."""
    if ex.status != PAIRED or not ex.response:
        return None
    field = "AcknowledgeErrorCode" if ex.api == "ShareFetch" else "ErrorCode"
    refused = set()
    for topic in ex.response.get("Responses") or ():
        for part in topic.get("Partitions") or ():
            if part.get(field):
                refused.add((topic_label(topic), part.get("PartitionIndex")))
    if ex.response.get("ErrorCode"):  # the whole request refused (its body may not have decoded)
        refused = {(topic_label(t), p.get("PartitionIndex")) for t in (ex.request or {}).get("Topics") or ()
                   for p in t.get("Partitions") or ()}
    return refused


def _share(ex: Exchange, out: list) -> None:
    request = ex.request or {}
    group = request.get("GroupId")
    refused = _ack_refused(ex)
    for topic in request.get("Topics") or ():
        label = topic_label(topic)
        for part in topic.get("Partitions") or ():
            if refused is None or (label, part.get("PartitionIndex")) in refused:
                continue
            for batch in part.get("AcknowledgementBatches") or ():
                out.append((T.SHARE_ACKED, group, label, part.get("PartitionIndex"), batch.get("FirstOffset"),
                            batch.get("LastOffset"), tuple(batch.get("AcknowledgeTypes") or ())))
    if ex.api != "ShareFetch" or not ex.response:
        return
    share_reads(ex, group, out)
    for topic in ex.response.get("Responses") or ():
        label = topic_label(topic)
        for part in topic.get("Partitions") or ():
            for batch in part.get("AcquiredRecords") or ():
                out.append((T.SHARE_ACQUIRED, group, label, part.get("PartitionIndex"), batch.get("FirstOffset"),
                            batch.get("LastOffset"), batch.get("DeliveryCount"), evidence(ex)))


_PRODUCER_APIS = producer_apis()

_READERS = {
    "ApiVersions": _software,
    "Fetch": _fetch,
    "AddPartitionsToTxn": _add_partitions,
    "EndTxn": _end_txn,
    "ShareFetch": _share,
    "ShareAcknowledge": _share,
    "SaslAuthenticate": _sasl,
}
