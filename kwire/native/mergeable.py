"""Small containers whose contents merge to exactly the whole, in any order, within a fixed size.

The group and finding analysis (kwire.analytics.groups, kwire.analytics.findings) keeps its state
in these, so that Aggregators built over any split of the traffic (`kwire stats --jobs`, the
partitions of `kwire spark`, the seconds of `kwire live`) merge to the state of one Aggregator fed
everything. Each cap is stated where it is used; a capped container keeps a choice that does not
depend on the split:

- `keep_smallest(table, limit)`: a dict keeps the `limit` smallest keys. Keys are immutable facts
  (a member id, a generation, an offset), so a key kept in the whole is kept in every part that saw
  it, and its value there is complete. A table made as `Capped()` carries a max-heap of its keys, so
  trimming it after each key added costs O(log n), not a sort of the table (a plain dict is sorted:
  fine at a merge, quadratic when called per key on a full table).
- `Kept`: the `limit` smallest items by a total order (the first evidence by time, ties broken by
  client, broker and correlation id).
- `Instants`: a set of moments at a resolution that doubles (from 100 ms) whenever more than
  `limit` distinct ones would be kept: the resolution it ends at is the smallest at which all the
  moments it has seen fit, however they came.
- `TimeHistograms`: per time bucket, a log-scale histogram of latencies (8 buckets per doubling,
  about 9 % wide), with Series' self-coarsening resolution (kwire.native.series).
- `stable_hash`: a hash that is the same in every process (Python's hash() of str is not).
"""

from __future__ import annotations

import zlib
from bisect import insort
from heapq import heapify, heappop, heappush, heappushpop
from math import ceil, log2  # module globals, not a module's attributes: one look-up per latency less
from operator import itemgetter

from kwire.fields import reduce_by_fields, set_fields
from kwire.native import c_ints, c_text

DECI_NS = 100_000_000  # Instants' finest resolution: 100 ms
NS = 1_000_000_000
_crc32 = zlib.crc32  # bound once: a module attribute lookup per batch key otherwise


def stable_hash(*parts) -> int:
    return zlib.crc32(repr(parts).encode("utf-8", "replace"))


_HEAD_CRCS: dict[tuple, int] = {}  # (a, b) -> CRC of the text "(a!r, b!r, "


def stable_hash3(a: str, b: int, c) -> int:
    """stable_hash(a, b, c), the CRC of the text "(a, b, " kept from one call to the next with the
    same str a and int b (a topic and a partition: one per batch of a Produce), c written without
    repr when it is a batch's key (kwire.analytics.delivery): ("crc" or "pid", int, int, int)."""
    if type(a) is not str or type(b) is not int:
        return stable_hash(a, b, c)
    head = _HEAD_CRCS.get((a, b))
    if head is None:
        head = _crc32(f"({a!r}, {b!r}, ".encode("utf-8", "replace"))
        if len(_HEAD_CRCS) >= 4096:  # topics and partitions come off the wire: bounded
            _HEAD_CRCS.clear()
        _HEAD_CRCS[(a, b)] = head
    if (type(c) is tuple and len(c) == 4 and (c[0] == "crc" or c[0] == "pid") and type(c[1]) is int
            and type(c[2]) is int and type(c[3]) is int):  # a batch's key: repr(c) without repr's machinery
        x, y, z = c[1], c[2], c[3]
        if _I64_MIN <= x <= _I64_MAX and _I64_MIN <= y <= _I64_MAX and _I64_MIN <= z <= _I64_MAX:
            kind = b"pid" if c[0] == "pid" else b"crc"
            return _crc32(c_text._batch_key_text(kind, x, y, z), head)  # (compiled, its text written in C)
        return stable_hash(a, b, c)  # a number past 64 bits: never a batch's, but the same hash all the same
    return _crc32(f"{c!r})".encode("utf-8", "replace"), head)


_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1  # a batch key's numbers (producer id, epoch, sequence or CRC) fit


