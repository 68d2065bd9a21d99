"""The metrics service's HTTP, sans-IO: a request head read from bytes, the answers, how a connection ended.

`HeadReader(limit).feed(bytes)` is NEED_DATA until the head's blank line has come (while the head is under
`limit` bytes), then a `Request` (method, path, headers by lower-case name), or the Outcome that refuses it:
TOO_LARGE past `limit`, BAD_REQUEST for a request line or a header line that is not HTTP/1.x. A body is never
read: the service answers GET and HEAD, and closes every connection after its answer.

`Outcome` is how a connection to the service ended, each a kind with its label (the outcome label of
kwire_exporter_connections_total), the status it is answered with (None: closed without an answer) and the
text of that answer. `answer(status, body, ...)` writes a whole HTTP/1.1 response (Content-Length,
Connection: close).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

NEED_DATA = None  # HeadReader.feed's answer while the head is not whole yet


class Outcome(enum.Enum):
    ANSWERED = ("answered", 200, "OK")
    NOT_FOUND = ("not_found", 404, "Not Found")
    NOT_ALLOWED = ("method_not_allowed", 405, "Method Not Allowed")
    BAD_REQUEST = ("bad_request", 400, "Bad Request")
    TOO_LARGE = ("too_large", 431, "Request Header Fields Too Large")
    READ_TIMEOUT = ("read_timeout", 408, "Request Timeout")
    EVICTED = ("evicted", 503, "Service Unavailable")
    BUSY = ("busy", 503, "Service Unavailable")
    WRITE_TIMEOUT = ("write_timeout", None, "")
    CLIENT_CLOSED = ("client_closed", None, "")
    ERROR = ("error", 500, "Internal Server Error")

    def __init__(self, label: str, status: int | None, reason: str):
        self.label = label
        self.status = status
        self.reason = reason


WHY = {  # the body of a refusal: one line a person reads
    Outcome.NOT_FOUND: "kwire serves /metrics only",
    Outcome.NOT_ALLOWED: "GET or HEAD /metrics",
    Outcome.BAD_REQUEST: "not an HTTP/1.x request",
    Outcome.TOO_LARGE: "the request's head is larger than kwire reads",
    Outcome.READ_TIMEOUT: "the request did not come in time",
    Outcome.EVICTED: "kwire holds as many connections as it keeps: this one waited longest for its request",
    Outcome.BUSY: "kwire holds as many connections as it keeps, all of them being answered",
}


class Request(NamedTuple):
    method: str
    path: str
    headers: dict[str, str]

    @property
    def head_only(self) -> bool:
        return self.method == "HEAD"


class HeadReader:
    """A request head fed as it comes: each byte is searched once for the head's end (a drip of one byte
    at a time costs what the bytes cost, not the buffer again at each)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.buffer = bytearray()
        self._searched = 0

    def feed(self, data: bytes):
        """NEED_DATA, a Request, or the Outcome that refuses the request (see the module's docstring)."""
        self.buffer += data
        if self._searched == 0:  # blank lines before a request line are allowed (RFC 9112, 2.2)
            self.buffer = self.buffer.lstrip(b"\r\n")
        end = _head_end(self.buffer, max(0, self._searched - 3))
        self._searched = len(self.buffer)
        if end < 0:
            return Outcome.TOO_LARGE if len(self.buffer) >= self.limit else NEED_DATA
        if end > self.limit:
            return Outcome.TOO_LARGE
        return parse_head(bytes(self.buffer[:end]))


def parse_head(head: bytes):
    """A Request, or BAD_REQUEST, of a head's lines (without its blank line)."""
    lines = [line.rstrip(b"\r") for line in head.split(b"\n")]
    request_line = lines[0].split(b" ")
    if len(request_line) != 3 or request_line[2] not in (b"HTTP/1.0", b"HTTP/1.1") \
            or not request_line[0].isalpha() or not request_line[1]:
        return Outcome.BAD_REQUEST
    headers = _headers(lines[1:])
    if headers is None:
        return Outcome.BAD_REQUEST
    method, target = request_line[0].decode("ascii"), request_line[1].decode("latin-1")
    return Request(method, target.partition("?")[0], headers)


def _head_end(buffer, start: int) -> int:
    """Where the head's lines end (the blank line's start), or -1 while it has not come."""
    ends = [i for i in (buffer.find(b"\r\n\r\n", start), buffer.find(b"\n\n", start)) if i >= 0]
    return min(ends) if ends else -1


def _headers(lines: list[bytes]) -> dict[str, str] | None:
    headers: dict[str, str] = {}
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip() or b" " in name:
            return None
        key = name.decode("latin-1").lower()
        text = value.strip().decode("latin-1")
        headers[key] = f"{headers[key]}, {text}" if key in headers else text
    return headers


def refusal(outcome: Outcome) -> bytes:
    """The whole answer of a refused request (a status and one line), or b"" for none."""
    if outcome.status is None:
        return b""
    return answer(outcome.status, outcome.reason, (WHY.get(outcome, outcome.reason) + "\n").encode(),
                  "text/plain; charset=utf-8")


def answer(status: int, reason: str, body: bytes, content_type: str, encoding: str | None = None,
           head_only: bool = False) -> bytes:
    head = [f"HTTP/1.1 {status} {reason}", f"Content-Type: {content_type}", f"Content-Length: {len(body)}",
            "Connection: close"]
    if encoding:
        head.append(f"Content-Encoding: {encoding}")
    if status == 405:
        head.append("Allow: GET, HEAD")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body)


def route(request: Request, path: str) -> Outcome:
    """ANSWERED for a GET or HEAD of `path`, else the Outcome that refuses it."""
    if request.path != path:
        return Outcome.NOT_FOUND
    if request.method not in ("GET", "HEAD"):
        return Outcome.NOT_ALLOWED
    return Outcome.ANSWERED
