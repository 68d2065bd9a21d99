"""Pairing: a request frame with its response frame, by (connection, correlation id).

`Pairing` holds one connection's requests waiting for their answers (at most MAX_PENDING) and the
responses captured before their request (capture order is not wire order: at most MAX_ORPHANS, for
ORPHAN_GRACE_FRAMES frames each). Never "the next response": a response pairs with the request whose
correlation id it carries, or waits, or is reported as `no_request`. Requests that reuse a
correlation id still pending wait behind it and are answered in order (a broker answers a
connection's requests in the order they came; each reuse is counted). On a connection whose broker
side had gaps (`lossy`), a request still pending when a later one is answered is paired without its
answer, which the gap took (brokers answer in order). A request never answered is
reported as `no_response` when the pending table overflows or the connection closes; a Produce
request with acks=0, which no broker answers, is reported as `no_response` at once. Each says why
(`unanswered`, a kind of kwire.outcomes: pending_overflow, connection_closed, connection_idle,
capture_ended, no_answer_expected); the TCP layer's close reasons map to them by CLOSE_REASONS. After a FIN or
RST, connection_closed is handed on with the side that closed first (kwire.outcomes.CLOSED_BY: conn.closer, set by
kwire.native.tcp_flows), which kwire.native.exchange_build makes the exchange's `closed_by`.

Memory: pending requests keep their bodies (for decoding when the answer comes) up to
MAX_PENDING_BYTES per connection; past that the oldest pending bodies are dropped (`body` None,
`dropped` True: the exchange is still paired and timed, and says its request body was not kept).
Bodies stay raw here (kwire.native.exchange_build decodes them); a RawExchange is what the Kafka layer hands on.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Callable

from kwire.native import c_reads  # compiled: kwire/native/c_reads.pxd's C reads (kwire/native/kafka_pairing.pxd)
from kwire.fields import fields_equal, fields_repr
from kwire.kafka.primitives import read_uvarint

from kwire.native.framing import CutFrame
from kwire.native.kafka_headers import RequestHeader
from kwire.outcomes import (CAPTURE_ENDED, CLOSED_BY_BROKER, CLOSED_BY_CLIENT, CONNECTION_CLOSED, CONNECTION_IDLE,
                            NO_ANSWER_EXPECTED, NO_REQUEST, NO_RESPONSE, NOT_KEPT, PAIRED, PENDING_OVERFLOW)
from kwire.tcp.stream import END_CLOSE, FIN_CLOSE, IDLE_CLOSE, REUSED_CLOSE, RST_CLOSE, Connection

__all__ = ["PAIRED", "NO_RESPONSE", "NO_REQUEST", "Pairing", "RawExchange", "PendingRequest", "CLOSE_REASONS"]

# The TCP layer's reasons a connection ends (kwire.native.tcp_flows) -> why its pending requests went unanswered.
CLOSE_REASONS = {FIN_CLOSE: CONNECTION_CLOSED, RST_CLOSE: CONNECTION_CLOSED, REUSED_CLOSE: CONNECTION_CLOSED,
                 IDLE_CLOSE: CONNECTION_IDLE, END_CLOSE: CAPTURE_ENDED}

MAX_PENDING = 1 << 16  # requests awaiting a response, per connection (librdkafka pipelines thousands)


def _bytes_setting(name: str, default: int) -> int:
    """A byte count from the environment (a plain number of bytes), else the default."""
    text = os.environ.get(name, "")
    return int(text) if text.isdigit() else default


MAX_PENDING_BYTES = _bytes_setting("KWIRE_MAX_PENDING_BYTES", 32 << 20)  # bodies kept, per connection
PRODUCE_KEY = 0
ORPHAN_GRACE_FRAMES = 16  # frames a response waits for a request captured after it
MAX_ORPHANS = 64



def frame_size(body) -> int:
    """The frame's size on the wire, length prefix included (a CutFrame's from its prefix)."""
    return body.size if type(body) is CutFrame else len(body) + 4


class PendingRequest:
    """A request waiting for its answer. (A class of its own rather than a dataclass: the compiled core
    makes it an extension type, kwire/native/kafka_pairing.pxd; it compares and prints as a dataclass would.)"""

    __slots__ = ("header", "body", "ts_ns", "size", "dropped", "lost", "done", "span", "held")

    def __init__(self, header: RequestHeader, body, ts_ns: int, size: int, dropped: bool = False,
                 lost: str | None = None, done: bool = False, span: tuple | None = None, held: int = 0):
        self.header = header
        self.body = body  # the frame body (bytes or memoryview), header included; None once dropped
        self.ts_ns = ts_ns
        self.size = size
        self.dropped = dropped  # the body was not kept (MAX_PENDING_BYTES)
        # why its body cannot be decoded, a body kind of kwire.outcomes (NOT_KEPT when dropped;
        # CUT_BY_SNAPLEN for the packet path to set), else None
        self.lost = lost
        self.done = done  # no longer pending: answered, or given up
        self.span = span  # (start, end) of the frame in its direction's bytes, when tracked
        self.held = held  # bytes the body holds (size, unless the snap length cut it): what keeping it costs

    def __repr__(self) -> str:
        return fields_repr(self, _PENDING_FIELDS)

    def __eq__(self, other) -> bool:
        return fields_equal(self, other, _PENDING_FIELDS)

    __hash__ = None


_PENDING_FIELDS = PendingRequest.__slots__


def _pending_request(header: RequestHeader, body, ts_ns: int, size: int, span: tuple | None,
                     held: int) -> PendingRequest:
    """PendingRequest(header, body, ts_ns, size, span=span, held=held) made without a call of its __init__
    (compiled: its fields set in C)."""
    request = PendingRequest.__new__(PendingRequest)
    request.header = header
    request.body = body
    request.ts_ns = ts_ns
    request.size = size
    request.dropped = False
    request.lost = None
    request.done = False
    request.span = span
    request.held = held
    return request


def produce_acks(header: RequestHeader, body) -> int | None:
    """The Acks of a Produce request (None when the body is too short to say): v0-v2 start with it,
    later versions put a TransactionalId (a compact string from v9) before it."""
    pos = header.header_size
    version = header.api_version
    try:
        if version >= 9:
            n = body[pos]
            if n < 0x80:  # a one-byte length: the common case
                pos += n if n else 1
            else:
                n, pos = read_uvarint(body, pos)
                pos += max(n - 1, 0)
        elif version >= 3:
            n = c_reads._i16(body, pos)
            pos += 2 + max(n, 0)
        return c_reads._i16(body, pos)
    except Exception:  # noqa: BLE001 - cut short or malformed: the decoder will say what is wrong
        return None


class RawExchange:
    """A request and its response frames, paired (or not: `status`), what the Kafka layer hands on.
    (Not a dataclass, for the compiled core: see PendingRequest.)"""

    __slots__ = ("conn", "client_direction", "status", "correlation_id", "request", "response_body",
                 "response_ts_ns", "response_size", "given_up_ts_ns", "response_span", "unanswered", "response_lost")

    def __init__(self, conn: Connection, client_direction: int, status: str, correlation_id: int,
                 request: PendingRequest | None, response_body: object | None = None,
                 response_ts_ns: int | None = None, response_size: int | None = None,
                 given_up_ts_ns: int | None = None, response_span: tuple | None = None,
                 unanswered: str | None = None, response_lost: str | None = None):
        self.conn = conn
        self.client_direction = client_direction
        self.status = status
        self.correlation_id = correlation_id
        self.request = request
        self.response_body = response_body  # the frame body, header included
        self.response_ts_ns = response_ts_ns
        self.response_size = response_size
        self.given_up_ts_ns = given_up_ts_ns  # no_response: the capture time kwire stopped waiting for the answer
        self.response_span = response_span  # (start, end) of the response frame in the broker's bytes, when tracked
        self.unanswered = unanswered  # no_response: why (kwire.outcomes.UNANSWERED_KINDS)
        self.response_lost = response_lost  # why the response body cannot be decoded (PendingRequest.lost)

    def __repr__(self) -> str:
        return fields_repr(self, _RAW_FIELDS)

    def __eq__(self, other) -> bool:
        return fields_equal(self, other, _RAW_FIELDS)

    __hash__ = None


_RAW_FIELDS = RawExchange.__slots__


def _paired(conn: Connection, client_direction: int, correlation_id: int, request: PendingRequest, response_body,
            response_ts_ns: int, response_size: int, response_span: tuple | None) -> RawExchange:
    """RawExchange(conn, client_direction, PAIRED, correlation_id, request, response_body, response_ts_ns,
    response_size, None, response_span) made without a call of its __init__ (compiled: its fields set in C)."""
    raw = RawExchange.__new__(RawExchange)
    raw.conn = conn
    raw.client_direction = client_direction
    raw.status = PAIRED
    raw.correlation_id = correlation_id
    raw.request = request
    raw.response_body = response_body
    raw.response_ts_ns = response_ts_ns
    raw.response_size = response_size
    raw.given_up_ts_ns = None
    raw.response_span = response_span
    raw.unanswered = None
    raw.response_lost = None
    return raw

Out = Callable[[RawExchange], None]


def _past_done(kept: list, head: int) -> int:
    """Where the answered requests at `kept`'s front (from `head`) end; the list is cut there once half of it
    is answered ones, so each request is moved O(1) times (65,536 answered in order: not 65,536 shifts of the
    rest). Returns the new head."""
    n = len(kept)
    while head < n and kept[head].done:
        head += 1
    if head * 2 >= n:
        del kept[:head]
        return 0
    return head


class Pairing:
    """The pending requests and early responses of one connection whose client is `client_dir`.
    request() and response() hand what they complete to `out`, in order, and return True when they
    paired something (evidence that the connection speaks Kafka)."""

    __slots__ = ("conn", "client_dir", "pending", "waiting", "count", "orphans", "orphan_due", "kept", "kept_head",
                 "kept_bytes", "max_bytes", "duplicate_correlation_ids", "pending_overflow", "dropped_bodies",
                 "lossy")

    def __init__(self, conn: Connection, client_dir: int, max_bytes: int | None = None):
        self.conn = conn
        self.client_dir = client_dir
        self.pending: dict[int, PendingRequest] = {}  # the first request waiting under each correlation id
        # (the next three made when first needed: most connections reuse no correlation id and see no early response)
        self.waiting: dict[int, deque] | None = None  # later requests that reused a pending correlation id, in order
        self.count = 0  # requests pending, all of them
        self.orphans: dict[int, RawExchange] | None = None  # responses whose request has not been seen (yet)
        self.orphan_due: dict[int, int] | None = None  # corr id -> frame count at which it is reported no_request
        # pending requests whose bodies are kept, oldest first, from kept_head on: a list (56 bytes empty, a deque
        # 600 with its first block), the answered ones at its front cut off a run at a time (_past_done)
        self.kept: list = []
        self.kept_head = 0
        self.kept_bytes = 0
        self.max_bytes = MAX_PENDING_BYTES if max_bytes is None else max_bytes  # read now: tests lower it
        self.duplicate_correlation_ids = 0
        self.pending_overflow = 0
        self.dropped_bodies = 0
        # The broker's bytes had gaps (a snap length, lost packets): an answer may lie in one. A broker
        # answers a connection's requests in the order they came, so a request still pending when a
        # later one is answered was answered too: it is paired without its answer (settled_before).
        self.lossy = False

    def request(self, header: RequestHeader, body, ts_ns: int, out: Out, span: tuple | None = None) -> bool:
        corr = header.correlation_id
        held = len(body) + 4
        request = _pending_request(header, body, ts_ns, body.size if type(body) is CutFrame else held, span, held)
        if header.api_key == PRODUCE_KEY and produce_acks(header, body) == 0:  # never answered
            out(RawExchange(self.conn, self.client_dir, NO_RESPONSE, corr, request, given_up_ts_ns=ts_ns,
                            unanswered=NO_ANSWER_EXPECTED))
            return False
        if self.orphans:
            orphan = self.orphans.pop(corr, None)
            if orphan is not None:
                # Its response was captured first (capture order is not wire order).
                del self.orphan_due[corr]
                orphan.status = PAIRED
                orphan.request = request
                out(orphan)
                return True
        if self.count >= MAX_PENDING:
            self.pending_overflow += 1
            out(RawExchange(self.conn, self.client_dir, NO_RESPONSE, *self._pop_oldest(), given_up_ts_ns=ts_ns,
                            unanswered=PENDING_OVERFLOW))
        pending = self.pending
        if corr in pending:
            self.duplicate_correlation_ids += 1
            if self.waiting is None:
                self.waiting = {}
            self.waiting.setdefault(corr, deque()).append(request)
        else:
            pending[corr] = request
        self.count += 1
        self.kept.append(request)
        self.kept_bytes += held
        if self.kept_bytes > self.max_bytes or len(self.kept) - self.kept_head > 2 * self.count + 64:
            self._trim()
        return False

    def _take(self, corr: int) -> PendingRequest | None:
        """The request a response with `corr` answers (the first that asked), or None."""
        request = self.pending.pop(corr, None)
        if request is None:
            return None
        later = self.waiting.get(corr) if self.waiting else None
        if later:
            self.pending[corr] = later.popleft()
            if not later:
                del self.waiting[corr]
        self.count -= 1
        request.done = True
        if not request.dropped:
            self.kept_bytes -= request.held
        kept = self.kept
        if kept and kept[self.kept_head].done:  # answers come in order, mostly: the oldest kept leave first
            self.kept_head = _past_done(kept, self.kept_head)
        return request

    def oldest_ts_ns(self) -> int | None:
        """The capture time of the oldest request waiting for its answer, or None. The first request under
        each correlation id is kept in its order of arrival (as _pop_oldest reads it), so the oldest is the
        first, unless a reused id moved a later one in (then all are looked at)."""
        pending = self.pending
        if not pending:
            return None
        if self.waiting:
            return min(request.ts_ns for request in pending.values())
        return next(iter(pending.values())).ts_ns

    def _pop_oldest(self) -> tuple[int, PendingRequest]:
        corr = next(iter(self.pending))
        return corr, self._take(corr)

    def _trim(self) -> None:
        """The kept bodies (request() appends each) over the connection's bound: drop the oldest
        pending ones; and sweep out those answered out of order."""
        kept = self.kept
        gone = self.kept_head
        while self.kept_bytes > self.max_bytes and gone < len(kept):
            old = kept[gone]
            gone += 1
            if not old.done:
                old.body = None
                old.dropped = True
                old.lost = NOT_KEPT
                self.kept_bytes -= old.held
                self.dropped_bodies += 1
        del kept[:gone]
        self.kept_head = 0
        if len(kept) > 2 * self.count + 64:  # requests answered out of order linger: sweep them out
            self.kept = [r for r in kept if not r.done]

    def response(self, body, ts_ns: int, frames: int, out: Out, span: tuple | None = None) -> bool:
        """A response frame; `frames` is the connection's frame count (for the orphans' grace)."""
        corr = c_reads._i32(body, 0)
        if self.lossy and corr in self.pending and next(iter(self.pending)) != corr:
            self._settle_before(corr, out)
        if self.waiting:
            request = self._take(corr)
        else:  # no correlation id reused: _take, inline
            request = self.pending.pop(corr, None)
            if request is not None:
                self.count -= 1
                request.done = True
                if not request.dropped:
                    self.kept_bytes -= request.held
                kept = self.kept
                if kept and kept[self.kept_head].done:
                    self.kept_head = _past_done(kept, self.kept_head)
        if request is None:
            # Its request may not have been captured, or may be captured just after it: wait a few
            # frames before calling it a response without a request.
            orphans = self.orphans
            if orphans is None:
                orphans = self.orphans = {}
                self.orphan_due = {}
            if corr in orphans:
                out(orphans.pop(corr))
            orphans[corr] = RawExchange(self.conn, self.client_dir, NO_REQUEST, corr, None, body, ts_ns,
                                        frame_size(body), response_span=span)
            self.orphan_due[corr] = frames + ORPHAN_GRACE_FRAMES
            self.expire_orphans(frames, out)
            return False
        out(_paired(self.conn, self.client_dir, corr, request, body, ts_ns,
                    body.size if type(body) is CutFrame else len(body) + 4, span))
        return True

    def _settle_before(self, corr: int, out: Out) -> None:
        """The requests sent before the one `corr` answers were answered before it (in order): their
        answers lie in bytes not captured. Paired, without a response."""
        for older in list(self.pending):  # in the order the requests came
            if older == corr:
                return
            out(RawExchange(self.conn, self.client_dir, PAIRED, older, self._take(older)))

    def expire_orphans(self, frames: int, out: Out, everything: bool = False) -> None:
        """Report as no_request the early responses whose grace ran out (all of them: `everything`)."""
        if not self.orphans:
            return
        due = self.orphan_due
        for corr in list(self.orphans):
            if everything or due[corr] <= frames or len(self.orphans) > MAX_ORPHANS:
                out(self.orphans.pop(corr))
                del due[corr]

    def close(self, ts_ns: int, frames: int, out: Out, reason: str = END_CLOSE) -> None:
        """The connection ended at ts_ns (`reason`: the TCP layer's, a key of CLOSE_REASONS): every
        pending request is unanswered, every early response orphaned."""
        why = CLOSE_REASONS.get(reason, CAPTURE_ENDED)
        closer = self.conn.closer
        if (reason == FIN_CLOSE or reason == RST_CLOSE) and closer is not None:  # whose FIN or RST came first
            why = CLOSED_BY_CLIENT if closer == self.client_dir else CLOSED_BY_BROKER
        while self.pending:
            out(RawExchange(self.conn, self.client_dir, NO_RESPONSE, *self._pop_oldest(), given_up_ts_ns=ts_ns,
                            unanswered=why))
        self.kept.clear()
        self.kept_head = 0
        self.expire_orphans(frames, out, everything=True)
