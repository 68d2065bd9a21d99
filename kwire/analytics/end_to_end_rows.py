"""Rows of int64 values packed per key, capped to the smallest by a total order: what end-to-end latency keeps
(kwire.analytics.end_to_end: its writes and its deliveries).

A row is a time first, then other int64 values; rows are packed little-endian onto one bytearray per key
(8 bytes a value: a write of five values is 40 bytes, where a tuple of them cost about 190). The order that decides
which rows stay is (time, key, values), a total order, so any split of the traffic merged in any order keeps the
same rows. Once the cap is reached `limit` is the latest time kept: a row later than it can never be kept and is
refused at once; `trim` runs once the rows reach twice the cap, so adding costs an append and, amortised, a trim's
share. A trim reads only the times in one pass, then rewrites the rows that stay: it never holds the rows as
tuples, so memory stays at the packed bytes (twice the cap's) and a list of the times.
"""

from __future__ import annotations

import struct
from bisect import bisect_left
from functools import cache


@cache
def _structs(width: int) -> tuple[struct.Struct, struct.Struct]:
    """A row of `width` values (its time first), and its time alone."""
    return struct.Struct(f"<{width}q"), struct.Struct(f"<q{8 * (width - 1)}x")


class PackedRows:
    __slots__ = ("width", "packed", "count", "limit")  # plain values: it pickles (a worker's state to the main process)

    def __init__(self, width: int) -> None:
        self.width = width
        self.packed: dict[tuple, bytearray] = {}
        self.count = 0  # rows kept
        self.limit = None  # once the cap was reached: the latest time kept

    def rows(self, keep=None):
        """(key, values) of every row kept, key by key; with `keep`, only the keys for which keep(key) is true."""
        unpack = _structs(self.width)[0].iter_unpack
        for key, kept in self.packed.items():
            if keep is None or keep(key):
                for values in unpack(kept):
                    yield key, values

    def trim(self, cap: int) -> None:
        """Keeps the `cap` smallest rows by (time, key, values)."""
        if self.count <= cap:
            return
        times = []
        for kept in self.packed.values():
            times.extend(t for (t,) in _structs(self.width)[1].iter_unpack(kept))
        times.sort()
        limit = times[cap - 1]
        room = cap - bisect_left(times, limit)  # rows at exactly `limit` that stay
        del times
        ties = sorted((key, v) for key, v in self.rows() if v[0] == limit)[:room]
        stay: dict = {}
        for tie in ties:
            stay[tie] = stay.get(tie, 0) + 1
        self._keep(lambda key, v: v[0] < limit or (v[0] == limit and _take(stay, (key, v))))
        self.limit = limit  # never later than before: every row kept was at or before it

    def drop_after(self, limit: int) -> None:
        self._keep(lambda key, v: v[0] <= limit)

    def _keep(self, wanted) -> None:
        row = _structs(self.width)[0]
        pack, unpack = row.pack, row.iter_unpack
        packed: dict[tuple, bytearray] = {}
        count = 0
        for key, kept in self.packed.items():
            out = bytearray()
            for v in unpack(kept):
                if wanted(key, v):
                    out += pack(*v)
                    count += 1
            if out:
                packed[key] = out
        self.packed = packed
        self.count = count

    def merge(self, other: PackedRows, cap: int) -> None:
        for key, theirs in other.packed.items():
            mine = self.packed.get(key)
            if mine is None:
                self.packed[key] = bytearray(theirs)
            else:
                mine += theirs
        self.count += other.count
        limits = [x for x in (self.limit, other.limit) if x is not None]
        if limits:  # nothing later than a part's limit can be kept
            self.limit = min(limits)
            self.drop_after(self.limit)
        self.trim(cap)


def _take(stay: dict, row) -> bool:
    left = stay.get(row)
    if not left:
        return False
    stay[row] = left - 1
    return True