class Capped(dict):
    """A dict that keep_smallest trims in O(log n) per key added: a max-heap of its keys beside it,
    brought up to date from the keys added since (the newest, at the end of the dict's order). Keys
    must leave it only through keep_smallest."""

    __slots__ = ("_heap", "_synced", "_rank")

    def __init__(self) -> None:
        super().__init__()
        self._heap: list | None = None
        self._synced = 0  # len(self) when the heap last held every key
        self._rank = None  # how the heap's entries rank its keys (_rank_of), None: by _Largest alone

    def __reduce__(self):  # pickled (Spark, worker processes) without the heap: rebuilt on first use
        return (Capped, (), None, None, iter(self.items()))

    def refuses(self, key, limit: int) -> bool:
        """Would `key`, added now and trimmed by keep_smallest(self, limit), be dropped at once? True
        only when that is sure: the table is full and its heap (up to date) says every key it holds
        is smaller. A caller can then skip making the value (a full table of a long capture refuses
        most new keys). (Compiled, Capped is an extension type, kwire/native/mergeable.pxd: its
        fields are read in C.)"""
        heap = self._heap
        return (len(self) >= limit and heap is not None and self._synced == len(self)
                and key > heap[0][1].key)


def capped_get(table: Capped, key):
    """table.get(key): compiled, a C call (kwire/native/mergeable.pxd), not a method call of the subclass."""
    return c_ints._dict_get(table, key)


class _Largest:
    """A key in a min-heap that pops the largest first."""

    __slots__ = ("key",)
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, key) -> None:
        self.key = key

    def __lt__(self, other: _Largest) -> bool:
        return self.key > other.key


# A heap entry is (rank, _Largest(key)): when every key of a table is an int, or a tuple that starts
# with one (the batches' stable hash), the rank is minus that int, so most comparisons are between
# two ints and never reach _Largest.__lt__ (unique keys tie on the rank only where their first
# items tie); otherwise the rank is 0 and _Largest orders alone.
_INT, _INT_FIRST = "int", "int first"


def _kind(key):
    if type(key) is int:
        return _INT
    if type(key) is tuple and key and type(key[0]) is int:
        return _INT_FIRST
    return None


def _entry(key, rank):
    if rank is _INT_FIRST:
        return (-key[0], _Largest(key))
    return (-key if rank is _INT else 0, _Largest(key))


def _heap_of(table: Capped) -> list:
    rank = None
    for key in table:
        rank = _kind(key)
        break
    if rank is not None and any(_kind(key) is not rank for key in table):
        rank = None
    table._rank = rank
    if rank is _INT_FIRST:  # _entry of every key, inline: a full table of batches is 16,384 of them
        heap = [(-key[0], _Largest(key)) for key in table]
    elif rank is _INT:
        heap = [(-key, _Largest(key)) for key in table]
    else:
        heap = [(0, _Largest(key)) for key in table]
    heapify(heap)
    return heap


def keep_smallest(table: dict, limit: int) -> None:
    """Drop every key of `table` but the `limit` smallest (in place)."""
    if len(table) <= limit:
        return
    if type(table) is not Capped:
        for key in sorted(table)[limit:]:
            del table[key]
        return
    _trim(table, limit)


def _trim(table: Capped, limit: int) -> None:
    """keep_smallest of a Capped table over its limit (compiled, its fields read in C: mergeable.pxd)."""
    heap, added = table._heap, len(table) - table._synced
    if heap is not None and added == 1 and len(table) == limit + 1:  # one key added to a full table
        key = next(reversed(table))
        rank = table._rank
        if rank is None or _kind(key) is rank:
            del table[heappushpop(heap, _entry(key, rank))[1].key]
            table._synced = limit
            return
    if heap is not None and added <= limit:
        rank = table._rank
        keys = reversed(table)
        newest = [next(keys) for _ in range(added)]
        if rank is not None and any(_kind(key) is not rank for key in newest):
            heap = None  # a key of another kind: ranked by _Largest alone from now on
        else:
            for key in newest:
                heappush(heap, _entry(key, rank))
    if heap is None or added > limit:
        heap = _heap_of(table)
    while len(table) > limit:
        del table[heappop(heap)[1].key]
    table._heap, table._synced = heap, len(table)


