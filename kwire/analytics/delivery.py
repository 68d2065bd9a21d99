"""What the findings need of the records themselves: batches sent twice, transactions, share deliveries.

`DeliveryState` keeps, mergeably (kwire.native.mergeable):
- batches: per Produce batch (producer id, epoch and base sequence; or the batch CRC when the
  producer is not idempotent), how many times it was sent, how many of those sends failed (error
  or no answer), and its first MAX_SENDS sends. At most MAX_BATCHES batches are kept: those with
  the smallest stable hash, so a retried batch is always found when the capture holds fewer
  batches than that, and found in a fixed sample of them beyond;
- transactions: per (topic, partition, producer id) the first and last transactional batch and
  AddPartitionsToTxn; per producer id the moments of its EndTxn, and who it is: its transactional id and
  client (client id, address) as first seen (`producers`; MAX_PRODUCERS producer ids each, the smallest);
- stalls: per (topic, partition, LastStableOffset held) the read_committed fetches that stopped at
  that offset while the HighWatermark was above it: first and last time (of the requests; and the last
  answer to one: `answered_ns`), count, client ids, the
  first and last MAX_EVIDENCE fetches (MAX_STALLS held offsets per partition, the smallest);
- share deliveries: per (group, topic, partition) acknowledgement totals and, for the
  MAX_OFFSETS smallest offsets, each offset's deliveries, highest DeliveryCount and
  acknowledgements by type, with the first MAX_EVIDENCE ShareFetch answers that redelivered;
- resends: records sent again and the batches consumers read (kwire.analytics.resend_state).
"""

from __future__ import annotations

from kwire.native import mergeable as _mergeable  # stable_hash3, capped_get: C calls compiled (delivery.pxd)
from kwire.native.mergeable import Capped, Instants, Kept, first_ns, keep_smallest, last_ns
from kwire.analytics.resend_state import ResendState
from kwire.analytics import tags as T
from kwire.fields import reduce_by_fields, set_fields

MAX_BATCHES = 16384
MAX_SENDS = 4
MAX_PRODUCERS = 4096
MAX_STALLS = 256
MAX_OFFSETS = 4096
MAX_EVIDENCE = 10
MAX_IDS = 20
ACK_NAMES = {0: "gap", 1: "accept", 2: "release", 3: "reject", 4: "renew"}


class Batch:
    __slots__ = ("sends", "failed", "evidence")

    def __init__(self, ev: tuple | None = None, bad: bool = False) -> None:
        """No send, or the first send (its evidence, whether it failed)."""
        self.sends = self.failed = 0
        self.evidence = Kept(MAX_SENDS)
        if ev is not None:
            self.sends = 1
            self.failed = 1 if bad else 0
            self.evidence.items.append((ev[:4], ev))  # Kept.add of the first item

    def merge(self, other: Batch) -> None:
        self.sends += other.sends
        self.failed += other.failed
        self.evidence.merge(other.evidence)

    def __reduce__(self):
        # Not kwire.fields' dict of fields: a stats worker hands over up to MAX_BATCHES of these (with the Kept
        # each holds), and a call of _batch_of with four values unpickles in a fifth of the time. The same bytes
        # compiled or not: _batch_of is found by its name either way.
        return _batch_of, (self.sends, self.failed, self.evidence.limit, self.evidence.items)


def _batch_of(sends, failed, limit, items: list) -> Batch:
    """A pickled Batch, again."""
    batch = Batch.__new__(Batch)
    batch.sends, batch.failed = sends, failed
    evidence = Kept.__new__(Kept)
    evidence.limit, evidence.items = limit, items
    batch.evidence = evidence
    return batch


class Stall:
    __slots__ = ("count", "first_ns", "last_ns", "answered_ns", "high_watermark", "client_ids", "head", "tail")

    def __init__(self) -> None:
        self.count = 0
        self.first_ns = self.last_ns = None
        self.answered_ns = None  # the last answer to such a fetch: when the consumers were last told to wait
        self.high_watermark = 0
        self.client_ids: set = set()
        self.head = Kept(MAX_EVIDENCE)  # the first fetches
        self.tail = Kept(MAX_EVIDENCE)  # the last ones (keys negated)

    def add(self, ts: int, hw: int, client_id, ev: tuple, answered=None) -> None:
        self.count += 1
        self.first_ns, self.last_ns = first_ns(self.first_ns, ts), last_ns(self.last_ns, ts)
        self.answered_ns = last_ns(self.answered_ns, answered)
        self.high_watermark = max(self.high_watermark, hw)
        self._ids({client_id})
        self.head.add(ev[:4], ev)
        self.tail.add((-ev[0],) + ev[1:4], ev)

    def _ids(self, ids: set) -> None:
        self.client_ids |= ids
        if len(self.client_ids) > MAX_IDS:
            self.client_ids = set(sorted(self.client_ids, key=str)[:MAX_IDS])

    def merge(self, other: Stall) -> None:
        self.count += other.count
        self.first_ns, self.last_ns = first_ns(self.first_ns, other.first_ns), last_ns(self.last_ns, other.last_ns)
        self.answered_ns = last_ns(self.answered_ns, other.answered_ns)
        self.high_watermark = max(self.high_watermark, other.high_watermark)
        self._ids(other.client_ids)
        self.head.merge(other.head)
        self.tail.merge(other.tail)


