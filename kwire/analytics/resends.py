"""Which records of a Produce are read for resends, and which Fetch batches are noted: observations.

A producer that is not idempotent and gets an error answer (or none) may send the same records
again, and the broker may have written them the first time: duplicate_write
(kwire.analytics.findings_resends). Matching a resend needs the records themselves
(kwire.codec.record_prints: CreateTime, key, value and headers), and reading records costs; so only
these batches are read (all their records, up to record_prints' bound):

- a batch of a partition the Produce was answered with an error for, or not answered (a first send
  that may have been written);
- a batch `watch` wants (kwire.analytics.resend_state.ResendState.wants, the state of the
  Aggregator the exchange goes to, asked about every batch in order): one whose header's timestamps
  (BaseTimestamp to MaxTimestamp) span a record of a failed send of the same producer (client id,
  else address) to the same partition within RESEND_WINDOW_MS; and, for a failed send the
  Aggregator did not see (`kwire stats --jobs` and `kwire spark` deal the exchanges to workers in
  chunks of consecutive ones), a connection's first batch to a partition in this Aggregator, or one
  whose records are older than those of a batch the connection sent before (a producer sends its
  records in the order it made them; a resend breaks that order).

Clean traffic reads no record: a look at each batch's header. Batches of idempotent producers (a
producer id and a sequence) are never read: the broker drops their duplicates, and produce_retry
finds their resends by producer id, epoch and sequence. Fetch answers lend ("fb") the CRC and base
offset of each batch of a producer that is not idempotent: a broker stores a v2 batch as it was
sent (the CRC does not cover the base offset), so the batch that carried a record is found again
where a consumer read it, whichever part of the traffic the Fetch fell in.
"""

from __future__ import annotations

from kwire.codec.record_prints import CONTROL, batch_heads, record_prints
from kwire.codec.values import RawRecords
from kwire.native.exchange_enrich import topic_label
from kwire.fields import reduce_by_fields, set_fields
from kwire.kafka.error_codes import error_name
from kwire.model import PAIRED, Exchange
from kwire.analytics import tags as T

RESEND_WINDOW_MS = 300_000
NO_RESPONSE = "no_response"
_UNREAD = object()


def _evidence(ex: Exchange) -> tuple:
    return (ex.ts_ns, ex.client, ex.broker, ex.correlation_id, ex.api)


def _data(records):
    return records.data if isinstance(records, RawRecords) else records


def _answers(ex: Exchange) -> dict | None:
    """(topic, partition) -> (ErrorCode, BaseOffset) of a Produce answer; None when it was not
    answered (Acks 0 aside: {})."""
    if ex.status != PAIRED:
        return None if ex.request.get("Acks") != 0 else {}
    out = {}
    for topic in (ex.response or {}).get("Responses") or ():
        label = topic_label(topic)
        for part in topic.get("PartitionResponses") or ():
            out[(label, part.get("Index"))] = (part.get("ErrorCode") or 0, part.get("BaseOffset"))
    return out


def _outcome(answers: dict | None, key: tuple) -> tuple[str | None, int | None]:
    """(error name, "no_response" or None; the base offset the answer gave, or None)."""
    if answers is None:
        return NO_RESPONSE, None
    code, base = answers.get(key, (0, None))
    return error_name(code) if code else None, base if isinstance(base, int) and base >= 0 else None


class ResendReader:
    """Reads the records of one Produce's batches that kwire.analytics.observe hands it (those of
    producers that are not idempotent, with their header fields) into (T.RESENT_RECORDS, ...) observations:
    a batch whose partition failed, or one `watch` wants (see the module docstring)."""

    __slots__ = ("ex", "watch", "producer", "answers")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, ex: Exchange, watch) -> None:
        self.ex, self.watch = ex, watch
        self.producer = self.ex.client_id or self.ex.client  # (self.ex: compiled, the Exchange read in C)
        self.answers = _UNREAD

    def batch(self, label, index, failed: bool, data, pos: int, head: tuple, out: list) -> None:
        ex, watch = self.ex, self.watch
        wanted = watch is not None and watch.wants(label, index, self.producer, ex.client, head[7], head[8],
                                                   ex.ts_ns, failed)
        if not (failed or wanted):
            return
        prints = record_prints(data, pos, 12 + head[1])
        if not prints:
            return
        if self.answers is _UNREAD:
            self.answers = _answers(ex)
        error, base = _outcome(self.answers, (label, index))
        out.append((T.RESENT_RECORDS, label, index, self.producer, ex.client_id, head[4], error, base, _evidence(ex),
                    tuple(prints)))


def fetched(ex: Exchange, out: list) -> dict | None:
    """(T.FETCHED_BATCH, topic, partition, crc, base offset, evidence) of a Fetch answer's batches of producers
    that are not idempotent. Returns, read in the same walk of the batch headers, what each partition
    delivered: {(topic, partition): (first offset, last offset, whole batches)} of its whole batches
    (control batches left out: no Produce wrote them), or None when none had any (kwire.analytics.end_to_end_read)."""
    response = ex.response
    if not response:
        return None
    ev = None
    spans = None
    for topic in response.get("Responses") or ():
        label = None
        for part in topic.get("Partitions") or ():
            data = _data(part.get("Records"))
            if not data:
                continue
            first = last = -1
            whole = 0
            for pos, size, head in batch_heads(data):
                if head[5] & CONTROL:
                    continue
                if size == 12 + head[1]:  # a whole batch (a broker may end an answer with a cut one)
                    if whole == 0:
                        first = head[0]
                    last = head[0] + head[6]
                    whole += 1
                if head[9] >= 0 and head[11] >= 0:
                    continue
                if ev is None:
                    ev = _evidence(ex)
                if label is None:
                    label = topic_label(topic)
                out.append((T.FETCHED_BATCH, label, part.get("PartitionIndex"), head[4], head[0], ev))
            if whole:
                if spans is None:
                    spans = {}
                spans[(label or topic_label(topic), part.get("PartitionIndex"))] = (first, last, whole)
    return spans
