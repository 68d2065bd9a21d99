"""Mergeable time series at a resolution that coarsens itself: counts over time, lag over time.

A Series maps time buckets to a tuple of numbers. Buckets are `resolution` seconds wide, a power of
two (1 s to start with); bucket k covers [k * r, (k + 1) * r) seconds since the epoch. When more than
`limit` buckets hold values, the resolution doubles until they fit, so memory is bounded whatever the
span. Values combine per field with sum or max, both of which survive regrouping into wider buckets.

Determinism: the resolution a Series ends at is the smallest power of two at which all the data it has
seen fits in `limit` buckets, however the data was split and merged. `rebin(width)` (width a power of
two at least the resolution) therefore gives the same answer for the same data, in one process or
merged from many.
"""

from __future__ import annotations

from operator import add

from kwire.fields import reduce_by_fields, set_fields
from kwire.native import c_ints

NS = 1_000_000_000


class Series:
    __slots__ = ("ops", "limit", "resolution", "buckets")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, ops: tuple[str, ...], limit: int = 4096):
        self.ops = ops  # per field: "sum" or "max"
        self.limit = limit
        self.resolution = 1
        self.buckets: dict[int, list] = {}

    def add(self, ts_ns: int, values) -> None:
        k = c_ints._time_bucket(ts_ns, self.resolution)
        cell = self.buckets.get(k)
        if cell is None:
            self.buckets[k] = list(values)
            if len(self.buckets) > self.limit:
                self._coarsen(self.resolution * 2)
            return
        self._combine(cell, values)

    def add_sums(self, ts_ns: int, values: tuple) -> None:
        """`add` for a series whose every field is a sum, of values none of which is None (counts)."""
        # ts_ns // NS // self.resolution (compiled, in C: kwire/native/c_ints.pxd)
        k = c_ints._time_bucket(ts_ns, self.resolution)
        cell = self.buckets.get(k)
        if cell is None:
            self.add(ts_ns, values)
        else:
            cell[:] = map(add, cell, values)

    def add_sums4(self, ts_ns: int, a: int, b: int, c: int, d: int) -> None:
        """`add_sums(ts_ns, (a, b, c, d))`, for a series of four sums (no tuple made when the bucket is
        there)."""
        # ts_ns // NS // self.resolution (compiled, in C: kwire/native/c_ints.pxd)
        k = c_ints._time_bucket(ts_ns, self.resolution)
        cell = self.buckets.get(k)
        if cell is None:
            self.add(ts_ns, (a, b, c, d))
        else:
            cell[0] += a
            cell[1] += b
            cell[2] += c
            cell[3] += d

    def _combine(self, cell: list, values) -> None:
        i = 0
        for op in self.ops:
            v = values[i]
            if v is not None:
                if op == "sum":
                    cell[i] += v
                elif cell[i] is None or v > cell[i]:
                    cell[i] = v
            i += 1

    def _coarsen(self, resolution: int) -> None:
        while True:
            factor = resolution // self.resolution
            old, self.buckets = self.buckets, {}
            self.resolution = resolution
            for k, cell in old.items():
                nk = k // factor
                have = self.buckets.get(nk)
                if have is None:
                    self.buckets[nk] = cell
                else:
                    self._combine(have, cell)
            if len(self.buckets) <= self.limit:
                return
            resolution *= 2

    def merge(self, other: Series) -> None:
        if other.resolution > self.resolution:
            self._coarsen(other.resolution)
        factor = self.resolution // other.resolution
        for k, cell in other.buckets.items():
            nk = k // factor
            have = self.buckets.get(nk)
            if have is None:
                self.buckets[nk] = list(cell)
            else:
                self._combine(have, cell)
        if len(self.buckets) > self.limit:
            self._coarsen(self.resolution * 2)

    def rebin(self, width: int, first: int, count: int) -> list[list | None]:
        """`count` buckets of `width` seconds starting at bucket index `first` (in width units);
        None where no value fell."""
        if width % self.resolution:
            raise ValueError(f"width {width} s is not a multiple of the resolution {self.resolution} s")
        factor = width // self.resolution
        out: list[list | None] = [None] * count
        for k, cell in self.buckets.items():
            i = k // factor - first
            if 0 <= i < count:
                if out[i] is None:
                    out[i] = list(cell)
                else:
                    self._combine(out[i], cell)
        return out
