"""Decoding and rendering on worker processes, the output still in capture order.

The main process reads the capture, reassembles TCP and pairs frames (kwire.pipeline); decoding
the bodies and rendering them is most of the remaining work and needs nothing but the exchange's
own bytes, so it can run elsewhere. `OrderedRenderer` takes the pipeline's output in order:
Exchanges it renders itself, RawExchanges (those `offloadable` picks) it ships in batches to a
pool of worker processes, and it hands back rendered bytes strictly in the order they came.

What stays in the main process: exchanges of the apis kwire.enrich reads or changes (Metadata
names topic ids for later Fetches, Fetch requests remember offsets for lag: that state lives in
one process and needs the capture's order) and responses without a request (nothing to decode).

Bounded: at most `max_inflight` batches are out at a time; the main process waits for the oldest
when there are more. The pool starts with the first full batch, so small captures never pay for it.
Bodies travel as plain bytes in flat tuples (kwire.exchanges.exchange_parts), never as objects of
ours; a worker's result is bytes and a count. Output is byte-for-byte what one process writes.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import deque
from typing import Callable, Iterator

from kwire.exchanges import build_from_parts, exchange_parts
from kwire.kafka.pairing import RawExchange
from kwire.model import Exchange

# Api keys whose exchanges kwire.enrich.Enricher reads or changes: Fetch, ListOffsets, Metadata,
# OffsetCommit, OffsetFetch, ShareFetch, ShareAcknowledge (tests/test_parallel.py checks the
# Enricher leaves every other api alone).
STATEFUL_API_KEYS = frozenset({1, 2, 3, 8, 9, 78, 79})
BATCH = 512  # exchanges per batch sent to a worker
MIN_CPUS = 2
MAX_QUEUED = 4096  # texts rendered here that may wait behind a batch before the main process waits


def offloadable(raw: RawExchange) -> bool:
    """Can this exchange be decoded and rendered in another process, in any order?"""
    req = raw.request
    return req is not None and req.header.api_key not in STATEFUL_API_KEYS


def default_jobs() -> int:
    """Worker processes to use when the user did not say: one per CPU this process may run on,
    none on a single CPU (the main process would only compete with its workers)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return cpus if cpus >= MIN_CPUS else 0


# ---- the worker side: module state set once per process by the pool's initializer ------------

_render: Callable[[Exchange], bytes | None] | None = None


def _init_worker(render: Callable[[Exchange], bytes | None]) -> None:
    global _render
    _render = render


def _render_batch(batch: list[tuple], render=None) -> tuple[list[bytes], int]:
    """Rendered bytes of each exchange of a batch (b"" when filtered out), and how many had
    decode errors. In a worker, `render` is the one its initializer was given."""
    render = render or _render
    out = []
    errors = 0
    for parts in batch:
        ex = build_from_parts(parts)
        if ex.request_error or ex.response_error:
            errors += 1
        out.append(render(ex) or b"")
    return out, errors


# ---- the main side ---------------------------------------------------------------------------


class _Done:
    """A batch rendered in the main process, queued like a worker's result."""

    def __init__(self, texts: list[bytes], errors: int):
        self.value = (texts, errors)

    def ready(self) -> bool:
        return True

    def get(self):
        return self.value


class OrderedRenderer:
    """feed(item) for each item analyze_files(..., offload=offloadable) yields, then finish();
    both yield rendered bytes in capture order. `render(exchange) -> bytes | None` (None: filtered
    out) must be a picklable module-level function or object: workers get a copy of it.
    `on_errors(n)` is told the decode errors found in the workers."""

    def __init__(self, render: Callable[[Exchange], bytes | None], jobs: int,
                 on_errors: Callable[[int], None], *, batch: int | None = None, max_inflight: int | None = None):
        self.render = render
        self.jobs = jobs
        self.on_errors = on_errors
        self.batch_size = batch or BATCH
        self.max_inflight = max_inflight or 2 * jobs + 2
        self._batch: list[tuple] = []
        self._between: list[tuple[int, bytes]] = []  # (batch position, text) rendered here meanwhile
        self._queue: deque = deque()  # bytes (ready) or AsyncResult (a batch out at a worker)
        self._inflight = 0
        self._pool = None

    def feed(self, item) -> Iterator[bytes]:
        if type(item) is RawExchange:
            if not self.jobs:
                raise TypeError("a RawExchange fed to an OrderedRenderer without workers")
            self._batch.append(exchange_parts(item, owned=True))
            if len(self._batch) >= self.batch_size:
                self._ship()
                yield from self._ready()
            return
        text = self.render(item)
        if not text:
            return
        if self._batch:
            # Rendered here, but its place is after the batch's exchanges so far.
            self._between.append((len(self._batch), text))
        elif self._queue:
            self._queue.append(text)
            yield from self._ready()
        else:
            yield text

    def finish(self) -> Iterator[bytes]:
        if self._batch:
            if self._pool is None:
                # Not even one whole batch: not worth starting workers for.
                texts, errors = _render_batch(self._batch, self.render)
                self._queue.append((_Done(texts, errors), self._between))
                self._inflight += 1
                self._batch = []
                self._between = []
            else:
                self._ship()
        yield from self._ready(wait=True)
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def _ship(self) -> None:
        if self._pool is None:
            self._pool = _start_pool(self.jobs, self.render)
        result = self._pool.apply_async(_render_batch, (self._batch,))
        self._queue.append((result, self._between))
        self._inflight += 1
        self._batch = []
        self._between = []

    def _ready(self, wait: bool = False) -> Iterator[bytes]:
        """What is done at the head of the queue; waits for the oldest batch while too many are out
        (or for everything when `wait`)."""
        queue = self._queue
        while queue:
            head = queue[0]
            if type(head) is bytes:
                queue.popleft()
                yield head
                continue
            result, between = head
            if not (wait or self._inflight > self.max_inflight or len(queue) > MAX_QUEUED or result.ready()):
                return
            texts, errors = result.get()
            queue.popleft()
            self._inflight -= 1
            if errors:
                self.on_errors(errors)
            if between:
                merged = []
                j = 0
                for i, text in enumerate(texts):
                    while j < len(between) and between[j][0] == i:
                        merged.append(between[j][1])
                        j += 1
                    merged.append(text)
                merged.extend(text for _, text in between[j:])
                texts = merged
            yield b"".join(texts)


def _start_pool(jobs: int, render):
    # fork: the workers start with kwire imported and the decoders compiled; elsewhere, spawn.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    return context.Pool(jobs, initializer=_init_worker, initargs=(render,))
