"""The records sent again and the batches consumers read: the mergeable state behind duplicate_write.

`ResendState` keeps (kwire.analytics.mergeable), from the observations of kwire.analytics.resends:
- records: per (fingerprint, topic, partition, producer) the first MAX_SENDS sends of that record
  (by time): (ts, client id, batch CRC, offset delta, error, offset the broker gave or None,
  evidence). At most MAX_RECORDS records: those with the smallest fingerprints (a 64-bit hash), so
  a record's sends are kept together or not at all, whatever the split;
- fetched: per (batch CRC, topic, partition) the MAX_COPIES smallest base offsets a Fetch answer
  showed that batch at, each with the first Fetch that did. At most MAX_FETCHED batches, the
  smallest CRCs.
Fingerprints only: no key, value or header of a record is kept.
"""

from __future__ import annotations

from kwire.analytics.mergeable import Capped, Kept, keep_smallest

MAX_RECORDS = 16384
MAX_FETCHED = 16384
MAX_SENDS = 4
MAX_COPIES = 4


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
    def __init__(self) -> None:
        self.records: dict[tuple, Sends] = Capped()  # (fingerprint, topic, partition, producer)
        self.fetched: dict[tuple, Copies] = Capped()  # (crc, topic, partition)

    def add(self, ob: tuple) -> None:
        if ob[0] == "rs":
            _, topic, partition, producer, client_id, crc, error, base, ev, prints = ob
            for delta, print_ in prints:
                sends = _bounded(self.records, (print_, topic, partition, producer), Sends, MAX_RECORDS)
                if sends is not None:
                    offset = base + delta if base is not None else None
                    sends.add((ev[0], client_id, crc, delta, error, offset, ev))
        elif ob[0] == "fb":
            _, topic, partition, crc, base_offset, ev = ob
            copies = _bounded(self.fetched, (crc, topic, partition), Copies, MAX_FETCHED)
            if copies is not None:
                copies.add(base_offset, ev)

    def merge(self, other: ResendState) -> None:
        for table, theirs, make, limit in ((self.records, other.records, Sends, MAX_RECORDS),
                                           (self.fetched, other.fetched, Copies, MAX_FETCHED)):
            for key, value in theirs.items():
                have = table.get(key)
                if have is None:
                    have = table[key] = make()
                have.merge(value)
            keep_smallest(table, limit)