class ShareLog:
    __slots__ = ("acks", "offsets", "evidence", "first_ns", "last_ns")

    def __init__(self) -> None:
        self.acks: dict[str, int] = {}
        self.offsets: dict[int, list[int]] = Capped()  # offset -> [deliveries, max DeliveryCount, accept, release, reject]
        self.evidence = Kept(MAX_EVIDENCE)
        self.first_ns = self.last_ns = None

    def offset(self, offset: int) -> list[int] | None:
        have = self.offsets.get(offset)
        if have is None:
            have = self.offsets[offset] = [0, 0, 0, 0, 0]
            if len(self.offsets) > MAX_OFFSETS:
                keep_smallest(self.offsets, MAX_OFFSETS)
                return self.offsets.get(offset)
        return have

    def merge(self, other: ShareLog) -> None:
        for name, n in other.acks.items():
            self.acks[name] = self.acks.get(name, 0) + n
        for offset, cells in other.offsets.items():
            have = self.offset(offset)
            if have is not None:
                have[0] += cells[0]
                have[1] = max(have[1], cells[1])
                for i in (2, 3, 4):
                    have[i] += cells[i]
        self.evidence.merge(other.evidence)
        self.first_ns, self.last_ns = first_ns(self.first_ns, other.first_ns), last_ns(self.last_ns, other.last_ns)


def _merge(mine: dict, theirs: dict, make, limit: int | None = None) -> None:
    for key, value in theirs.items():
        have = mine.get(key)
        if have is None:
            have = mine[key] = make()
        have.merge(value)
    if limit is not None:
        keep_smallest(mine, limit)


class Span:
    """First and last time of something (a list keeps it small and picklable)."""

    __slots__ = ("first_ns", "last_ns")

    def __init__(self) -> None:
        self.first_ns = self.last_ns = None

    def add(self, ts: int) -> None:
        self.first_ns, self.last_ns = first_ns(self.first_ns, ts), last_ns(self.last_ns, ts)

    def merge(self, other: Span) -> None:
        self.first_ns, self.last_ns = first_ns(self.first_ns, other.first_ns), last_ns(self.last_ns, other.last_ns)


class Producer:
    """Who a producer id is: the first (ts, transactional id) stated for it, and the first (ts, client,
    client id) that used it; each a minimum, so any split merges to the whole."""

    __slots__ = ("txn", "who")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.txn: tuple | None = None
        self.who: tuple | None = None

    def add(self, txn, client_id, client, ts: int) -> None:
        if txn is not None and (self.txn is None or (ts, txn) < self.txn):
            self.txn = (ts, txn)
        who = (ts, client or "", client_id or "")
        if self.who is None or who < self.who:
            self.who = who

    def merge(self, other: Producer) -> None:
        if other.txn is not None and (self.txn is None or other.txn < self.txn):
            self.txn = other.txn
        if other.who is not None and (self.who is None or other.who < self.who):
            self.who = other.who

    def identity(self) -> dict:
        """{transactional_id, client_id, client} (null where unknown)."""
        _, client, client_id = self.who if self.who is not None else (None, None, None)
        return {"transactional_id": self.txn[1] if self.txn else None, "client_id": client_id or None,
                "client": client or None}


