"""A bounded queue of payloads kept in order of a 64-bit time, released by a bound: kwire.time_order's bookkeeping.

`TimeQueue.add(at, done, size, unanswered, payload)` takes an item requested at `at` and complete at `done`
(ns), `size` bytes held for it, and returns what is ready to go on (a list, or an empty tuple); `settle()`
after each window of items, `finish()` at the end. An item goes on once the clock (the latest `done` seen) is
`window_ns` past it, or once `settled(clock)` (see `watch`) says nothing older can still come; past `max_held`
items or `max_bytes` held, the oldest go on early. One that comes older than one already gone on goes on at
once, counted by why (`late*`; kwire.time_order words them). What it means is kwire.time_order's.

How: the held are kept sorted by time in three parallel columns (times and sizes in arrays, payloads in a
list). Most items come after the last held and are appended; one that overtook others goes in by bisection,
a few places from the end, after those of the same time. What is due is a prefix. No object is made per item
held: a tuple and two ints each cost `inspect --json -j 0` a fifth of its time.

Compiled (setup.py; time_queue.pxd types the counters and the calls); run as Python,
the same code: tests/test_time_order.py runs on the default build, tests/test_compiled.py compares the two.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right

_I64_MAX = (1 << 63) - 1  # the times' column holds 64-bit numbers; later ones keep their arrival order there
_I64_MIN = -(1 << 63)


def _clamped(ns) -> int:
    """A time in the column's range (a hostile capture's absurd time held at its end)."""
    if _I64_MIN <= ns <= _I64_MAX:
        return ns
    return _I64_MAX if ns > 0 else _I64_MIN


class TimeQueue:
    """See the module's docstring."""

    ASK_EVERY = 64  # items for each connection settled() looks at, at the least, between two questions

    def __init__(self, window_ns: int, max_held: int, max_bytes: int):
        self.window_ns = min(window_ns, _I64_MAX)
        self.max_held = min(max_held, _I64_MAX)
        self.max_bytes = min(max_bytes, _I64_MAX)
        self.times = array("q")  # times of the held, ascending (equal ones in arrival order)
        self.sizes = array("q")  # bytes held for each
        self.payloads: list = []
        self.held_bytes = 0
        self.settled = None  # see watch()
        self.arrivals = 0
        self.ask_at = 0  # arrivals when settled() may be asked again
        self.clock = 0  # the latest completion seen
        self.last = _I64_MIN  # time of the last item handed on
        self.late = 0  # items handed on after a later one: completed more than the window after their time
        self.late_unanswered = 0  # ... given up on (unanswered)
        self.late_bound = 0  # ... within the window, but the bound had let later ones go
        self.late_wire = 0  # ... otherwise (their time's bytes came after later ones were complete)
        self.early = 0  # items the bound handed on before their window was up

    def watch(self, settled) -> None:
        """Go by what the caller knows: settled(clock) -> (ns, cost), every item still to come has a time at
        or after ns, having looked at `cost` sources (asked less often where there are many)."""
        self.settled = settled

    def add(self, at, done, size: int, unanswered: bool, payload):
        """An item at `at`, complete at `done`, `size` bytes held: the payloads ready now, in order."""
        self.arrivals += 1
        at_ns = _clamped(at)
        done_ns = _clamped(done)
        if done_ns > self.clock:
            self.clock = done_ns
        if at_ns < self.last:
            self._count_late(at_ns, unanswered)
            return [payload, *self._due(self.clock - self.window_ns)]
        times = self.times
        n = len(times)
        if n == 0 or at_ns >= times[n - 1]:
            times.append(at_ns)
            self.sizes.append(size)
            self.payloads.append(payload)
        else:  # it overtook some: its place, after those of the same time
            place = bisect_right(times, at_ns)
            times.insert(place, at_ns)
            self.sizes.insert(place, size)
            self.payloads.insert(place, payload)
        self.held_bytes += size
        if n + 1 > self.max_held or self.held_bytes > self.max_bytes:
            return self._over()
        if times[0] <= self.clock - self.window_ns:
            return self._due(self.clock - self.window_ns)
        return ()

    def add_all(self, items, times_of, make, passes) -> list:
        """add() for each of `items` in turn: times_of(item) -> (at, done, size, unanswered); what is held is
        make(item) (those it makes None of dropped; the size held for a bytes one is its length), or the item
        itself when `make` is None or the item is of type `passes`. The payloads ready, in order."""
        out: list = []
        for item in items:
            at, done, size, unanswered = times_of(item)
            if make is not None and type(item) is not passes:
                made = make(item)
                if made is None:
                    continue
                if type(made) is bytes:
                    size = len(made)
            else:
                made = item
            ready = self.add(at, done, size, unanswered, made)
            if ready:
                out.extend(ready)
        return out

    def settle(self) -> list:
        """After a window of items: what is settled goes on (and what the window lets go)."""
        if not len(self.times):
            return []
        bound = self.clock - self.window_ns
        if self.settled is not None and self.arrivals >= self.ask_at:
            settled, cost = self.settled(self.clock)
            self.ask_at = self.arrivals + cost // self.ASK_EVERY
            if settled > bound:
                bound = _clamped(settled)
        return self._due(bound)

    def _count_late(self, at: int, unanswered: bool) -> None:
        if unanswered:
            self.late_unanswered += 1
        elif at < self.clock - self.window_ns:
            self.late += 1
        elif self.early:
            self.late_bound += 1
        else:
            self.late_wire += 1

    def _over(self) -> list:
        """Over the bound: the oldest go on until a quarter of it is free (not one at a time)."""
        sizes = self.sizes
        cut = max(0, len(self.times) - self.max_held * 3 // 4)
        if self.held_bytes - sum(sizes[:cut]) > self.max_bytes * 3 // 4:
            freed, room = 0, self.held_bytes - self.max_bytes * 3 // 4
            cut = 0
            while cut < len(sizes) and freed < room:
                freed += sizes[cut]
                cut += 1
        due = bisect_right(self.times, self.clock - self.window_ns)
        self.early += max(0, cut - due)
        return self._take(max(cut, due))

    def _due(self, bound: int) -> list:
        """The held at or before `bound`, in order."""
        return self._take(bisect_right(self.times, bound))

    def _take(self, cut: int) -> list:
        if not cut:
            return []
        self.last = self.times[cut - 1]
        self.held_bytes -= sum(self.sizes[:cut])
        out = self.payloads[:cut]
        del self.times[:cut], self.sizes[:cut], self.payloads[:cut]
        return out

    def finish(self) -> list:
        """Everything still held, in order (the input ended)."""
        return self._take(len(self.times))
