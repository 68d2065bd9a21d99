"""The records sent again and the batches consumers read: the mergeable state behind duplicate_write.

`ResendState` keeps (kwire.native.mergeable), from the observations of kwire.analytics.resends:
- records: per (fingerprint, topic, partition, producer) of a record with a failed send (an error
  answer or none), the first MAX_SENDS sends of that record (by time): (ts, client id, batch CRC,
  offset delta, error, offset the broker gave or None, evidence). At most MAX_RECORDS records: those
  with the smallest fingerprints (a 64-bit hash), so a record's sends are kept together or not at
  all, whatever the split; `sampled` says whether records of failed sends were left out. Failed sends
  are read whatever the split, so which records are kept depends on nothing else;
- unmatched: the same for records read with no failed send seen here (a resend whose failure fell in
  another part of a split traffic, or a batch read to look for one, `wants`): which of these are
  read depends on the split, so they never take a place in `records`; a record of `records` takes
  its sends from both (`sends`). At most MAX_RECORDS, the smallest, and, once `records` is full,
  none larger than the largest it keeps (such a record cannot be kept there, whatever comes later).
  A part that reads more than MAX_RECORDS of these below that bound is where a split could count
  differently (docs/findings-duplicate-write.md);
- fetched: per (batch CRC, topic, partition) the MAX_COPIES smallest base offsets a Fetch answer
  showed that batch at, each with the first Fetch that did. At most MAX_FETCHED batches, the
  smallest CRCs;
- pending and newest: what `wants` answers from (which batches kwire.analytics.resends reads): per
  (topic, partition, producer), the CreateTime ranges of the records of its failed sends (at most MAX_RANGES:
  past it the two nearest ranges become one, so more batches are read and none of a held failure is missed)
  until the window after its latest failure is over; per (topic, partition, connection, producer) the latest
  first CreateTime of its batches. They decide what is read, not what is found (a read record counts only
  with a failed send of it): merged as unions. Their caps are per shard: a producer (client id, else address)
  belongs to one of SHARDS shards by a stable hash of its name (`shard_of`), and a shard holds at most
  MAX_PENDING producers' partitions waiting (the one whose latest failure is the oldest goes) and MAX_CONNECTIONS
  connections' partitions (the first seen). So what one shard reads depends on its producers' batches alone,
  in their order: `kwire stats --jobs` deals each shard's Produce exchanges to one worker
  (kwire.parallel.FoldedBatches), `kwire spark` to one decode task, and every split reads what one
  Aggregator fed everything reads.
Fingerprints only: no key, value or header of a record is kept.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from kwire.native.mergeable import Capped, Kept, keep_smallest, stable_hash
from kwire.analytics import tags as T
from kwire.fields import reduce_by_fields, set_fields

MAX_RECORDS = 16384
MAX_FETCHED = 16384
MAX_SENDS = 4
MAX_COPIES = 4
SHARDS = 16  # producers dealt by a stable hash of their name; the caps below are per shard
MAX_PENDING = 256  # (topic, partition, producer) with failed sends waiting, per shard
MAX_RANGES = 32  # CreateTime ranges of the failed sends of one (topic, partition, producer)
MAX_CONNECTIONS = 4096  # (topic, partition, connection, producer) whose latest first CreateTime is kept, per shard
WINDOW_NS = 300_000 * 1_000_000  # kwire.analytics.resends.RESEND_WINDOW_MS


class Sends:
    """The first MAX_SENDS sends of one record."""

    __slots__ = ("kept",)

    def __init__(self) -> None:
        self.kept = Kept(MAX_SENDS)

    def add(self, send: tuple) -> None:
        ev = send[-1]
        self.kept.add(ev[:4] + (send[2], send[3]), send)

    def merge(self, other: Sends) -> None:
        self.kept.merge(other.kept)

    def values(self) -> list[tuple]:
        return self.kept.values()


class Copies:
    """Base offsets a batch was read at, each with the first Fetch that read it there."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at: dict[int, tuple] = {}

    def add(self, base_offset: int, ev: tuple) -> None:
        have = self.at.get(base_offset)
        if have is None or ev < have:
            self.at[base_offset] = ev
            keep_smallest(self.at, MAX_COPIES)

    def merge(self, other: Copies) -> None:
        for base_offset, ev in other.at.items():
            self.add(base_offset, ev)


def _bounded(table: Capped, key: tuple, make, limit: int):
    """The entry of `key` (made when new), or None when the cap leaves it out."""
    have = table.get(key)
    if have is None:
        if table.refuses(key, limit):
            return None
        have = table[key] = make()
        if len(table) > limit:
            keep_smallest(table, limit)
            have = table.get(key)
    return have


_SHARDS: dict = {}  # producer -> shard_of(producer), for the producers seen lately


