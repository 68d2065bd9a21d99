"""Decoding and rendering on worker processes, the output still in capture order.

The main process reads the capture, reassembles TCP and pairs frames (kwire.pipeline); decoding
the bodies and rendering them is most of the remaining work and needs nothing but the exchange's
own bytes, so it can run elsewhere. `OrderedRenderer` takes the pipeline's output in order:
Exchanges it renders itself, RawExchanges (those kwire.native.exchange_sink.offloadable picks) it ships in batches to a
pool of worker processes, and it hands back rendered bytes strictly in the order they came.

What stays in the main process: exchanges kwire.native.exchange_enrich reads or changes (kwire.native.exchange_enrich.enriched(api,
version): a Metadata answer names topic ids for later Fetches, Fetch requests remember offsets for
lag; that state lives in one process and needs the capture's order) and responses without a
request (nothing to decode).

Bounded: at most `max_inflight` batches are out at a time; the main process waits for the oldest
when there are more. The pool starts with the first full batch, so small captures never pay for it.
A batch travels as one bytes object: each exchange's kwire.native.exchange_build.ExchangeParts written into it
as it comes (kwire.native.exchange_wire), between kwire's own processes (kwire.forkpool: forked workers,
pipes); a worker's result is a batch's rendered bytes in one piece and their sizes (RenderEach),
and a count. Output is byte-for-byte what one process writes.

`kwire stats` folds instead (FoldedBatches: an Aggregator per worker, handed over now and then); a
producer's Produce exchanges all go to one worker, in capture order (`produce_shard`), since which of their
batches are read for resends depends on the batches before them: its document is the same with any number
of workers, whatever the scheduling.
"""

from __future__ import annotations

import os
from array import array
from collections import deque
from typing import Callable, Iterator

from kwire.analytics.resend_state import shard_of
from kwire.native.exchange_build import build_from_parts, is_malformed
from kwire.forkpool import ForkPool, WorkerDied, can_fork
from kwire.native.kafka_pairing import RawExchange
from kwire.model import Exchange
from kwire.native.exchange_sink import PRODUCE
from kwire.native.exchange_wire import PartsWriter, unpack

# Exchanges per batch sent to a worker, and batches out at a time for each worker and for the main process
# (max_inflight: 4 x (jobs + 1)): 256 and 4 rather than 512 and 2 (the same exchanges in flight, in pieces half
# the size), inspect --json on the 400k capture went from 1.32 to 1.22 s (medians of 6, interleaved,
# 2026-11-27): a worker starts sooner and waits less.
BATCH = 256
INFLIGHT_PER_JOB = 4
BATCH_BYTES = 1 << 20  # or fewer, when their frames add up to this
MIN_CPUS = 2
MAX_QUEUED = 4096  # texts rendered here that may wait in the tag of one batch in progress
MAX_QUEUED_BYTES = 8 << 20  # or fewer, when they add up to this (a Produce of 1,000 batches: 800 KB of JSON)


def _test_knob(name: str, default: int) -> int:
    """A setting only tests change (docs/tests.md): a positive number from the environment, else the default."""
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


# Test knobs: KWIRE_TEST_BATCH exchanges per batch makes workers start and share the traffic even on a small
# capture; KWIRE_TEST_HOLD_BYTES makes a folding worker hand its state over that often (kwire stats).
BATCH = _test_knob("KWIRE_TEST_BATCH", BATCH)


def produce_shard(raw: RawExchange) -> int | None:
    """The shard of a Produce exchange's producer (its client id, else its address;
    kwire.analytics.resend_state.shard_of), None for every other exchange: FoldedBatches' `route` in
    `kwire stats`, and the decode stage's of `kwire spark` (kwire.spark.spread)."""
    req = raw.request
    if req is None or req.header.api_key != PRODUCE:
        return None
    producer = req.header.client_id
    if not producer:
        conn = raw.conn
        names = conn.names if conn.names is not None else conn.endpoint_names()
        producer = names[0] if raw.client_direction == 0 else names[1]
    return shard_of(producer)


