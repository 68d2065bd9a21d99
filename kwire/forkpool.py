"""Worker processes forked from this one and fed through pipes: the pool kwire.parallel runs its
batches on.

`ForkPool(jobs, work)` forks `jobs` workers that inherit everything the parent has (kwire imported,
decoders compiled, `work` itself: nothing is pickled but the tasks and their results). `submit(task)`
hands a task to the worker with the fewest outstanding (`submit(task, to=i)`: to worker i, whose `work` may
keep state from task to task) and returns a `Ticket` (`ticket.worker_index` says which); `ticket.done()` says
without waiting whether its result is here, `ticket.result()` waits for it. Each worker answers its
tasks in the order it got them.

Wire, both ways: an 8-byte little-endian length, then a pickle. A task is any picklable value; a
result is `(value,)`, or `None` when `work(task)` raised in the worker (the caller redoes the task
itself, where the exception can surface with its traceback).

Why not concurrent.futures.ProcessPoolExecutor: importing multiprocessing and concurrent.futures,
and the executor's feeder and manager threads contending for the GIL with the main thread, cost the
main process of `kwire inspect --json` on a capture of 20,000 small exchanges a tenth of its CPU
time (0.51 s against 0.46 s); here the main thread writes tasks and reads results itself, with select() so that a worker
blocked on writing a result can never deadlock against a parent blocked on writing a task.

A worker that dies (killed, out of memory) makes `result()` of its tickets raise `WorkerDied`, and
the pool `broken`: the caller runs what is left itself. Workers leave with os._exit, so they never
flush the parent's stdio buffers nor run its exit handlers. Linux and other systems with fork().
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct

LENGTH = struct.Struct("<Q")
PIPE_SIZE = 1 << 20  # asked of the kernel for every pipe (fewer wake-ups per task); best effort
READ_SIZE = 1 << 20
# Workers run a little below the parent's priority. The parent is the run's one serial stage (it
# reads, reassembles and pairs; workers only take what it hands out), and with a worker per CPU
# there is one process more than CPUs: at equal priority the parent waits its turn behind its own
# workers. Measured on small.pcap, 2 CPUs: inspect --json 0.59 s at 0, 0.56 s at 5 (medians of 12).
WORKER_NICE = 5


def pickled(task) -> bytes:
    """A task as it travels to a worker."""
    return pickle.dumps(task, pickle.HIGHEST_PROTOCOL)


def unpickled(data: bytes):
    """A task `pickled` made (by this process, from values it built: never captured bytes as a pickle)."""
    return pickle.loads(data)


class WorkerDied(RuntimeError):
    """A worker process ended before answering (killed, out of memory, crashed)."""


def can_fork() -> bool:
    return hasattr(os, "fork")


class Ticket:
    """The place of one task's result: which worker has it, and its number among that worker's."""

    __slots__ = ("pool", "worker", "number")

    def __init__(self, pool: ForkPool, worker: _Worker, number: int):
        self.pool, self.worker, self.number = pool, worker, number

    @property
    def worker_index(self) -> int:
        return self.pool._workers.index(self.worker)

    def done(self) -> bool:
        if self.number not in self.worker.results and not self.worker.dead:
            self.pool._read_ready(0)
        return self.number in self.worker.results or self.worker.dead

    def result(self):
        """The task's answer, `(value,)` or None (see the module docstring); waits for it."""
        worker = self.worker
        while self.number not in worker.results:
            if worker.dead:
                raise WorkerDied(f"worker process {worker.pid} ended")
            self.pool._read_ready(None)
        return worker.results.pop(self.number)


class _Worker:
    """The parent's side of one worker: its pipes, its tasks sent and results read."""

    def __init__(self, pid: int, task_fd: int, result_fd: int):
        self.pid = pid
        self.task_fd = task_fd
        self.result_fd = result_fd
        self.sent = 0        # tasks written
        self.answered = 0    # results read
        self.results: dict[int, object] = {}  # number -> result, read and not yet taken
        self.inbox = bytearray()  # a result's length, being read
        self.body: bytearray | None = None  # a result's pickle, being read straight into it
        self.filled = 0  # bytes of body read
        self.dead = False

    @property
    def outstanding(self) -> int:
        return self.sent - self.answered