def shard_of(producer) -> int:
    """The shard of a producer (its client id, else its address): the same in every process."""
    shard = _SHARDS.get(producer)
    if shard is None:
        shard = stable_hash(producer) % SHARDS
        if len(_SHARDS) >= 4096:  # producers come off the wire: bounded
            _SHARDS.clear()
        _SHARDS[producer] = shard
    return shard


class ResendState:
    __slots__ = ("records", "unmatched", "sampled", "fetched", "pending", "waiting", "newest", "connections")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.records: dict[tuple, Sends] = Capped()  # (fingerprint, topic, partition, producer), failed
        self.unmatched: dict[tuple, Sends] = Capped()  # the same key, no failed send seen here
        self.sampled = False  # records of failed sends left out of `records`
        self.fetched: dict[tuple, Copies] = Capped()  # (crc, topic, partition)
        self.pending: dict[tuple, Pending] = {}  # (topic, partition, producer)
        self.waiting: list[dict] = [{} for _ in range(SHARDS)]  # per shard: its keys of `pending` -> latest failure
        self.newest: dict[tuple, int] = {}  # (topic, partition, client address, producer) -> latest first CreateTime
        self.connections = [0] * SHARDS  # keys of `newest` per shard

    def wants(self, topic, partition, producer, client, first_ms: int, max_ms: int, ts_ns: int,
              failed: bool = False) -> bool:
        """Should this batch (of a producer that is not idempotent) be read for resends? Yes when its
        records were created from first_ms to max_ms and that spans a record of a failed send of
        `producer` to (topic, partition) within the window (the failure was seen here); or, for a
        failure this state may not have seen (another part of a split traffic), when it is the first
        batch of its connection (`client`) to (topic, partition) seen here, or its records are older
        than the first record of a batch the connection sent before (a producer sends its records in
        the order they were made, a resend breaks it). Every batch is to be asked about, in order
        (a `failed` one only to note its order). Only the state of the producer's shard is read."""
        newest = self.newest
        key = (topic, partition, client, producer)
        before = newest.get(key)
        if before is None:
            shard = shard_of(producer)
            if self.connections[shard] < MAX_CONNECTIONS:
                newest[key] = first_ms
                self.connections[shard] += 1
            return True
        if first_ms > before:
            newest[key] = first_ms
        elif first_ms < before:
            return True
        if failed or not self.pending:  # no failed send to span: the common case, no look-up
            return False
        pending = self.pending.get((topic, partition, producer))
        if pending is None:
            return False
        if ts_ns - pending.last_failure > WINDOW_NS:
            self._drop((topic, partition, producer))  # every failure of it is older than the window
            return False
        return pending.spans(first_ms, max_ms)

    def _pend(self, topic, partition, producer, error, ts_ns: int, prints) -> None:
        if error is None:
            return
        key = (topic, partition, producer)
        created = [c for _, c, _ in prints]
        pending = self.pending.get(key)
        if pending is not None:
            pending.add(min(created), max(created), ts_ns)
            self.waiting[pending.shard][key] = pending.last_failure
            return
        pending = self._pending(key, shard_of(producer))
        pending.add(min(created), max(created), ts_ns)
        self.waiting[pending.shard][key] = pending.last_failure
        self._trim(pending.shard)

    def _pending(self, key: tuple, shard: int) -> Pending:
        pending = self.pending[key] = Pending(shard)
        self.waiting[shard][key] = 0
        return pending

    def _drop(self, key: tuple) -> None:
        del self.waiting[self.pending.pop(key).shard][key]

    def _trim(self, shard: int) -> None:
        """At most MAX_PENDING keys of `shard`: past it, the one whose latest failure is the oldest goes (ties:
        the first made)."""
        keys = self.waiting[shard]
        if len(keys) > MAX_PENDING:
            self._drop(min(keys, key=keys.__getitem__))

    def add(self, ob: tuple) -> None:
        if ob[0] == T.RESENT_RECORDS:
            _, topic, partition, producer, client_id, crc, error, base, ev, prints = ob
            self._pend(topic, partition, producer, error, ev[0], prints)
            for delta, _, print_ in prints:
                sends = self._sends((print_, topic, partition, producer), error is not None)
                if sends is not None:
                    offset = base + delta if base is not None else None
                    sends.add((ev[0], client_id, crc, delta, error, offset, ev))
        elif ob[0] == T.FETCHED_BATCH:
            _, topic, partition, crc, base_offset, ev = ob
            copies = _bounded(self.fetched, (crc, topic, partition), Copies, MAX_FETCHED)
            if copies is not None:
                copies.add(base_offset, ev)

    def _sends(self, key: tuple, failed: bool) -> Sends | None:
        """Where a send of the record `key` goes: `records` when it failed or the record has a failed
        send there, else `unmatched` (None: the caps leave it out)."""
        records = self.records
        if failed:
            have = records.get(key)
            if have is None:
                if len(records) >= MAX_RECORDS:  # full: this record or another is left out
                    self.sampled = True
                have = _bounded(records, key, Sends, MAX_RECORDS)
            return have
        have = records.get(key)
        if have is not None:
            return have
        if records.refuses(key, MAX_RECORDS):
            return None  # larger than every record `records` keeps, full: never one of them
        return _bounded(self.unmatched, key, Sends, MAX_RECORDS)

    def sends(self, key: tuple) -> list[tuple]:
        """The first MAX_SENDS sends of the record `key` of `records`, with those `unmatched` holds."""
        sends = self.records[key]
        more = self.unmatched.get(key)
        if more is None:
            return sends.values()
        both = Sends()
        both.merge(sends)
        both.merge(more)
        return both.values()

    def merge(self, other: ResendState) -> None:
        for table, theirs, make, limit in ((self.records, other.records, Sends, MAX_RECORDS),
                                           (self.unmatched, other.unmatched, Sends, MAX_RECORDS),
                                           (self.fetched, other.fetched, Copies, MAX_FETCHED)):
            for key, value in theirs.items():
                have = table.get(key)
                if have is None:
                    have = table[key] = make()
                have.merge(value)
            if table is self.records:
                self.sampled = self.sampled or other.sampled or len(table) > limit
            keep_smallest(table, limit)
        if len(self.records) >= MAX_RECORDS:  # what `records` can no longer keep leaves `unmatched`
            top = max(self.records)
            keep_smallest(self.unmatched, sum(1 for key in self.unmatched if key <= top))
        self._merge_watch(other)

    def _merge_watch(self, other: ResendState) -> None:
        """What decides which batches are read, merged as unions within each shard's caps."""
        newest, connections = self.newest, self.connections
        for key, first_ms in other.newest.items():
            have = newest.get(key)
            if have is not None:
                newest[key] = max(have, first_ms)
                continue
            shard = shard_of(key[3])
            if connections[shard] < MAX_CONNECTIONS:
                newest[key] = first_ms
                connections[shard] += 1
        for key, theirs in other.pending.items():
            have = self.pending.get(key)
            if have is None:
                have = self._pending(key, theirs.shard)
            have.merge(theirs)
            self.waiting[have.shard][key] = have.last_failure
            self._trim(have.shard)

    def watch_copy(self) -> ResendState:
        """A state that chooses what this one would from here on, and counts nothing: the same batches read
        (pending, newest) and the same records of failed sends (their keys, no sends), so that a resend of
        one goes where it would go here. What a worker of `kwire stats --jobs` carries from one Aggregator it
        hands over to the next (kwire.parallel.FoldedBatches)."""
        copy = ResendState()
        for key in self.records:
            copy.records[key] = Sends()
        copy.newest = dict(self.newest)
        copy.connections = list(self.connections)
        for key, pending in self.pending.items():
            copy._pending(key, pending.shard).merge(pending)
            copy.waiting[pending.shard][key] = pending.last_failure
        return copy


