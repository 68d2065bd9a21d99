"""Test-only, issue 49: crowds of hostile connections to a metrics service, and a scrape timed behind them.

`Crowd(host, port, idle=, slow=, flood=, seed=, scale=)`, a context manager, holds on one thread of its own
(one selector) `idle * scale` connections that send nothing, `slow * scale` that send a request header one
byte every `every_s` seconds and never finish it (slowloris), and `flood * scale` connections at a time that
each send garbage or a huge header (1 MiB, as much as the server takes) and are dropped (RST), at once
replaced. An idle or slow connection the server closes is opened again, so the crowd keeps its size, as an
attacker would. `crowd.counts` says what happened (opened, closed by the server, flood connections sent).

`scrape(host, port, timeout)` sends one GET /metrics and reads the answer to its end: a `Scrape` (status,
complete: the body has its Content-Length, the seconds it took, or the error). The timeout is a hang guard.

    python -m tests.hostile3.scrapes 127.0.0.1:9464 --idle 1000 --slow 1000 --flood 50 --scrapes 20 --at-once 100
"""

from __future__ import annotations

import argparse
import collections
import errno
import random
import selectors
import socket
import struct
import threading
import time
from dataclasses import dataclass

SLOW_REQUEST = b"GET /metrics HTTP/1.1\r\nHost: kwire\r\n"
HUGE_HEADER = b"GET /metrics HTTP/1.1\r\nHost: kwire\r\nX-Huge: " + b"a" * (1 << 20) + b"\r\n\r\n"
LINGER_RST = struct.pack("ii", 1, 0)  # close() sends a RST: no TIME_WAIT eats the flood's local ports


@dataclass
class Scrape:
    status: int | None
    complete: bool
    seconds: float
    body: bytes = b""
    error: str | None = None