class ForkPool:
    def __init__(self, jobs: int, work):
        self.broken = False
        self._workers: list[_Worker] = []
        self._by_fd: dict[int, _Worker] = {}
        for _ in range(jobs):
            worker = self._fork(work)
            self._workers.append(worker)
            self._by_fd[worker.result_fd] = worker

    @property
    def jobs(self) -> int:
        return len(self._workers)

    def submit(self, task, to: int | None = None) -> Ticket:
        """Hand `task` to the worker with the fewest outstanding, or to worker number `to`."""
        return self.submit_pickled(pickled(task), to)

    def submit_pickled(self, data: bytes, to: int | None = None) -> Ticket:
        """submit() of a task the caller pickled itself (`pickled`: one it keeps, to redo it)."""
        if self.broken:
            raise WorkerDied("a worker process ended")
        worker = min(self._workers, key=lambda w: w.outstanding) if to is None else self._workers[to]
        self._write(worker, LENGTH.pack(len(data)) + data)
        ticket = Ticket(self, worker, worker.sent)
        worker.sent += 1
        return ticket

    def close(self) -> None:
        """Workers see their task pipe end and leave, and the parent reaps them; one still busy with
        a task whose result nobody will read (an interrupted run) is killed instead."""
        for worker in self._workers:
            if worker.outstanding and not worker.dead:
                _kill(worker.pid)
            _close(worker.task_fd)
            _close(worker.result_fd)
        for worker in self._workers:
            _reap(worker.pid)
        self._workers = []
        self._by_fd = {}

    # -- the parent's side of the pipes

    def _fork(self, work) -> _Worker:
        task_read, task_write = os.pipe()
        result_read, result_write = os.pipe()
        for fd in (task_write, result_write):
            _enlarge(fd)
        pid = os.fork()
        if pid == 0:  # the worker: drop every parent-side end it inherited, then serve
            for fd in [task_write, result_read] + [fd for w in self._workers for fd in (w.task_fd, w.result_fd)]:
                _close(fd)
            _serve(task_read, result_write, work)
        os.close(task_read)
        os.close(result_write)
        os.set_blocking(task_write, False)
        return _Worker(pid, task_write, result_read)

    def _write(self, worker: _Worker, data: bytes) -> None:
        """All of `data` into the worker's task pipe, reading results meanwhile (no deadlock)."""
        view = memoryview(data)
        while view:
            if worker.dead:
                self.broken = True
                raise WorkerDied(f"worker process {worker.pid} ended")
            try:
                view = view[os.write(worker.task_fd, view):]
                continue
            except BlockingIOError:
                pass
            except BrokenPipeError:
                worker.dead = self.broken = True
                continue
            readable, _, _ = select.select(self._live_fds(), [worker.task_fd], [])
            self._read(readable)

    def _read_ready(self, timeout: float | None) -> None:
        fds = self._live_fds()
        if fds:
            readable, _, _ = select.select(fds, [], [], timeout)
            self._read(readable)

    def _live_fds(self) -> list[int]:
        return [w.result_fd for w in self._workers if not w.dead]

    def _read(self, fds: list[int]) -> None:
        for fd in fds:
            worker = self._by_fd[fd]
            if not _read_some(fd, worker):
                worker.dead = self.broken = True


def _read_some(fd: int, worker: _Worker) -> bool:
    """What the worker's result pipe has now, read into the result under way (its length, then its
    pickle straight into a buffer of its size: no copy of a batch's texts on the way); False at the
    pipe's end. A result read whole is unpickled into worker.results."""
    if worker.body is None:
        chunk = os.read(fd, LENGTH.size - len(worker.inbox))
        if not chunk:
            return False
        worker.inbox += chunk
        if len(worker.inbox) == LENGTH.size:
            (size,) = LENGTH.unpack(worker.inbox)
            worker.inbox.clear()
            worker.body, worker.filled = bytearray(size), 0
        return True  # select() says when more is there
    body = worker.body  # never full here: a pickle is never empty, and a full body is taken below at once
    n = os.readv(fd, [memoryview(body)[worker.filled:]])
    if not n:
        return False
    worker.filled += n
    if worker.filled == len(body):
        worker.results[worker.answered] = pickle.loads(body)
        worker.answered += 1
        worker.body = None
    return True


# ---- the worker's side -----------------------------------------------------------------------


def _serve(task_fd: int, result_fd: int, work) -> None:
    """Answer tasks until the task pipe ends; never returns."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    try:
        os.nice(WORKER_NICE)
    except OSError:  # pragma: no cover - lowering one's own priority is always allowed on Linux
        pass
    code = 0
    try:
        while True:
            header = _read_exact(task_fd, LENGTH.size)
            if header is None:
                break
            task = pickle.loads(_read_exact(task_fd, LENGTH.unpack(header)[0]) or b"")
            try:
                answer = (work(task),)
            except Exception:
                answer = None
            data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
            _write_all(result_fd, LENGTH.pack(len(data)))  # apart: joining them would copy a batch's texts
            _write_all(result_fd, data)
    except BaseException:  # the parent went away (broken pipe) or anything else: leave quietly
        code = 1
    os._exit(code)


def _read_exact(fd: int, n: int) -> bytes | None:
    """n bytes from fd, or None at its end."""
    parts = []
    while n:
        chunk = os.read(fd, min(n, READ_SIZE))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ---- small helpers ---------------------------------------------------------------------------


def _enlarge(fd: int) -> None:
    import fcntl

    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (AttributeError, OSError):  # not Linux, or over /proc/sys/fs/pipe-max-size
        pass


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
