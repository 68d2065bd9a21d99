"""Exchanges in time order: the pipeline's stream, which comes in completion order, reordered by request time.

An exchange is complete when its answer arrives or kwire gives up on it, and the pipeline hands it on then:
a Fetch that long-polled 500 ms comes after the heartbeats sent while it waited. `TimeOrder` holds each
exchange until nothing requested before it can still come, then hands the held ones on in request time order
(equal times in completion order). So a capture is read top to bottom in time, as tshark shows packets,
whatever the latencies.

What can still come: after each window of records the pipeline hands over, it says how old the oldest request
still waiting for its answer is (kwire.pipeline.Pipeline.settled): what was requested before that is settled
and goes on. An unanswered request would hold everything after it back, so the window (capture time, never
the wall clock: 10 s by default) bounds that: an exchange goes on once the clock (the latest completion seen)
is the window past its request, whatever is pending.

Bounded: at most `max_held` exchanges and `max_bytes` of what is held for them wait; past either, the oldest
go on early. An exchange whose request is older than one already handed on (answered more than the window
after its request: a JoinGroup held for a rebalance; a request given up when its connection closed or the
capture ended; one whose bytes came late on the wire; or the bound let later ones go) cannot be put in its
place: it goes on at once, counted by why, and the command says so (`note`). One input, one order: all of it is
capture time, so a file, the same capture on standard input and any number of workers give the same lines.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from typing import Callable, Iterable, Iterator

from kwire.counts import count
from kwire.model import Exchange

WINDOW_NS = 10_000_000_000  # 10 s: the longest waits of the bundled captures' answered requests are 3-5 s
# (long polls, JoinGroups in a rebalance), KafkaJS's 15 s JoinGroups excepted
MAX_HELD = 10_000  # exchanges waiting: 1 s of a busy broker's 10,000 a second, twice a long poll's wait
MAX_HELD_BYTES = 16 << 20  # of what is held for them (rendered lines; wire bytes of an exchange held whole)

_I64_MAX = (1 << 63) - 1  # the times' column holds 64-bit numbers; later ones keep their arrival order there
_I64_MIN = -(1 << 63)

Settled = Callable[[int], tuple[int, int]]  # kwire.pipeline.Pipeline.settled


def exchange_times(item) -> tuple[int, int, int]:
    """(request time, completion time, wire bytes) of an Exchange or a RawExchange (kwire.kafka.pairing)."""
    if type(item) is Exchange:
        done = item.response_ts_ns or item.given_up_ts_ns or item.request_ts_ns or 0
        return item.ts_ns, done, (item.request_size or 0) + (item.response_size or 0)
    request = item.request
    done = item.response_ts_ns or item.given_up_ts_ns or (request.ts_ns if request is not None else 0)
    if request is None:
        return done, done, item.response_size or 0
    return request.ts_ns, done, request.held + (item.response_size or 0)


class TimeOrder:
    """add(...) for each exchange in completion order, settle() after each window of them the pipeline
    hands over, then finish(); each returns what is ready to go on, in request time order (see the module's
    docstring). What is held is the caller's: the exchange itself, or what was made of it (a rendered line
    holds far less than a decoded exchange).

    How: the held are kept sorted by request time as they come, in three parallel columns (times and sizes
    in arrays, payloads in a list). Most exchanges come after the last one held and are appended; one that
    overtook others goes in by bisection, a few places from the end. What is due is a prefix. No object is
    made per exchange held: a tuple and two ints each cost `inspect --json -j 0` a fifth of its time,
    scattered among the pipeline's short-lived objects."""

    ASK_EVERY = 64  # exchanges for each connection settled() looks at, at the least, between two questions

    def __init__(self, window_ns: int = WINDOW_NS, max_held: int = MAX_HELD, max_bytes: int = MAX_HELD_BYTES):
        self.window_ns = window_ns
        self.max_held = max_held
        self.max_bytes = max_bytes
        self.times = array("q")  # request times of the held, ascending (equal ones in arrival order)
        self.sizes = array("q")  # bytes held for each
        self.payloads: list = []
        self.held_bytes = 0
        self.settled: Settled | None = None  # see watch()
        self.arrivals = 0
        self.ask_at = 0  # arrivals when settled() may be asked again
        self.clock = 0  # the latest completion seen
        self.last = -1  # request time of the last exchange handed on
        self.late = 0  # exchanges handed on after a later one: answered more than the window after their request
        self.late_unanswered = 0  # ... requests kwire gave up on (closed, or the capture ended)
        self.late_bound = 0  # ... within the window, but the bound had let later ones go
        self.late_wire = 0  # ... whose request's bytes came after later ones were complete (retransmitted)
        self.early = 0  # exchanges the bound handed on before their window was up

    def watch(self, settled: Settled) -> None:
        """Go by what the pipeline knows: settled(clock) -> (ns, cost), every exchange still to come was
        requested at or after ns, having looked at `cost` connections (asked less often where there are many)."""
        self.settled = settled

    def add(self, at: int, done: int, size: int, unanswered: bool, payload):
        """An exchange requested at `at` and complete at `done` (capture times, ns), `size` bytes held for it:
        the payloads ready now, in order (a list, or an empty tuple)."""
        self.arrivals += 1
        if done > self.clock:
            self.clock = done
        if not _I64_MIN <= at <= _I64_MAX:  # an absurd time (a hostile capture's): held in its column's range
            at = _I64_MAX if at > 0 else _I64_MIN
        if at < self.last:
            self._count_late(at, unanswered)
            return [payload, *self._due(self.clock - self.window_ns)]
        times = self.times
        if not times or at >= times[-1]:
            times.append(at)
            self.sizes.append(size)
            self.payloads.append(payload)
        else:  # it overtook some: its place, after those of the same time
            place = bisect_right(times, at)
            times.insert(place, at)
            self.sizes.insert(place, size)
            self.payloads.insert(place, payload)
        self.held_bytes += size
        if len(times) > self.max_held or self.held_bytes > self.max_bytes:
            return self._over()
        if times[0] <= self.clock - self.window_ns:
            return self._due(self.clock - self.window_ns)
        return ()

    def settle(self) -> list:
        """After a window of the pipeline's output: what is settled goes on (and what the window lets go)."""
        times = self.times
        if not times:
            return []
        bound = self.clock - self.window_ns
        if self.settled is not None and self.arrivals >= self.ask_at:
            settled, cost = self.settled(self.clock)
            self.ask_at = self.arrivals + cost // self.ASK_EVERY
            if settled > bound:
                bound = settled
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
        cut = max(0, len(self.times) - self.max_held * 3 // 4)
        if self.held_bytes - sum(self.sizes[:cut]) > self.max_bytes * 3 // 4:
            freed, room, sizes = 0, self.held_bytes - self.max_bytes * 3 // 4, self.sizes
            cut = 0
            while cut < len(sizes) and freed < room:
                freed += sizes[cut]
                cut += 1
        due = bisect_right(self.times, self.clock - self.window_ns)
        self.early += max(0, cut - due)
        return self._take(max(cut, due))

    def _due(self, bound: int) -> list:
        """The held requested at or before `bound`, in order."""
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
        """Everything still held, in order (the capture ended)."""
        return self._take(len(self.times))

    def note(self) -> str | None:
        """What the command says when some exchanges could not be put in their place, else None."""
        late = self.late + self.late_unanswered + self.late_bound + self.late_wire
        if not late:
            return None
        why = []
        if self.late:
            why.append(f"{self.late:,} answered more than {self.window_ns / 1e9:g} s after their request "
                       "(--window widens the reordering window)")
        if self.late_unanswered:
            why.append(f"{self.late_unanswered:,} unanswered, given up when their connection closed or the "
                       "capture ended")
        if self.late_wire:
            why.append(f"{self.late_wire:,} whose request's bytes were seen after later requests were answered "
                       "(retransmitted, or out of order on the wire)")
        if self.late_bound:
            why.append(f"{self.late_bound:,} within the window, which holds at most {self.max_held:,} exchanges "
                       f"or {self.max_bytes >> 20} MB of them")
        return (f"{count(late, 'exchange')} out of time order, written after ones requested "
                f"later: {'; '.join(why)}")


def in_time_order(windows: Iterable[list], order: TimeOrder, make: Callable[[object], object] | None = None,
                  passes: type | None = None) -> Iterator:
    """The pipeline's exchanges and raw exchanges, handed over in windows (lists, each in completion order:
    kwire.pipeline.analyze_files(..., windows=True)), in request time order through `order`: each item, or
    what `make(item)` makes of it (those it makes None of dropped; the size held for a bytes one is its
    length; items of type `passes` are held as they are). Closing the generator closes `windows`."""
    add = order.add
    try:
        for window in windows:
            for item in window:
                at, done, size = exchange_times(item)
                if make is not None and type(item) is not passes:
                    made = make(item)
                    if made is None:
                        continue
                    if type(made) is bytes:
                        size = len(made)
                else:
                    made = item
                ready = add(at, done, size, item.given_up_ts_ns is not None, made)
                if ready:
                    yield from ready
            ready = order.settle()
            if ready:
                yield from ready
        yield from order.finish()
    finally:
        end = getattr(windows, "close", None)
        if end is not None:
            end()