def first_ns(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def last_ns(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def choose(a, b):
    """A choice with a total tie-break: the smaller of two values, None losing to anything."""
    return b if a is None else a if b is None else min(a, b)


_FIRST = itemgetter(0)  # an item's key, for insort and sorted (in C: a function was a Python call per item)


class Kept:
    """The `limit` smallest (key, value) items; keys must be totally ordered and unique per item."""

    __slots__ = ("limit", "items")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, limit: int):
        self.limit = limit
        self.items: list[tuple] = []

    def add(self, key: tuple, value) -> None:
        items = self.items
        if not items and self.limit > 0:
            items.append((key, value))
            return
        if len(items) >= self.limit and key >= items[-1][0]:
            return
        insort(items, (key, value), key=_FIRST)
        del items[self.limit:]

    def merge(self, other: Kept) -> None:
        theirs = other.items
        if not theirs:
            return
        if not self.items:  # what a merge of states mostly meets: a key only the other state had (both in order)
            self.items = theirs[:self.limit]
            return
        seen = {key for key, _ in self.items}
        self.items = sorted(self.items + [item for item in theirs if item[0] not in seen], key=_FIRST)[:self.limit]

    def values(self) -> list:
        return [value for _, value in self.items]


class Instants:
    """Moments (ns) kept as a set of buckets of 100 ms x 2^k; at most `limit` buckets."""

    __slots__ = ("limit", "shift", "buckets")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, limit: int = 512):
        self.limit = limit
        self.shift = 0  # bucket width: DECI_NS << shift
        self.buckets: set[int] = set()

    def add(self, ts_ns: int) -> None:
        self.buckets.add((ts_ns // DECI_NS) >> self.shift)
        if len(self.buckets) > self.limit:
            self._coarsen(self.shift + 1)

    def _coarsen(self, shift: int) -> None:
        while True:
            step = shift - self.shift
            self.buckets = {b >> step for b in self.buckets}
            self.shift = shift
            if len(self.buckets) <= self.limit:
                return
            shift += 1

    def merge(self, other: Instants) -> None:
        if other.shift > self.shift:
            self._coarsen(other.shift)
        step = self.shift - other.shift
        self.buckets |= {b >> step for b in other.buckets}
        if len(self.buckets) > self.limit:
            self._coarsen(self.shift + 1)

    @property
    def width_ns(self) -> int:
        return DECI_NS << self.shift

    def any_between(self, lo_ns: int, hi_ns: int) -> bool:
        """Is a moment kept in (lo, hi]? Buckets that straddle `lo` do not count (a moment in them may
        lie before it); so the answer errs towards no when the resolution is coarse."""
        width = self.width_ns
        first = lo_ns // width + 1
        last = hi_ns // width
        return any(b in self.buckets for b in range(first, last + 1)) if last - first < 64 else \
            any(first <= b <= last for b in self.buckets)

    def sorted_ns(self) -> list[int]:
        """The kept buckets' start times, ascending."""
        width = self.width_ns
        return [b * width for b in sorted(self.buckets)]


# ---- latency histograms over time ----------------------------------------------------------------

_PER_DOUBLING = 8


_BUCKETS: dict[int, int] = {}  # latency ns -> its bucket, for the latencies seen lately


def latency_bucket(ns: int) -> int:
    """Histogram bucket of a latency: 0 for up to 1 us, then 8 per doubling."""
    k = _BUCKETS.get(ns)
    if k is None:
        k = 0 if ns <= 1000 else max(1, ceil(_PER_DOUBLING * log2(ns / 1000)))
        if len(_BUCKETS) >= 65536:  # latencies come off the wire: bounded
            _BUCKETS.clear()
        _BUCKETS[ns] = k
    return k


def bucket_upper_ms(k: int) -> float:
    return round(1000 * 2 ** (k / _PER_DOUBLING) / 1e6, 6)


def histogram_percentile(hist: dict[int, int], p: int) -> int | None:
    """The bucket of the p-th percentile (nearest rank) of a histogram, None when empty."""
    n = sum(hist.values())
    if not n:
        return None
    rank = max(1, -(-p * n // 100))
    seen = 0
    for k in sorted(hist):
        seen += hist[k]
        if seen >= rank:
            return k
    return None  # pragma: no cover


def merge_counts(into: dict, other: dict) -> None:
    for key, n in other.items():
        into[key] = into.get(key, 0) + n


class TimeHistograms:
    """Per time bucket (`resolution` seconds, a power of two): a latency histogram, counts per label
    (api names) and the slowest item (latency, evidence). At most `limit` buckets; the resolution
    doubles to fit."""

    __slots__ = ("limit", "resolution", "buckets")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, limit: int = 1024):
        self.limit = limit
        self.resolution = 1
        self.buckets: dict[int, list] = {}

    def add(self, ts_ns: int, latency_ns: int, label: str, evidence: tuple | None = None) -> None:
        # ts_ns // NS // self.resolution (compiled, in C: kwire/native/c_ints.pxd)
        k = c_ints._time_bucket(ts_ns, self.resolution)
        cell = self.buckets.get(k)
        new = cell is None
        if new:
            cell = self.buckets[k] = [{}, {}, None]
        hist, labels = cell[0], cell[1]
        b = _BUCKETS.get(latency_ns)  # latency_bucket's cache, looked at first
        if b is None:
            b = latency_bucket(latency_ns)
        hist[b] = hist.get(b, 0) + 1
        labels[label] = labels.get(label, 0) + 1
        top = cell[2]
        if top is None or (latency_ns >= top[0] and _slower((latency_ns, evidence), top)):
            cell[2] = (latency_ns, evidence)
        if new and len(self.buckets) > self.limit:  # coarsened after the add: its cells are copied
            self._coarsen(self.resolution * 2)

    def _coarsen(self, resolution: int) -> None:
        while True:
            factor = resolution // self.resolution
            old, self.buckets = self.buckets, {}
            self.resolution = resolution
            for k, cell in old.items():
                _fold(self.buckets, k // factor, cell)
            if len(self.buckets) <= self.limit:
                return
            resolution *= 2

    def merge(self, other: TimeHistograms) -> None:
        if other.resolution > self.resolution:
            self._coarsen(other.resolution)
        factor = self.resolution // other.resolution
        for k, cell in other.buckets.items():
            _fold(self.buckets, k // factor, cell)
        if len(self.buckets) > self.limit:
            self._coarsen(self.resolution * 2)

    def rebinned(self, width: int) -> dict[int, list]:
        """Buckets of `width` seconds (a multiple of the resolution): {index: [histogram, labels,
        slowest]}."""
        factor = max(1, width // self.resolution)
        out: dict[int, list] = {}
        for k, cell in self.buckets.items():
            _fold(out, k // factor, cell)
        return out


def _slower(a: tuple, b: tuple) -> bool:
    """Is item a the slower (ties: the earlier evidence)?"""
    return (-a[0], a[1] or ()) < (-b[0], b[1] or ())


def _fold(table: dict, k: int, cell: list) -> None:
    have = table.get(k)
    if have is None:
        table[k] = [{**cell[0]}, {**cell[1]}, cell[2]]
        return
    merge_counts(have[0], cell[0])
    merge_counts(have[1], cell[1])
    if cell[2] is not None and (have[2] is None or _slower(cell[2], have[2])):
        have[2] = cell[2]
