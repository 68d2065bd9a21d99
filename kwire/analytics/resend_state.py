"""The records sent again and the batches consumers read: the mergeable state behind duplicate_write.

`ResendState` keeps (kwire.analytics.mergeable), from the observations of kwire.analytics.resends:
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
  (topic, partition, producer), the CreateTimes of the records of its failed sends, each with the
  time of the send, until the window is over (at most MAX_PENDING producers, the latest failures;
  MAX_PENDING records each, the first); per (topic, partition, connection) the latest first
  CreateTime of its batches (MAX_CONNECTIONS, the first seen). They decide what is read, not what
  is found (a read record counts only with a failed send of it): merged as unions.
Fingerprints only: no key, value or header of a record is kept.
"""

from __future__ import annotations

from bisect import bisect_left, insort

from kwire.analytics.mergeable import Capped, Kept, keep_smallest
from kwire.analytics import tags as T
from kwire.fields import reduce_by_fields, set_fields

MAX_RECORDS = 16384
MAX_FETCHED = 16384
MAX_SENDS = 4
MAX_COPIES = 4
MAX_PENDING = 256
MAX_CONNECTIONS = 65536
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


class ResendState:
    __slots__ = ("records", "unmatched", "sampled", "fetched", "pending", "newest")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.records: dict[tuple, Sends] = Capped()  # (fingerprint, topic, partition, producer), failed
        self.unmatched: dict[tuple, Sends] = Capped()  # the same key, no failed send seen here
        self.sampled = False  # records of failed sends left out of `records`
        self.fetched: dict[tuple, Copies] = Capped()  # (crc, topic, partition)
        self.pending: dict[tuple, Pending] = {}  # (topic, partition, producer)
        self.newest: dict[tuple, int] = {}  # (topic, partition, client address) -> latest first CreateTime

    def wants(self, topic, partition, producer, client, first_ms: int, max_ms: int, ts_ns: int,
              failed: bool = False) -> bool:
        """Should this batch (of a producer that is not idempotent) be read for resends? Yes when its
        records were created from first_ms to max_ms and that spans a record of a failed send of
        `producer` to (topic, partition) within the window (the failure was seen here); or, for a
        failure this state may not have seen (another part of a split traffic), when it is the first
        batch of its connection (`client`) to (topic, partition) seen here, or its records are older
        than the first record of a batch the connection sent before (a producer sends its records in
        the order they were made, a resend breaks it). Every batch is to be asked about, in order
        (a `failed` one only to note its order)."""
        newest = self.newest
        key = (topic, partition, client)
        before = newest.get(key)
        if before is None:
            if len(newest) < MAX_CONNECTIONS:
                newest[key] = first_ms
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
            del self.pending[(topic, partition, producer)]  # every failure of it is older than the window
            return False
        return pending.spans(first_ms, max_ms)

    def _pend(self, topic, partition, producer, error, ts_ns: int, prints) -> None:
        if error is None:
            return
        key = (topic, partition, producer)
        pending = self.pending.get(key)
        if pending is None:
            pending = self.pending[key] = Pending()
            if len(self.pending) > MAX_PENDING:  # the producer whose last failure is the oldest goes
                del self.pending[min(self.pending, key=lambda k: self.pending[k].last_failure)]
        pending.add(((p, created, ts_ns) for _, created, p in prints))

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
        for key, first_ms in other.newest.items():
            if key in self.newest or len(self.newest) < MAX_CONNECTIONS:
                self.newest[key] = max(self.newest.get(key, first_ms), first_ms)
        for key, theirs in other.pending.items():
            self.pending.setdefault(key, Pending()).add((p, c, f) for p, (c, f) in theirs.prints.items())
        while len(self.pending) > MAX_PENDING:
            del self.pending[min(self.pending, key=lambda k: self.pending[k].last_failure)]


class Pending:
    """The records of one producer's failed sends to a partition: fingerprint -> (CreateTime, time of
    the failed send), at most MAX_PENDING; their CreateTimes sorted, and the latest failure, so that
    a batch is asked about in O(log n)."""

    __slots__ = ("prints", "times", "last_failure")

    def __init__(self) -> None:
        self.prints: dict[int, tuple[int, int]] = {}
        self.times: list[int] = []
        self.last_failure = 0

    def add(self, items) -> None:
        prints = self.prints
        for print_, created, failed in items:
            have = prints.get(print_)
            if have is None:
                if len(prints) >= MAX_PENDING:
                    continue
                insort(self.times, created)
            prints[print_] = (created, failed if have is None else max(have[1], failed))
            self.last_failure = max(self.last_failure, failed)

    def spans(self, first_ms: int, max_ms: int) -> bool:
        times = self.times
        at = bisect_left(times, first_ms)
        return at < len(times) and times[at] <= max_ms