class Pending:
    """The failed sends of one producer to a partition: the CreateTime ranges of their records (sorted, apart,
    at most MAX_RANGES: past it the two nearest become one), and the latest failure, so that a batch is asked
    about in O(log n)."""

    __slots__ = ("shard", "lows", "highs", "last_failure")

    def __init__(self, shard: int) -> None:
        self.shard = shard
        self.lows: list[int] = []
        self.highs: list[int] = []
        self.last_failure = 0

    def add(self, low: int, high: int, failed_ns: int) -> None:
        lows, highs = self.lows, self.highs
        i = bisect_left(highs, low)  # the ranges from i to j meet [low, high]: one range with it
        j = bisect_right(lows, high)
        if i < j:
            low, high = min(low, lows[i]), max(high, highs[j - 1])
        lows[i:j] = [low]
        highs[i:j] = [high]
        if len(lows) > MAX_RANGES:
            gaps = [lows[k + 1] - highs[k] for k in range(len(lows) - 1)]
            k = gaps.index(min(gaps))
            highs[k] = highs[k + 1]
            del lows[k + 1], highs[k + 1]
        if failed_ns > self.last_failure:
            self.last_failure = failed_ns

    def merge(self, other: Pending) -> None:
        for low, high in zip(other.lows, other.highs):
            self.add(low, high, other.last_failure)

    def spans(self, first_ms: int, max_ms: int) -> bool:
        """Does a range meet [first_ms, max_ms]?"""
        at = bisect_left(self.highs, first_ms)
        return at < len(self.lows) and self.lows[at] <= max_ms
