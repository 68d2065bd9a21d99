"""The metrics service's HTTP server: one thread and one selector for every connection, each one bounded.

`kwire live --metrics` ran prometheus_client's server until issue 49: a thread per connection, no timeout, a
listen backlog of 5 and one accept per wake-up, so of 1,000 scrapes at once 111 to 209 had answers in 60 s; idle or
slow clients held a thread and a descriptor each for ever. Here (docs/bounds.md, "The metrics service"):

- at most `max_connections` are held. One more evicts the held connection that has waited longest for its
  request (answered 503 and closed), so no crowd of idle or slow clients keeps a scraper out; when every held
  connection is being answered, the new one is answered 503 and closed at once. Accepting never waits: the
  loop takes every connection the kernel holds, ACCEPT_BATCH at a wake-up;
- a request's head must be whole within `read_timeout_s` of its accept (else 408, closed) and within
  `max_head_bytes` (else 431, closed); its answer must be taken within `write_timeout_s` of the request (else
  closed); one request a connection (`Connection: close`), no body ever read;
- answers are made on a thread of their own (kwire-metrics-render), never on the loop's: requests for the same
  format while its render waits to start share that render, so scrapes cost one render at a time however
  many come, and the loop goes on accepting, reading, writing and timing out while the feeder makes figures.

`HttpServer(sock, negotiate)`: `negotiate(request)` -> (key, render), requests of one key share a render, and
`render()` -> (body, content type, content encoding or None). `counts` counts how connections ended (by
kwire.live.http_request.Outcome), `open` is the number held. `start()`, `stop()`.
"""

from __future__ import annotations

import errno
import queue
import selectors
import socket
import threading
import time

from kwire.live.http_request import NEED_DATA, HeadReader, Outcome, answer, refusal, route

MAX_CONNECTIONS = 256     # well under a service's usual 1,024 descriptors; node_exporter serves 40 scrapes at once
MAX_HEAD_BYTES = 8 << 10  # request line and headers: a scrape's are some 300 bytes
READ_TIMEOUT_S = 5.0      # from the accept to the request's whole head (a scraper sends it at once)
WRITE_TIMEOUT_S = 10.0    # from the request to the answer's last byte taken (Prometheus' scrape_timeout)
ACCEPT_BATCH = 64         # connections accepted at one wake-up before the held ones are read again
LISTEN_BACKLOG = 1024     # the kernel's queue of connections not yet accepted (capped by net.core.somaxconn)
ACCEPT_PAUSE_S = 0.1      # out of descriptors with nothing to evict: accepting waits this long
REFUSALS = {outcome: refusal(outcome) for outcome in Outcome}
REFUSALS[Outcome.ANSWERED] = REFUSALS[Outcome.ERROR] = b""  # their answer has been written already
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class _Conn:
    __slots__ = ("sock", "head", "deadline", "out", "sent", "outcome", "head_only", "writing", "closed")

    def __init__(self, sock: socket.socket, limit: int, deadline: float):
        self.sock = sock
        self.head = HeadReader(limit)
        self.deadline = deadline
        self.out = memoryview(b"")
        self.sent = 0
        self.outcome = Outcome.ANSWERED
        self.head_only = self.writing = self.closed = False


