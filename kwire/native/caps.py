"""The one cap policy for every figures table keyed by something from the wire (docs/bounds.md).

A capture names whatever it likes: 200,000 client ids, 100,000 brokers, 200,000 share groups, one
Fetch over 300,000 partitions. Every table of `kwire stats`, `kwire spark`, `kwire live` and the
HTML report whose keys come from the wire is a `FoldedTable`:

- it keeps a row for the CAPS[kind] smallest keys (a total order on the keys, so which keys are kept
  does not depend on how the traffic was split: any split merged in any order gives the table one
  Aggregator fed everything gives, as kwire.native.mergeable's containers do);
- every other key's figures are merged into one row, OTHERS (for partitions the topic OTHERS,
  partition -1): nothing is dropped, the totals stay whole, and the row's own counts say how much
  was folded;
- `folded` says whether anything was folded; the stats document's `caps` key lists, per table, its
  cap and whether it folded anything, so a reader knows a table was cut and by which rule.

Adding a key to a full table costs O(log n) (a max-heap of the kept keys); a key already kept, or
one refused, costs a dict lookup and one comparison.
"""

from __future__ import annotations

from heapq import heappush, heapreplace
from typing import Callable

from kwire.native.mergeable import _Largest  # a key in a min-heap that pops the largest first

OTHERS = "(others)"
CAPS = {
    "api_versions": 1_024,  # (api, version): the version is a number from the wire
    "client_ids": 1_024,
    "brokers": 1_024,
    "broker_latency": 1_024,  # brokers' latency over time, for slow_broker (kwire.analytics.traffic)
    "partitions": 16_384,
    "share_groups": 1_024,
    "topic_names": 65_536,  # topic id -> name, from Metadata answers
}


def _order(key):
    """A total order over keys of mixed kinds (None, str, int, tuples of them)."""
    if type(key) is tuple:
        return (3, tuple(_order(k) for k in key))
    if key is None:
        return (0, "")
    if type(key) is int:
        return (1, key)
    return (2, str(key))


class FoldedTable:
    """key -> row (made by `make`) for the `cap` smallest keys; the rest merged into `others`."""

    __slots__ = ("kind", "cap", "make", "others_key", "rows", "others", "_heap")

    def __init__(self, kind: str, make: Callable, others_key=OTHERS, cap: int | None = None) -> None:
        self.kind = kind
        self.cap = CAPS[kind] if cap is None else cap
        self.make = make
        self.others_key = others_key
        self.rows: dict = {}
        self.others = None  # the folded row, made when something is folded
        self._heap: list = []  # _Largest((order, key)) of every kept key

    def __reduce__(self):  # pickled (worker processes, Spark) without the heap, the same compiled or not
        return (_folded_table, (self.kind, self.cap, self.make, self.others_key, self.rows, self.others))

    def __len__(self) -> int:
        return len(self.rows) + (self.others is not None)

    @property
    def folded(self) -> bool:
        return self.others is not None

    def row(self, key):
        """The row to add `key`'s figures to: its own, a new one, or the folded one."""
        row = self.rows.get(key)
        if row is not None:
            return row
        if len(self.rows) < self.cap:
            row = self.rows[key] = self.make()
            heappush(self._heap, _Largest((_order(key), key)))
            return row
        ranked = (_order(key), key)
        largest = self._heap[0].key
        if ranked[0] > largest[0]:
            return self._others()
        heapreplace(self._heap, _Largest(ranked))  # the largest kept key makes room, folded
        self._others().merge(self.rows.pop(largest[1]))
        row = self.rows[key] = self.make()
        return row

    def _others(self):
        if self.others is None:
            self.others = self.make()
        return self.others

    def merge(self, other: FoldedTable) -> None:
        for key, row in other.rows.items():
            self.row(key).merge(row)
        if other.others is not None:
            self._others().merge(other.others)

    def items(self):
        """Every row, the folded one last (under `others_key`)."""
        yield from self.rows.items()
        if self.others is not None:
            yield self.others_key, self.others

    def values(self):
        return (row for _, row in self.items())

    def get(self, key, default=None):
        return self.rows.get(key, default)

    def note(self) -> dict:
        """This table's entry in the document's `caps`: {cap, folded}."""
        return {"cap": self.cap, "folded": self.folded}


def _folded_table(kind: str, cap: int, make: Callable, others_key, rows: dict, others) -> FoldedTable:
    """A pickled FoldedTable again, its heap rebuilt."""
    table = FoldedTable(kind, make, others_key, cap)
    table.rows, table.others = rows, others
    for key in rows:
        heappush(table._heap, _Largest((_order(key), key)))
    return table


class NameTable:
    """topic id -> name (the smallest name any Metadata answer gives it), for the CAPS["topic_names"]
    smallest ids; the later ids stay unnamed (counted in `unnamed`... as ids in the tables)."""

    __slots__ = ("cap", "names", "_heap", "refused")

    def __init__(self, cap: int | None = None) -> None:
        self.cap = CAPS["topic_names"] if cap is None else cap
        self.names: dict[str, str] = {}
        self._heap: list = []
        self.refused = False

    def __getstate__(self):
        return (self.cap, self.names, self.refused)

    def __setstate__(self, state) -> None:
        self.cap, self.names, self.refused = state
        self._heap = []
        for tid in self.names:
            heappush(self._heap, _Largest((_order(tid), tid)))

    def add(self, tid, name) -> None:
        have = self.names.get(tid)
        if have is not None:
            if name < have:
                self.names[tid] = name
            return
        ranked = (_order(tid), tid)
        if len(self.names) >= self.cap:
            self.refused = True
            largest = self._heap[0].key
            if ranked[0] > largest[0]:
                return
            heapreplace(self._heap, _Largest(ranked))
            del self.names[largest[1]]
        else:
            heappush(self._heap, _Largest(ranked))
        self.names[tid] = name

    def get(self, tid, default=None):
        return self.names.get(tid, default)

    def items(self):
        return self.names.items()

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, tid) -> bool:
        return tid in self.names

    def __getitem__(self, tid):
        return self.names[tid]