class DeliveryState:
    __slots__ = ("batches", "txn_batches", "txn_adds", "end_txns", "stalls", "share", "resends", "producers")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.batches: dict[tuple, Batch] = Capped()  # (hash, topic, partition, key) -> Batch
        self.txn_batches: dict[tuple, Span] = {}  # (topic, partition, producer id)
        self.txn_adds: dict[tuple, Span] = {}
        self.end_txns: dict[int, Instants] = Capped()
        self.stalls: dict[tuple, Stall] = {}  # (topic, partition, lso)
        self.share: dict[tuple, ShareLog] = {}  # (group, topic, partition)
        self.resends = ResendState()
        self.producers: dict[int, Producer] = Capped()  # producer id -> who it is

    def add(self, ob: tuple) -> None:
        tag = ob[0]
        if tag == T.PRODUCE_BATCH:  # the most frequent: every batch of every Produce
            self.produce_batch(ob)
        elif tag == T.RESENT_RECORDS or tag == T.FETCHED_BATCH:
            self.resends.add(ob)
        elif tag in (T.TXN_BATCH, T.TXN_ADD):
            table = self.txn_batches if tag == T.TXN_BATCH else self.txn_adds
            table.setdefault((ob[1], ob[2], ob[3]), Span()).add(ob[4])
        elif tag == T.END_TXN:
            moments = self.end_txns.get(ob[1])
            if moments is None:  # bounded while adding too, not only when merging (an EndTxn flood)
                moments = self.end_txns[ob[1]] = Instants(256)
                keep_smallest(self.end_txns, MAX_PRODUCERS)
            moments.add(ob[2])
        elif tag == T.PRODUCER:
            self._producer(ob)
        elif tag == T.STALLED_FETCH:
            _, topic, partition, ts, lso, hw, client_id, ev, answered = ob
            self.stalls.setdefault((topic, partition, lso), Stall()).add(ts, hw, client_id, ev, answered)
        elif tag == T.SHARE_ACQUIRED:
            self._acquired(ob)
        elif tag == T.SHARE_ACKED:
            self._acknowledged(ob)

    def produce_batch(self, ob: tuple) -> None:
        """`add` of a (T.PRODUCE_BATCH, ...) observation."""
        _, topic, partition, key, ev, bad = ob
        full = (_mergeable.stable_hash3(topic, partition, key), topic, partition, key)
        batches = self.batches
        batch = _mergeable.capped_get(batches, full)
        if batch is None:
            if len(batches) >= MAX_BATCHES and batches.refuses(full, MAX_BATCHES):
                return
            batches[full] = Batch(ev, bad)
            if len(batches) > MAX_BATCHES:
                keep_smallest(batches, MAX_BATCHES)
            return
        batch.sends += 1
        if bad:
            batch.failed += 1
        batch.evidence.add(ev[:4], ev)

    def _producer(self, ob: tuple) -> None:
        _, pid, txn, client_id, client, ts = ob
        if type(pid) is not int:
            return
        have = self.producers.get(pid)
        if have is None:
            have = self.producers[pid] = Producer()
            keep_smallest(self.producers, MAX_PRODUCERS)
            have = self.producers.get(pid)
            if have is None:
                return
        have.add(txn, client_id, client, ts)

    def producer(self, pid) -> dict:
        """{transactional_id, client_id, client} of a producer id (nulls when the capture does not say)."""
        have = self.producers.get(pid) if pid is not None else None
        return have.identity() if have is not None else {"transactional_id": None, "client_id": None, "client": None}

    def _share(self, group, topic, partition) -> ShareLog:
        return self.share.setdefault((group or "", topic, partition), ShareLog())

    def _acquired(self, ob: tuple) -> None:
        _, group, topic, partition, first, last, delivery, ev = ob
        log = self._share(group, topic, partition)
        log.first_ns, log.last_ns = first_ns(log.first_ns, ev[0]), last_ns(log.last_ns, ev[0])
        if delivery and delivery > 1:
            log.evidence.add(ev[:4], ev)
        for offset in range(first, min(last, first + MAX_OFFSETS) + 1):
            cells = log.offset(offset)
            if cells is not None:
                cells[0] += 1
                cells[1] = max(cells[1], delivery or 0)

    def _acknowledged(self, ob: tuple) -> None:
        _, group, topic, partition, first, last, types = ob
        log = self._share(group, topic, partition)
        if first is None or last is None or not types:
            return
        pairs = [(first + i, t) for i, t in enumerate(types)] if len(types) > 1 else \
            [(o, types[0]) for o in range(first, min(last, first + MAX_OFFSETS) + 1)]
        for offset, kind in pairs:
            name = ACK_NAMES.get(kind)
            if name is None:
                continue
            log.acks[name] = log.acks.get(name, 0) + 1
            column = {"accept": 2, "release": 3, "reject": 4}.get(name)
            if column is not None:
                cells = log.offset(offset)
                if cells is not None:
                    cells[column] += 1

    def merge(self, other: DeliveryState) -> None:
        _merge(self.batches, other.batches, Batch, MAX_BATCHES)
        _merge(self.txn_batches, other.txn_batches, Span)
        _merge(self.txn_adds, other.txn_adds, Span)
        for pid, moments in other.end_txns.items():
            self.end_txns.setdefault(pid, Instants(256)).merge(moments)
        keep_smallest(self.end_txns, MAX_PRODUCERS)
        _merge(self.producers, other.producers, Producer, MAX_PRODUCERS)
        _merge(self.stalls, other.stalls, Stall)
        _merge(self.share, other.share, ShareLog)
        self.resends.merge(other.resends)
