"""Pairing: a request frame with its response frame, by (connection, correlation id).

`Pairing` holds one connection's requests waiting for their answers (at most MAX_PENDING) and the
responses captured before their request (capture order is not wire order: at most MAX_ORPHANS, for
ORPHAN_GRACE_FRAMES frames each). Never "the next response": a response pairs with the request whose
correlation id it carries, or waits, or is reported as `no_request`. A request never answered is
reported as `no_response` when its correlation id is used again, the pending table overflows, or
the connection closes. Bodies stay raw here (kwire.exchanges decodes them); a RawExchange is what
the Kafka layer hands on.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable

from kwire.kafka.headers import RequestHeader
from kwire.tcp.stream import Connection

PAIRED = "paired"
NO_RESPONSE = "no_response"
NO_REQUEST = "no_request"

MAX_PENDING = 1 << 16  # requests awaiting a response, per connection (librdkafka pipelines thousands)
ORPHAN_GRACE_FRAMES = 16  # frames a response waits for a request captured after it
MAX_ORPHANS = 64

_I32 = struct.Struct(">i")


@dataclass(slots=True)
class PendingRequest:
    header: RequestHeader
    body: object  # the frame body (bytes or memoryview), header included
    ts_ns: int
    size: int


@dataclass(slots=True)
class RawExchange:
    conn: Connection
    client_direction: int
    status: str
    correlation_id: int
    request: PendingRequest | None
    response_body: object | None = None  # the frame body, header included
    response_ts_ns: int | None = None
    response_size: int | None = None


Out = Callable[[RawExchange], None]


class Pairing:
    """The pending requests and early responses of one connection whose client is `client_dir`.
    request() and response() hand what they complete to `out`, in order, and return True when they
    paired something (evidence that the connection speaks Kafka)."""

    __slots__ = ("conn", "client_dir", "pending", "orphans", "orphan_due",
                 "duplicate_correlation_ids", "pending_overflow")

    def __init__(self, conn: Connection, client_dir: int):
        self.conn = conn
        self.client_dir = client_dir
        self.pending: dict[int, PendingRequest] = {}
        self.orphans: dict[int, RawExchange] = {}  # responses whose request has not been seen (yet)
        self.orphan_due: dict[int, int] = {}  # corr id -> frame count at which it is reported no_request
        self.duplicate_correlation_ids = 0
        self.pending_overflow = 0

    def request(self, header: RequestHeader, body, ts_ns: int, out: Out) -> bool:
        corr = header.correlation_id
        pending = self.pending
        if corr in pending:
            self.duplicate_correlation_ids += 1
            out(RawExchange(self.conn, self.client_dir, NO_RESPONSE, corr, pending.pop(corr)))
        request = PendingRequest(header, body, ts_ns, len(body) + 4)
        if self.orphans:
            orphan = self.orphans.pop(corr, None)
            if orphan is not None:
                # Its response was captured first (capture order is not wire order).
                del self.orphan_due[corr]
                orphan.status = PAIRED
                orphan.request = request
                out(orphan)
                return True
        if len(pending) >= MAX_PENDING:
            oldest = next(iter(pending))
            self.pending_overflow += 1
            out(RawExchange(self.conn, self.client_dir, NO_RESPONSE, oldest, pending.pop(oldest)))
        pending[corr] = request
        return False

    def response(self, body, ts_ns: int, frames: int, out: Out) -> bool:
        """A response frame; `frames` is the connection's frame count (for the orphans' grace)."""
        corr = _I32.unpack_from(body, 0)[0]
        request = self.pending.pop(corr, None)
        if request is None:
            # Its request may not have been captured, or may be captured just after it: wait a few
            # frames before calling it a response without a request.
            orphans = self.orphans
            if corr in orphans:
                out(orphans.pop(corr))
            orphans[corr] = RawExchange(self.conn, self.client_dir, NO_REQUEST, corr, None, body, ts_ns,
                                        len(body) + 4)
            self.orphan_due[corr] = frames + ORPHAN_GRACE_FRAMES
            self.expire_orphans(frames, out)
            return False
        out(RawExchange(self.conn, self.client_dir, PAIRED, corr, request, body, ts_ns, len(body) + 4))
        return True

    def expire_orphans(self, frames: int, out: Out, everything: bool = False) -> None:
        """Report as no_request the early responses whose grace ran out (all of them: `everything`)."""
        due = self.orphan_due
        for corr in list(self.orphans):
            if everything or due[corr] <= frames or len(self.orphans) > MAX_ORPHANS:
                out(self.orphans.pop(corr))
                del due[corr]

    def close(self, frames: int, out: Out) -> None:
        """The connection ended: every pending request is unanswered, every early response orphaned."""
        for corr, req in self.pending.items():
            out(RawExchange(self.conn, self.client_dir, NO_RESPONSE, corr, req))
        self.pending.clear()
        self.expire_orphans(frames, out, everything=True)