def scrape(host: str, port: int, timeout: float = 10.0, path: str = "/metrics") -> Scrape:
    """One GET of `path`, read until the server closes or the Content-Length is reached."""
    started = time.monotonic()
    data = b""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: */*\r\n"
                         "Connection: close\r\n\r\n".encode())
            while not _whole(data):
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        return Scrape(None, False, time.monotonic() - started, data, f"{type(exc).__name__}: {exc}")
    return _answer(data, time.monotonic() - started)


def scrapes_at_once(host: str, port: int, n: int, timeout: float = 60.0) -> list[Scrape]:
    """`n` scrapes sent at once (one thread, one selector), each read to its end or until `timeout`."""
    started = time.monotonic()
    request = f"GET /metrics HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()
    sel = selectors.DefaultSelector()
    done: list[Scrape] = []
    for _ in range(n):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex((host, port))
        sel.register(sock, selectors.EVENT_WRITE, {"data": b"", "sent": False})
    while sel.get_map() and time.monotonic() - started < timeout:
        for key, _ in sel.select(timeout=0.1):
            sock, state = key.fileobj, key.data
            try:
                if not state["sent"]:
                    sock.sendall(request)  # a few dozen bytes: the socket's buffer takes them at once
                    state["sent"] = True
                    sel.modify(sock, selectors.EVENT_READ, state)
                    continue
                chunk = sock.recv(1 << 16)
                state["data"] += chunk
                if chunk and not _whole(state["data"]):
                    continue
                done.append(_answer(state["data"], time.monotonic() - started))
            except OSError as exc:
                done.append(Scrape(None, False, time.monotonic() - started, state["data"], str(exc)))
            sel.unregister(sock)
            sock.close()
    for key in list(sel.get_map().values()):
        done.append(Scrape(None, False, time.monotonic() - started, key.data["data"], "timed out"))
        key.fileobj.close()
    sel.close()
    return done


def _whole(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    length = _content_length(head) if sep else None
    return length is not None and len(body) >= length


def _content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return None


def _answer(data: bytes, seconds: float) -> Scrape:
    head, sep, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    if not sep or len(parts) < 2 or not parts[1].isdigit():
        return Scrape(None, False, seconds, data, "no HTTP answer")
    length = _content_length(head)
    return Scrape(int(parts[1]), length is not None and len(body) == length, seconds, body)


class Crowd:
    def __init__(self, host: str, port: int, idle: int = 100, slow: int = 100, flood: int = 10, seed: int = 0,
                 scale: int = 1, every_s: float = 2.0):
        self.address = (host, port)
        self.want = {"idle": idle * scale, "slow": slow * scale, "flood": flood * scale}
        self.every_s = every_s
        self.rng = random.Random(seed)
        self.counts: collections.Counter = collections.Counter()
        self._held = {kind: 0 for kind in self.want}
        self._sel = selectors.DefaultSelector()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hostile-crowd", daemon=True)

    def __enter__(self) -> "Crowd":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)

    def held(self) -> dict:
        """Connections the crowd holds now, by kind (established or connecting)."""
        return dict(self._held)

    def wait_full(self, timeout: float = 30.0) -> bool:
        """Until every idle and slow connection has been opened once (True), or the timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(self.counts[f"{kind} opened"] >= self.want[kind] for kind in ("idle", "slow")):
                return True
            time.sleep(0.05)
        return False

    def _run(self) -> None:
        next_byte = time.monotonic() + self.every_s
        try:
            while not self._stop.is_set():
                for kind in self.want:
                    while self._held[kind] < self.want[kind] and self._open(kind):
                        pass
                for key, events in self._sel.select(timeout=0.05):
                    self._event(key.fileobj, key.data, events)
                if time.monotonic() >= next_byte:
                    next_byte += self.every_s
                    self._drip()
        finally:
            for key in list(self._sel.get_map().values()):
                self._drop(key.fileobj, key.data, counted=False)
            self._sel.close()

    def _open(self, kind: str) -> bool:
        sock = socket.socket()
        sock.setblocking(False)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RST)
        code = sock.connect_ex(self.address)
        if code not in (0, errno.EINPROGRESS):
            sock.close()
            self.counts[f"{kind} refused"] += 1
            return False
        state = {"kind": kind, "connected": False, "sent": 0, "payload": self._payload(kind)}
        self._sel.register(sock, selectors.EVENT_READ | selectors.EVENT_WRITE, state)
        self._held[kind] += 1
        return True

    def _payload(self, kind: str) -> bytes:
        if kind == "slow":
            return SLOW_REQUEST
        if kind == "idle":
            return b""
        if self.rng.random() < 0.5:
            return HUGE_HEADER
        return bytes(self.rng.getrandbits(8) for _ in range(self.rng.randrange(16, 4096)))

    def _event(self, sock, state: dict, events: int) -> None:
        kind = state["kind"]
        if events & selectors.EVENT_READ:
            try:
                if sock.recv(1 << 16):
                    return  # an answer (a 4xx, a 503): the server closes next
            except OSError:
                pass
            self._drop(sock, state)
            return
        if not state["connected"]:
            if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                self._drop(sock, state, opened=False)
                return
            state["connected"] = True
            self.counts[f"{kind} opened"] += 1
            if kind != "flood":
                self._sel.modify(sock, selectors.EVENT_READ, state)
                return
        self._flood_send(sock, state)

    def _flood_send(self, sock, state: dict) -> None:
        try:
            state["sent"] += sock.send(state["payload"][state["sent"]:])
        except BlockingIOError:
            pass
        except OSError:
            self._drop(sock, state)
            return
        if state["sent"] >= len(state["payload"]) or state["sent"] >= 1 << 16:
            self.counts["flood sent"] += 1
            self._drop(sock, state, counted=False)

    def _drip(self) -> None:
        """One more byte on every slow connection (after the request line, header lines without end)."""
        for key in list(self._sel.get_map().values()):
            state = key.data
            if state["kind"] != "slow" or not state["connected"]:
                continue
            sent = state["sent"]
            byte = SLOW_REQUEST[sent:sent + 1] or b"X-a: b\r\n"[(sent - len(SLOW_REQUEST)) % 8:][:1]
            try:
                key.fileobj.send(byte)
                state["sent"] += 1
            except OSError:
                self._drop(key.fileobj, state)

    def _drop(self, sock, state: dict, counted: bool = True, opened: bool = True) -> None:
        self._sel.unregister(sock)
        sock.close()
        self._held[state["kind"]] -= 1
        if counted:
            self.counts[f"{state['kind']} closed by the server" if opened else f"{state['kind']} refused"] += 1


def summary(scrapes: list[Scrape]) -> str:
    """How many were answered with figures, refused (a status other than 200), not answered; the slowest."""
    figures = sorted(s.seconds for s in scrapes if s.status == 200 and s.complete)
    refused = collections.Counter(s.status for s in scrapes if s.status not in (None, 200))
    lost = collections.Counter(s.error or "incomplete" for s in scrapes if s.status is None or
                               (s.status == 200 and not s.complete))
    slowest = f", slowest {figures[-1]:.3f} s, median {figures[len(figures) // 2]:.3f} s" if figures else ""
    return (f"{len(figures)} of {len(scrapes)} answered with figures{slowest}; refused {dict(refused)}; "
            f"no answer {dict(lost)}; slowest answer of any kind {max(s.seconds for s in scrapes):.3f} s")


def prometheus_scrapes(address: str, seconds: int) -> str:
    """Debian's prometheus scraping `address` every second with a 1 s timeout for `seconds`: how many scrapes
    it made, how many succeeded (up), the longest (scrape_duration_seconds)."""
    import tempfile
    from pathlib import Path

    from tests.metrics.prometheus import Prometheus

    with tempfile.TemporaryDirectory(prefix="kwire-scrapes-") as tmp:
        server = Prometheus(Path(tmp), [address])
        try:
            time.sleep(seconds)
            window = f'{{instance="{address}"}}[{seconds}s]'
            made = server.query(f"count_over_time(up{window})")
            good = server.query(f"sum_over_time(up{window})")
            longest = server.query(f"max_over_time(scrape_duration_seconds{window})")
        finally:
            server.stop()
    value = (lambda result: result[0][1] if result else 0.0)
    return (f"{value(good):.0f} of {value(made):.0f} scrapes succeeded, the longest "
            f"{value(longest):.3f} s")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("address", help="HOST:PORT of the metrics service")
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--slow", type=int, default=1000)
    parser.add_argument("--flood", type=int, default=50, help="flooding connections at a time")
    parser.add_argument("--scrapes", type=int, default=10, help="scrapes one after the other, a second apart")
    parser.add_argument("--at-once", type=int, default=0, help="then this many scrapes at once")
    parser.add_argument("--prometheus", type=int, default=0, metavar="SECONDS",
                        help="then Debian's prometheus scrapes every second (1 s timeout) for this long")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=int, default=1)
    args = parser.parse_args(argv)
    host, _, port = args.address.rpartition(":")
    alone = scrape(host, int(port), args.timeout)
    print(f"alone: status {alone.status}, complete {alone.complete}, {alone.seconds:.3f} s")
    with Crowd(host, int(port), args.idle, args.slow, args.flood, args.seed, args.scale) as crowd:
        full = crowd.wait_full(60)
        time.sleep(1.0)
        print(f"crowd {'opened' if full else 'NOT all opened'}: holds {crowd.held()}")
        one_by_one = []
        for _ in range(args.scrapes):
            one_by_one.append(scrape(host, int(port), args.timeout))
            time.sleep(1.0)
        if one_by_one:
            print("one by one:", summary(one_by_one))
        if args.at_once:
            print(f"{args.at_once} at once:", summary(scrapes_at_once(host, int(port), args.at_once, args.timeout)))
        if args.prometheus:
            print(f"prometheus, {args.prometheus} s:", prometheus_scrapes(args.address, args.prometheus))
        print(f"crowd: holds {crowd.held()};", dict(sorted(crowd.counts.items())))


if __name__ == "__main__":
    main()
