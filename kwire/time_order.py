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

from typing import Callable, Iterable, Iterator

from kwire.counts import count
from kwire.model import Exchange
from kwire.native.time_queue import TimeQueue

WINDOW_NS = 10_000_000_000  # 10 s: the longest waits of the bundled captures' answered requests are 3-5 s
# (long polls, JoinGroups in a rebalance), KafkaJS's 15 s JoinGroups excepted
MAX_HELD = 10_000  # exchanges waiting: 1 s of a busy broker's 10,000 a second, twice a long poll's wait
MAX_HELD_BYTES = 16 << 20  # of what is held for them (rendered lines; wire bytes of an exchange held whole)

Settled = Callable[[int], tuple[int, int]]  # kwire.pipeline.Pipeline.settled


def exchange_times(item) -> tuple[int, int, int, bool]:
    """(request time, completion time, wire bytes, given up) of an Exchange or a RawExchange (kwire.native.kafka_pairing)."""
    given_up = item.given_up_ts_ns
    if type(item) is Exchange:
        done = item.response_ts_ns or given_up or item.request_ts_ns or 0
        return item.ts_ns, done, (item.request_size or 0) + (item.response_size or 0), given_up is not None
    request = item.request
    done = item.response_ts_ns or given_up or (request.ts_ns if request is not None else 0)
    if request is None:
        return done, done, item.response_size or 0, given_up is not None
    return request.ts_ns, done, request.held + (item.response_size or 0), given_up is not None


class TimeOrder(TimeQueue):
    """add(...) for each exchange in completion order, settle() after each window of them the pipeline
    hands over (having been told to `watch` kwire.pipeline.Pipeline.settled), then finish(); each returns
    what is ready to go on, in request time order (see the module's docstring). What is held is the
    caller's: the exchange itself, or what was made of it (a rendered line holds far less than a decoded
    exchange). The bookkeeping is the native core's (kwire.native.time_queue: the held in sorted columns,
    no object made per exchange); this class says what it means."""

    __slots__ = ()

    def __init__(self, window_ns: int = WINDOW_NS, max_held: int = MAX_HELD, max_bytes: int = MAX_HELD_BYTES):
        super().__init__(window_ns, max_held, max_bytes)

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
    try:
        for window in windows:
            ready = order.add_all(window, exchange_times, make, passes)
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