class HttpServer:
    def __init__(self, sock: socket.socket, negotiate, path: str = "/metrics", max_connections: int = MAX_CONNECTIONS,
                 read_timeout_s: float = READ_TIMEOUT_S, write_timeout_s: float = WRITE_TIMEOUT_S,
                 max_head_bytes: int = MAX_HEAD_BYTES):
        sock.setblocking(False)
        self.sock = sock
        self.negotiate = negotiate
        self.path = path
        self.max_connections = max_connections
        self.read_timeout_s = read_timeout_s
        self.write_timeout_s = write_timeout_s
        self.max_head_bytes = max_head_bytes
        self.counts = {outcome: 0 for outcome in Outcome}  # every key from the start: read from other threads
        self._reading: dict[_Conn, None] = {}    # in accept order, so in deadline order: the oldest first
        self._answering: dict[_Conn, None] = {}  # in request order, so in deadline order
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._done: queue.SimpleQueue = queue.SimpleQueue()  # (connections, answer) from the render thread
        self._renders = _Renders(self._rendered)
        self._paused_until = 0.0
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="kwire-metrics-http", daemon=True)

    @property
    def open(self) -> int:
        return len(self._reading) + len(self._answering)

    def start(self) -> None:
        self._sel.register(self.sock, selectors.EVENT_READ, "listen")
        self._sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._renders.start()
        self._thread.start()

    def stop(self) -> None:
        self._stopping = True
        self._wake()
        self._thread.join(5.0)
        self._renders.stop()

    def _run(self) -> None:
        try:
            while not self._stopping:
                accept = False
                for key, events in self._sel.select(self._wait()):
                    if key.data == "listen":
                        accept = True  # after the held connections' events: theirs first, then new ones
                    elif key.data == "wake":
                        self._deliver()
                    elif not key.data.closed:  # not evicted or timed out earlier in this round
                        self._event(key.data, events)
                if accept:
                    self._accept()
                self._expire(time.monotonic())
        finally:
            for conn in [*self._reading, *self._answering]:
                conn.sock.close()
            self._sel.close()
            self.sock.close()
            self._wake_r.close()
            self._wake_w.close()

    def _event(self, conn: _Conn, events: int) -> None:
        try:
            if events & selectors.EVENT_WRITE:
                self._write(conn)
            else:
                self._read(conn)
        except Exception:  # a fault of kwire's with one connection: it ends as an error, the service goes on
            if not conn.closed:
                self._close(conn, Outcome.ERROR)

    def _wait(self) -> float:
        """Seconds until the next deadline (at most 1); accepting again once a pause is over."""
        now = time.monotonic()
        if self._paused_until and now >= self._paused_until:
            self._paused_until = 0.0
            self._sel.register(self.sock, selectors.EVENT_READ, "listen")
        due = [next(iter(held)).deadline for held in (self._reading, self._answering) if held]
        if self._paused_until:
            due.append(self._paused_until)
        return max(0.0, min([1.0, *(d - now for d in due)]))

    def _accept(self) -> None:
        for _ in range(ACCEPT_BATCH):
            try:
                sock, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionAbortedError:
                continue
            except OSError as exc:
                if exc.errno in OUT_OF_DESCRIPTORS and self._reading:
                    self._close(next(iter(self._reading)), Outcome.EVICTED)
                    continue
                self._pause()
                return
            self._held(sock)

    def _held(self, sock: socket.socket) -> None:
        """Hold a new connection, evicting the one that has waited longest for its request when at the bound."""
        sock.setblocking(False)
        if self.open >= self.max_connections:
            if not self._reading:
                self.counts[Outcome.BUSY] += 1
                _refuse(sock, Outcome.BUSY)
                sock.close()
                return
            self._close(next(iter(self._reading)), Outcome.EVICTED)
        conn = _Conn(sock, self.max_head_bytes, time.monotonic() + self.read_timeout_s)
        self._reading[conn] = None
        self._sel.register(sock, selectors.EVENT_READ, conn)
        self._event(conn, selectors.EVENT_READ)  # a scraper's request is often there with the connection

    def _pause(self) -> None:
        """Out of descriptors with no connection to give up: the kernel holds new ones a moment."""
        self._sel.unregister(self.sock)
        self._paused_until = time.monotonic() + ACCEPT_PAUSE_S

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(conn, Outcome.CLIENT_CLOSED)
            return
        got = conn.head.feed(data)
        if got is NEED_DATA:
            return
        outcome = got if isinstance(got, Outcome) else route(got, self.path)
        if outcome is not Outcome.ANSWERED:
            self._close(conn, outcome)
            return
        del self._reading[conn]
        self._answering[conn] = None
        conn.deadline = time.monotonic() + self.write_timeout_s
        conn.head_only = got.head_only
        self._sel.unregister(conn.sock)  # nothing more is read: one request a connection
        self._renders.submit(*self.negotiate(got), conn)

    def _rendered(self, conns: list, made) -> None:
        """On the render thread: hand the answer to the loop."""
        self._done.put((conns, made))
        self._wake()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:  # full (the loop has a wake-up coming anyway) or closed (stopped)
            pass

    def _deliver(self) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass
        while not self._done.empty():
            conns, made = self._done.get()
            if isinstance(made, BaseException):
                text = f"kwire: error: making the metrics: {type(made).__name__}: {made}\n".encode()
                full = head = answer(500, Outcome.ERROR.reason, text, "text/plain; charset=utf-8")
            else:
                full = answer(200, "OK", *made)
                head = answer(200, "OK", *made, head_only=True)
            for conn in conns:
                if not conn.closed:
                    conn.outcome = Outcome.ERROR if isinstance(made, BaseException) else Outcome.ANSWERED
                    conn.out = memoryview(head if conn.head_only else full)
                    self._event(conn, selectors.EVENT_WRITE)

    def _write(self, conn: _Conn) -> None:
        try:
            conn.sent += conn.sock.send(conn.out[conn.sent:])
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._close(conn, Outcome.CLIENT_CLOSED)
            return
        if conn.sent >= len(conn.out):
            self._close(conn, conn.outcome)
        elif not conn.writing:
            conn.writing = True
            self._sel.register(conn.sock, selectors.EVENT_WRITE, conn)

    def _expire(self, now: float) -> None:
        for held, outcome in ((self._reading, Outcome.READ_TIMEOUT), (self._answering, Outcome.WRITE_TIMEOUT)):
            while held and next(iter(held)).deadline <= now:
                self._close(next(iter(held)), outcome)

    def _close(self, conn: _Conn, outcome: Outcome) -> None:
        if conn.closed:
            return
        conn.closed = True
        self._reading.pop(conn, None)
        self._answering.pop(conn, None)
        try:
            self._sel.unregister(conn.sock)
        except KeyError:  # being answered: not registered while its answer is made
            pass
        self.counts[outcome] += 1  # before the client can see the answer: what it saw is counted
        _refuse(conn.sock, outcome)
        conn.sock.close()


def _refuse(sock: socket.socket, outcome: Outcome) -> None:
    """Before a close: read what the client sent (closing a socket with unread bytes resets it, and the client
    may lose the answer), then say why in one try (a refusal is some 150 bytes: an empty socket buffer takes it)."""
    try:
        for _ in range(4):
            if not sock.recv(65536):
                break
    except OSError:
        pass
    try:
        if REFUSALS[outcome]:
            sock.send(REFUSALS[outcome])
    except OSError:
        pass


class _Renders:
    """One thread making answers: requests of one key while its render waits to start share it (so each
    answer shows the figures as they were at or after its request)."""

    def __init__(self, deliver):
        self._deliver = deliver
        self._lock = threading.Lock()
        self._waiting: dict = {}  # key -> (render, [connections])
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="kwire-metrics-render", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(None)
        self._thread.join(5.0)

    def submit(self, key, render, conn) -> None:
        with self._lock:
            if key in self._waiting:
                self._waiting[key][1].append(conn)
                return
            self._waiting[key] = (render, [conn])
        self._queue.put(key)

    def _run(self) -> None:
        while (key := self._queue.get()) is not None:
            with self._lock:
                render, conns = self._waiting.pop(key)
            try:
                made = render()
            except Exception as exc:  # a scrape's answer says it (500, one line), the service goes on
                made = exc
            self._deliver(conns, made)
