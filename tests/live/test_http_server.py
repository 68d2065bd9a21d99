"""kwire.live.http_server, in this process with small bounds: past the connection bound the connection that
waited longest for its request is evicted (503) and a scrape is answered; a request that does not come in time
is 408, an answer not taken in time is closed; when every held connection is being answered a new one is 503 at
once; scrapes waiting together share one render; refusals and failures are counted by kind, and the service goes
on. Outcomes are counted; the waits are hang guards, not timings."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from kwire.live.http_request import Outcome
from kwire.live.http_server import HttpServer
from tests.hostile3.scrapes import scrape

BODY = b"kwire_up 1\n" * 1000
GUARD_S = 20.0


class Figures:
    """negotiate() for the server: renders counted, held back while `gate` is closed."""

    def __init__(self, body: bytes = BODY):
        self.body = body
        self.renders = 0
        self.gate = threading.Event()
        self.gate.set()
        self.fail = False

    def negotiate(self, request):
        return request.headers.get("accept", ""), self._render

    def _render(self):
        self.renders += 1
        self.gate.wait(GUARD_S)
        if self.fail:
            raise RuntimeError("no figures")
        return self.body, "text/plain; version=0.0.4", None


@pytest.fixture
def serve():
    started = []

    def start(figures=None, **bounds):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)
        figures = figures or Figures()
        server = HttpServer(sock, figures.negotiate, **bounds)
        server.start()
        started.append((server, figures))
        return server, figures, sock.getsockname()[1]

    yield start
    for server, figures in started:
        figures.gate.set()
        server.stop()


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + GUARD_S
    while not condition():
        assert time.monotonic() < deadline, f"hang guard: still not {what}"
        time.sleep(0.01)


def _connect(port: int, send: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=GUARD_S)
    if send:
        sock.sendall(send)
    return sock


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_idle_connections_past_the_bound_are_evicted_and_a_scrape_is_answered(serve):
    server, _, port = serve(max_connections=8, read_timeout_s=60.0)
    idle = [_connect(port) for _ in range(20)]
    # the server counts an eviction before it holds the connection that made it: wait for both
    _until(lambda: server.counts[Outcome.EVICTED] == 12 and server.open == 8, "12 evicted, 8 open")
    assert server.counts[Outcome.EVICTED] == 12 and server.open == 8
    got = scrape("127.0.0.1", port, GUARD_S)
    assert (got.status, got.complete, got.body) == (200, True, BODY)
    assert server.counts[Outcome.EVICTED] == 13  # the scrape took the oldest idle one's place (counted first)
    assert _answer(idle[0]).startswith(b"HTTP/1.1 503 Service Unavailable\r\n")  # the first evicted
    for sock in idle:
        sock.close()


def test_a_request_that_does_not_come_in_time_is_408(serve):
    server, _, port = serve(read_timeout_s=0.3)
    slow = _connect(port, b"GET /metr")
    assert _answer(slow).startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert server.counts[Outcome.READ_TIMEOUT] == 1 and server.open == 0


def test_an_answer_not_taken_in_time_is_closed(serve):
    server, _, port = serve(Figures(b"x" * (64 << 20)), write_timeout_s=0.5)
    reader = socket.socket()
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    reader.connect(("127.0.0.1", port))
    reader.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")  # and never reads
    _until(lambda: server.counts[Outcome.WRITE_TIMEOUT] == 1, "closed for not reading")
    assert server.open == 0 and server.counts[Outcome.ANSWERED] == 0
    reader.close()


def test_when_every_held_connection_is_answered_a_new_one_is_503_at_once(serve):
    figures = Figures()
    server, _, port = serve(figures, max_connections=4)
    figures.gate.clear()
    waiting = [_connect(port, b"GET /metrics HTTP/1.1\r\n\r\n") for _ in range(4)]
    _until(lambda: len(server._answering) == 4, "4 being answered")
    late = _connect(port, b"GET /metrics HTTP/1.1\r\n\r\n")
    assert _answer(late).startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
    assert server.counts[Outcome.BUSY] == 1
    figures.gate.set()
    assert all(_answer(sock).endswith(BODY) for sock in waiting)
    _until(lambda: server.counts[Outcome.ANSWERED] == 4, "4 answered")


def test_scrapes_that_wait_together_share_one_render(serve):
    figures = Figures()
    server, _, port = serve(figures)
    figures.gate.clear()
    first = _connect(port, b"GET /metrics HTTP/1.1\r\n\r\n")
    _until(lambda: figures.renders == 1, "the first render started")
    others = [_connect(port, b"GET /metrics HTTP/1.1\r\n\r\n") for _ in range(30)]
    head = _connect(port, b"HEAD /metrics HTTP/1.1\r\n\r\n")
    _until(lambda: len(server._answering) == 32, "32 being answered")
    figures.gate.set()
    assert all(_answer(sock).endswith(b"\r\n\r\n" + BODY) for sock in [first, *others])
    assert _answer(head).endswith(f"Content-Length: {len(BODY)}\r\nConnection: close\r\n\r\n".encode())
    assert figures.renders == 2  # the first, and one for the 31 that came while it was being made
    _until(lambda: server.counts[Outcome.ANSWERED] == 32, "32 answered")


def test_refusals_are_counted_by_kind_and_the_service_goes_on(serve):
    figures = Figures()
    server, _, port = serve(figures)
    sent = {Outcome.BAD_REQUEST: b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n",
            Outcome.TOO_LARGE: b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 20_000,
            Outcome.NOT_FOUND: b"GET / HTTP/1.1\r\n\r\n",
            Outcome.NOT_ALLOWED: b"DELETE /metrics HTTP/1.1\r\n\r\n"}
    for outcome, data in sent.items():
        with _connect(port, data) as sock:
            assert _answer(sock).startswith(f"HTTP/1.1 {outcome.status} ".encode())
    _connect(port).close()
    figures.fail = True
    failed = scrape("127.0.0.1", port, GUARD_S)
    assert failed.status == 500 and b"kwire: error: making the metrics: RuntimeError: no figures" in failed.body
    figures.fail = False
    assert scrape("127.0.0.1", port, GUARD_S).status == 200
    expected = {**dict.fromkeys(sent, 1), Outcome.CLIENT_CLOSED: 1, Outcome.ERROR: 1, Outcome.ANSWERED: 1}
    _until(lambda: sum(server.counts.values()) == 7, "every connection counted")  # the last, once written
    assert {o: n for o, n in server.counts.items() if n} == expected