def default_jobs() -> int:
    """Worker processes to use when the user did not say: one per CPU this process may run on,
    none on a single CPU (the main process would only compete with its workers)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return cpus if cpus >= MIN_CPUS and can_fork() else 0


def _run_batch(packed: bytes, task) -> tuple[object, int]:
    """The task's result on a packed batch of exchange parts (decoded here, in order), and how many of
    them had decode errors."""
    exchanges, errors = decode_packed(packed)
    return task(exchanges), errors


def decode_packed(packed: bytes) -> tuple[list[Exchange], int]:
    """A batch of exchange parts (kwire.native.exchange_wire) decoded, in order, and how many of them had decode
    errors."""
    exchanges = [build_from_parts(parts) for parts in unpack(packed)]
    errors = 0
    for ex in exchanges:
        if is_malformed(ex):
            errors += 1
    return exchanges, errors


class _BatchWork:
    """What a worker does with each batch it is sent (kwire.forkpool's `work`): a packed batch."""

    def __init__(self, task):
        self.task = task

    def __call__(self, packed: bytes) -> tuple[object, int]:
        return _run_batch(packed, self.task)


# ---- the main side ---------------------------------------------------------------------------


class _Done:
    """A batch run in the main process, queued like a worker's ticket (kwire.forkpool.Ticket)."""

    def __init__(self, value):
        self.answer = (value,)

    def done(self) -> bool:
        return True

    def result(self):
        return self.answer


class Batches:
    """RawExchanges in, batches of them run by `task(exchanges) -> result` on `jobs` worker
    processes, results out in the order the batches were made. Workers are forked
    (kwire.forkpool): they have `task` as it was when the pool started; its results must be
    picklable.

    add(raw) queues an exchange; a full batch goes to a worker (the pool starts with the first one).
    flush() sends the batch in progress, or runs it here when no worker was ever needed. done(wait)
    yields (result, tag of the batch, decode errors) of the batches finished, in order; it waits for
    the oldest while more than `max_inflight` are out, or for all when `wait`. `tag` is the caller's
    note on the batch in progress, handed back with its result.

    A worker that dies (killed, out of memory) breaks the pool: its batches, and every later one,
    are then run here, so the output is still whole (`worker_failures` counts the batches redone).
    A batch whose task raised in a worker is run again here, where the exception can surface."""

    def __init__(self, task: Callable[[list[Exchange]], object], jobs: int, *, batch: int | None = None,
                 max_inflight: int | None = None):
        if jobs < 1:
            raise ValueError("Batches needs at least one worker process")
        self.task = task
        self.jobs = jobs
        self.batch_size = batch or BATCH
        self.max_inflight = max_inflight or INFLIGHT_PER_JOB * (jobs + 1)
        self.batch = PartsWriter()  # the batch in progress
        self.tag = None
        self.worker_failures = 0
        self._out: deque = deque()  # (Ticket or _Done, tag, the batch while a worker has it)
        self._pool = None
        self._broken = False

    def add(self, raw: RawExchange) -> bool:
        """Queue one exchange; True when that filled a batch (which went to a worker)."""
        batch = self.batch
        batch.add(raw)
        if batch.rows >= self.batch_size or batch.frame_bytes >= BATCH_BYTES:
            self._send()
            return True
        return False

    def flush(self) -> None:
        """Send the batch in progress (or run it here: when no worker was ever needed, or when it is
        only a tag)."""
        if not self.batch.rows and self.tag is None:
            return
        if self._pool is None or not self.batch.rows:
            self._run_here()
        else:
            self._send()

    def _run_here(self) -> None:
        self._out.append((_Done(_run_batch(self.batch.getvalue(), self.task)), self.tag, None))
        self._clear()

    def _clear(self) -> None:
        self.batch = PartsWriter()
        self.tag = None

    def _send(self) -> None:
        if self._broken:
            self._run_here()
            return
        if self._pool is None:
            self._pool = _start_pool(self.jobs, self._work())
        try:
            entry = self._submit()
        except WorkerDied:
            self._lost_pool()
            self._run_here()
            return
        self._out.append(entry)
        self._clear()

    # What a subclass changes: the workers' side, how a batch is sent (what _out keeps of it), a lost pool.

    def _work(self):
        return _BatchWork(self.task)

    def _submit(self) -> tuple:
        packed = self.batch.getvalue()
        return self._pool.submit(packed), self.tag, packed

    def _lost_pool(self) -> None:
        self._broken = True

    @property
    def pending(self) -> int:
        """Batches made and not yet handed back by done()."""
        return len(self._out)

    def done(self, wait: bool = False) -> Iterator[tuple[object, object, int]]:
        out = self._out
        while out:
            ticket, tag, batch = out[0]
            if not (wait or len(out) > self.max_inflight or ticket.done()):
                return
            try:
                answer = ticket.result()
            except WorkerDied:  # redo the batch here, and every later one
                self._broken = True
                self.worker_failures += 1
                answer = None
            (value, errors) = answer[0] if answer is not None else _run_batch(batch, self.task)
            out.popleft()
            yield value, tag, errors

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


# ---- folding: one state per worker, kept there --------------------------------------------------

HOLD_BYTES = _test_knob("KWIRE_TEST_HOLD_BYTES", 32 << 20)  # frames of the batches a worker folded and not
# handed over, per worker


class _FoldWork:
    """A worker's side of FoldedBatches: each batch folded into the worker's state by `fold(exchanges,
    state) -> state` (answer: None, kept here); None from the main process asks for the state (and the
    decode errors it holds), handed over; the worker goes on with `fold.successor(state)` when the fold has
    one (what decides how later batches fold, carried over), else afresh. A batch that raises drops the
    state (the main process redoes every batch the worker held)."""

    def __init__(self, fold):
        self.fold = fold
        self.state, self.errors = None, 0

    def __call__(self, packed: bytes | None):
        if packed is None:
            state, errors = self.state, self.errors
            self.state, self.errors = _successor(self.fold, state), 0
            return state, errors
        try:
            exchanges, errors = decode_packed(packed)
            self.state = self.fold(exchanges, self.state)
        except BaseException:
            self.state, self.errors = None, 0
            raise
        self.errors += errors
        return None


def _successor(fold, state):
    """The state to go on with after `state` is handed over: fold.successor(state), or None (afresh)."""
    successor = getattr(fold, "successor", None)
    return None if successor is None or state is None else successor(state)


class FoldedBatches(Batches):
    """Batches whose task folds: `fold(exchanges, state=None) -> state`, states that merge exactly (an
    Aggregator: any split, merged in any order, gives the same). Each worker keeps one state across
    batches and hands it over when the main process asks: once the batches it holds reach HOLD_BYTES of
    frames, and at the end (`finish`). So the main process merges a few states, not one per batch of 512
    exchanges (`kwire stats` on 290,009 small exchanges: 12.3 s of CPU with a state per batch, 8.1 s with
    one per worker, against 7.2 s in one process). done() yields (state, None, decode errors) as states
    come; a batch kept in a worker yields nothing until its state does.

    `route(raw)`: a number (a shard) for the exchanges whose state depends on the order of others of the same
    number (the Produce exchanges of a producer: which batches are read for resends, kwire.analytics.resends),
    else None. Those of one number all fold, in capture order, into one worker's states (number % jobs), each
    state going on from the last (`fold.successor`); the others go to the worker with the fewest batches
    waiting. So which worker counts what depends on the capture alone, and a state's choices on nothing
    another worker saw.

    The main process holds the batches a worker folded since its last hand-over (at most HOLD_BYTES of
    frames per worker, and a batch): when a worker dies or a batch raises in one, the pool is closed and every
    held batch of every worker is folded here, in the order that worker had them (going on from the
    successor of its last state handed over), then the rest, so the states are still whole and what was
    routed still folds in order. Batches run here (no pool yet, or none left) that were routed fold into one
    state per worker's number, handed back when done(wait=True) has taken everything else."""

    def __init__(self, fold: Callable[[list[Exchange], object], object], jobs: int, *, batch: int | None = None,
                 hold_bytes: int | None = None, route: Callable[[RawExchange], int | None] | None = None):
        super().__init__(fold, jobs, batch=batch)
        self.hold_bytes = hold_bytes or HOLD_BYTES
        self.route = route
        self._routed: dict[int, PartsWriter] = {}  # worker -> its routed batch in progress
        self._held: dict[int, list] = {}  # worker -> batches folded there since its last hand-over
        self._held_bytes: dict[int, int] = {}
        self._asked: set[int] = set()  # workers asked for their state, not yet answered
        self._carry: dict[int, object] = {}  # worker -> the successor of the last state it handed over
        self._local: dict[int, list] = {}  # worker -> [state, decode errors] of its batches folded here

    def add(self, raw: RawExchange) -> bool:
        slot = None if self.route is None else self.route(raw)
        if slot is None:
            return super().add(raw)
        worker = slot % self.jobs
        batch = self._routed.get(worker)
        if batch is None:
            batch = self._routed[worker] = PartsWriter()
        batch.add(raw)
        if batch.rows >= self.batch_size or batch.frame_bytes >= BATCH_BYTES:
            self._send_routed(worker)
            return True
        return False

    def flush(self) -> None:
        super().flush()
        for worker in sorted(self._routed):
            if self._pool is None:
                self._fold_here(worker, self._routed.pop(worker).getvalue())
            else:
                self._send_routed(worker)

    def _send_routed(self, worker: int) -> None:
        packed = self._routed.pop(worker).getvalue()
        if not self._broken:
            if self._pool is None:
                self._pool = _start_pool(self.jobs, self._work())
            try:
                self._out.append((self._pool.submit(packed, to=worker), len(packed), packed))
                return
            except WorkerDied:
                self._give_up()
        self._fold_here(worker, packed)

    def _fold_here(self, worker: int, packed: bytes) -> None:
        """A batch of `worker`'s folded here, after what it folded before (or the successor of its last state)."""
        exchanges, errors = decode_packed(packed)
        local = self._local.get(worker)
        if local is None:
            local = self._local[worker] = [self._carry.pop(worker, None), 0]
        local[0] = self.task(exchanges, local[0])
        local[1] += errors

    def _run_here(self) -> None:
        if self.batch.rows:
            self._out.append((_Done(_run_batch(self.batch.getvalue(), self.task)), 0, None))
        self._clear()

    def _work(self):
        return _FoldWork(self.task)

    def _submit(self) -> tuple:
        packed = self.batch.getvalue()  # held so: in the bytes of its frames and little more
        return self._pool.submit(packed), len(packed), packed

    def _lost_pool(self) -> None:
        self._give_up()

    def finish(self) -> None:
        """The batches in progress, then every worker's state: asked for (done(wait=True) collects them)."""
        self.flush()
        if self._pool is not None and not self._broken:
            for worker in range(self._pool.jobs):
                self._ask(worker)

    def _ask(self, worker: int) -> None:
        try:
            self._out.append((self._pool.submit(None, to=worker), 0, None))
            self._asked.add(worker)
        except WorkerDied:
            self._give_up()

    def done(self, wait: bool = False) -> Iterator[tuple[object, object, int]]:
        out = self._out
        while out:
            ticket, size, batch = out[0]
            if not (wait or len(out) > self.max_inflight or ticket.done()):
                return
            out.popleft()
            if type(ticket) is _Done:
                (value, errors) = ticket.result()[0]
                yield value, None, errors
                continue
            try:
                answer = ticket.result()
            except WorkerDied:
                answer = None
            worker = ticket.worker_index
            if answer is None:  # the worker died, or the batch raised there: its state is gone
                if batch is not None:
                    self._held.setdefault(worker, []).append(batch)
                self._give_up()
                continue
            if batch is not None:  # kept in the worker
                self._held.setdefault(worker, []).append(batch)
                self._held_bytes[worker] = self._held_bytes.get(worker, 0) + size
                if self._held_bytes[worker] >= self.hold_bytes and worker not in self._asked and not self._broken:
                    self._ask(worker)
                continue
            self._held.pop(worker, None)  # the state holds them all: every batch sent before the asking
            self._held_bytes.pop(worker, None)
            self._asked.discard(worker)
            state, errors = answer[0]
            self._carry[worker] = _successor(self.task, state)  # what the worker goes on with
            if state is not None or errors:
                yield state, None, errors
        if wait:
            local, self._local = self._local, {}
            for worker in sorted(local):
                state, errors = local[worker]
                yield state, None, errors

    def _give_up(self) -> None:
        """The pool closed; every held batch of every worker, and every batch still out, folded here, each
        worker's in the order it had them; later batches run here."""
        if self._broken:
            return
        self._broken = True
        held, self._held, self._held_bytes, self._asked = self._held, {}, {}, set()
        rest = [(ticket if type(ticket) is _Done else ticket.worker_index, data) for ticket, _, data in self._out]
        self._out.clear()
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        for worker in sorted(held):
            for data in held[worker]:
                self._redo(worker, data)
        for ticket, data in rest:
            if type(ticket) is _Done:
                self._out.append((ticket, 0, None))
            elif data is not None:  # a batch (a hand-over asked for is None: its batches were held)
                self._redo(ticket, data)

    def _redo(self, worker: int, data: bytes) -> None:
        self.worker_failures += 1  # Batches' count: the batches redone here for a lost worker
        self._fold_here(worker, data)


def _start_pool(jobs: int, work) -> ForkPool:
    import gc

    # Forked workers share the parent's memory until they write to it, and the collector's walks
    # over inherited objects write (refcounts, gc links): out of its reach, they stay shared. (The
    # workers inherit the parent's collector thresholds too; see kwire.gc_policy.)
    gc.freeze()
    return ForkPool(jobs, work)


class RenderEach:
    """A Batches task: `render(exchange) -> bytes | None` on each exchange (b"" for None), handed back
    as one bytes object (what travels back from a worker: one object to serialize and write, not one per
    exchange) and the size of each exchange's part of it (an array, read only when texts rendered in
    the main process must be slotted in between)."""

    def __init__(self, render: Callable[[Exchange], bytes | None]):
        self.render = render

    def __call__(self, exchanges: list[Exchange]) -> tuple[bytes, array]:
        render = self.render
        texts = [render(ex) or b"" for ex in exchanges]
        return b"".join(texts), array("Q", map(len, texts))


def split_texts(joined: bytes, sizes) -> list[bytes]:
    """RenderEach's result back as one text per exchange."""
    texts = []
    pos = 0
    for size in sizes:
        texts.append(joined[pos:pos + size])
        pos += size
    return texts


class OrderedRenderer:
    """feed(item) for each item analyze_files(..., offload=offloadable) yields, then finish();
    both yield rendered bytes in capture order. Exchanges are rendered here; RawExchanges go to
    workers (Batches). A text rendered here while batches are out or in progress waits in the tag of
    the batch in progress, at its position there: at most MAX_QUEUED texts or MAX_QUEUED_BYTES, then
    the batch goes out as it is. `on_errors(n)` is told the decode errors found in
    the workers."""

    def __init__(self, render: Callable[[Exchange], bytes | None], jobs: int,
                 on_errors: Callable[[int], None], *, batch: int | None = None, max_inflight: int | None = None):
        self.render = render
        self.on_errors = on_errors
        self.batches = Batches(RenderEach(render), jobs, batch=batch, max_inflight=max_inflight)
        self.queued_bytes = 0  # of the texts in the tag of the batch in progress

    def feed(self, item) -> list[tuple[bytes, int]] | tuple:
        """The texts ready after `item`, in order, each with the number of exchanges it holds (a list,
        or an empty tuple: most items make none, and a generator per item would cost the main process
        more than the item itself). A rendered exchange is one line, so that number is its lines:
        counting the newlines of the texts instead cost the main process a tenth of its time. An item may
        also be an exchange's text rendered already (bytes: kwire.time_order holds lines, not exchanges)."""
        batches = self.batches
        if type(item) is RawExchange:
            if batches.add(item):
                return list(self._ready())
            return ()
        text = item if type(item) is bytes else self.render(item)
        if not text:
            return ()
        if not batches.batch.rows and not batches.pending:
            return ((text, 1),)  # nothing is ahead of it
        if batches.tag is None:
            batches.tag = []
            self.queued_bytes = 0
        batches.tag.append((batches.batch.rows, text))
        self.queued_bytes += len(text)
        if len(batches.tag) >= MAX_QUEUED or self.queued_bytes >= MAX_QUEUED_BYTES:
            batches.flush()  # bounded: the batch in progress goes out as it is
            return list(self._ready())
        return ()

    def finish(self) -> Iterator[tuple[bytes, int]]:
        self.batches.flush()
        yield from self._ready(wait=True)
        self.close()

    def close(self) -> None:
        self.batches.close()

    def _ready(self, wait: bool = False) -> Iterator[tuple[bytes, int]]:
        """The batches finished, in order, with the texts rendered here slotted in; each with the
        number of exchanges it holds (those rendered as nothing not counted)."""
        for (joined, sizes), between, errors in self.batches.done(wait):
            if errors:
                self.on_errors(errors)
            if between:
                yield from _joined(_merge(split_texts(joined, sizes), between))
            elif joined:
                yield joined, len(sizes) - sizes.count(0)


def _joined(texts: list[bytes]) -> Iterator[tuple[bytes, int]]:
    """The texts in order, small ones joined (one write each batch), a big one on its own: joining
    would copy it (a --records exchange can be 300 MB of JSON); each with how many texts it holds
    (empty ones not counted)."""
    small: list[bytes] = []
    for text in texts:
        if not text:
            continue
        if len(text) < BATCH_BYTES:
            small.append(text)
            continue
        if small:
            yield b"".join(small), len(small)
            small = []
        yield text, 1
    if small:
        yield b"".join(small), len(small)


def _merge(texts: list[bytes], between: list[tuple[int, bytes]]) -> list[bytes]:
    """A batch's texts with those rendered here slotted in at their positions."""
    merged = []
    j = 0
    for i, text in enumerate(texts):
        while j < len(between) and between[j][0] == i:
            merged.append(between[j][1])
            j += 1
        merged.append(text)
    merged.extend(text for _, text in between[j:])
    return merged
