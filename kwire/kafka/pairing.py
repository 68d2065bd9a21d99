"""From reassembled TCP streams to paired Kafka requests and responses, on any port.

`KafkaTracker.on_event(event)` takes the TCP layer's events and returns RawExchanges: a request
frame paired with its response frame by (connection, correlation id), never "the next response".
Bodies stay raw here (kwire.exchanges decodes them).

Which side is the client: the SYN sender when the handshake was captured; otherwise the direction
whose bytes parse as request headers. A connection is Kafka once a response answers a pending
request's correlation id (or, for acks=0 producers that get no answers, once several requests in a
row frame exactly); a `--port` hint makes it Kafka from the start. Exchanges of an unconfirmed
connection are held (bounded) and dropped if it never confirms.

Mid-stream and after gaps the framers resynchronise: the request side on the next plausible request
header, the response side on the next length whose correlation id is pending. Responses found in
sync with no pending request are reported as `no_request`; requests never answered as
`no_response` when the connection closes, the pending table overflows, or the capture ends.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kwire.kafka.apis import APIS
from kwire.kafka.framing import Framer
from kwire.kafka.headers import RequestHeader, parse_request_header, plausible_request
from kwire.kafka.resync import KEEP_TAIL, find_response_start, scan_requests
from kwire.tcp.events import Connection, StreamClosed, StreamData, StreamGap

PAIRED = "paired"
NO_RESPONSE = "no_response"
NO_REQUEST = "no_request"

DEFAULT_MAX_FRAME = 256 * 1024 * 1024  # Kafka's own socket.request.max.bytes default is 100 MiB
MAX_PENDING = 1 << 16  # requests awaiting a response, per connection (librdkafka pipelines thousands)
MAX_HELD = 256  # exchanges held while a connection is not yet confirmed as Kafka
CONFIRM_CHAINED_REQUESTS = 3
GIVE_UP_BYTES = 1 << 20  # unconfirmed connection: bytes scanned in vain before it is ignored
ORPHAN_GRACE_FRAMES = 16  # frames a response waits for a request captured after it
MAX_ORPHANS = 64
MAX_EARLY_FRAMES = 64  # frames held while the roles of a connection are unknown
UNDECIDED_RAW = 64 * 1024  # bytes of each side kept while roles are unknown, to rescan the broker's side

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


def _looks_like_request(body, max_frame: int) -> bool:
    return len(body) >= 10 and plausible_request(_I32.pack(len(body)) + bytes(body[:10 + 1024]), 0, max_frame)


def _answered(raw, corrs, max_frame: int) -> int:
    """How many of `corrs` start a response in `raw`: a length, the id, and a frame that ends where
    `raw` ends or where another sane length begins (a lone 4-byte match is too common to count)."""
    size = len(raw)
    count = 0
    for corr in corrs:
        needle = _I32.pack(corr)
        idx = raw.find(needle, 4)
        while idx >= 4:
            length = _I32.unpack_from(raw, idx - 4)[0]
            end = idx + length
            if 4 <= length <= max_frame and (end == size or (end + 8 <= size
                                                               and 4 <= _I32.unpack_from(raw, end)[0] <= max_frame)):
                count += 1
                break
            idx = raw.find(needle, idx + 1)
    return count


def _decide_client(early, first_request_at, bytes_after_request, raw, max_frame: int) -> int | None:
    """Which direction carries requests, judged on what was seen so far; None: cannot tell yet.

    Evidence, strongest first: the correlation ids of one direction's request frames come back in the
    other direction's bytes as the start of a response (a length, then that id); a broker whose
    responses happen to parse as requests (small correlation ids make them look like Produce
    requests with an empty client id) is never answered that way. Failing that: one direction framed
    requests while the other, which has sent bytes since, framed nothing.
    """
    asked: list[set[int]] = [set(), set()]
    framed_answers = [0, 0]
    for d, _, body in early:
        if len(body) >= 4 and _I32.unpack_from(body, 0)[0] in asked[1 - d]:
            framed_answers[1 - d] += 1  # a frame of d starts with an id the other side asked earlier
        if len(body) >= 8 and _looks_like_request(body, max_frame):
            asked[d].add(_I32.unpack_from(body, 4)[0])
    score = [framed_answers[x] + _answered(raw[1 - x], asked[x], max_frame) for x in (0, 1)]
    if score[0] != score[1]:
        return 0 if score[0] > score[1] else 1
    framed = [False, False]
    for d, _, _ in early:
        framed[d] = True
    for x in (0, 1):
        if first_request_at[x] is not None and not framed[1 - x] and bytes_after_request[1 - x] > 0:
            return x
    return None


class KafkaConnection:
    """Per-connection state: roles, framers, pending requests, confirmation."""

    __slots__ = ("conn", "client_dir", "framers", "pending", "confirmed", "held", "ignored",
                 "chained", "scanned", "max_frame", "client_id", "early",
                 "first_request_at", "bytes_after_request", "orphans", "orphan_due", "raw",
                 "rescan", "frames", "unparsed_frames", "duplicate_correlation_ids", "pending_overflow",
                 "gaps", "ready")

    def __init__(self, conn: Connection, max_frame: int, hinted: bool, ready: list | None = None):
        self.conn = conn
        self.ready = [] if ready is None else ready  # where sink() puts what it made (KafkaTracker.ready)
        self.max_frame = max_frame
        self.client_dir: int | None = 0 if conn.initiator == 0 else None
        synced = conn.initiator is not None
        self.framers = (
            Framer(lambda buf, scan: self._find_start(0, buf, scan), synced=synced, max_frame=max_frame),
            Framer(lambda buf, scan: self._find_start(1, buf, scan), synced=synced, max_frame=max_frame),
        )
        self.pending: dict[int, PendingRequest] = {}
        self.confirmed = hinted
        self.held: list[RawExchange] = []
        self.ignored = False
        self.chained = 0
        self.scanned = 0
        self.client_id: bytes | None = None  # the client id every request of this connection carries
        self.orphans: dict[int, RawExchange] = {}  # responses whose request has not been seen (yet)
        self.orphan_due: dict[int, int] = {}  # corr id -> frame count at which it is reported no_request
        # Roles unknown (no handshake captured): frames of both directions wait here.
        self.early: list[tuple[int, int, object]] = []
        self.first_request_at: list[int | None] = [None, None]  # index+1 in early of a direction's first request
        self.bytes_after_request = [0, 0]  # bytes a direction sent after the other's first request
        self.raw: list[bytearray] | None = [bytearray(), bytearray()]  # what each side sent meanwhile
        self.rescan = False
        # Counters (see `counters`): plain attributes, cheaper to bump than dict items.
        self.frames = 0
        self.unparsed_frames = 0
        self.duplicate_correlation_ids = 0
        self.pending_overflow = 0
        self.gaps = 0

    @property
    def counters(self) -> dict[str, int]:
        """What this connection counted, by name (KafkaTracker sums them into closed_counters)."""
        return {"frames": self.frames, "unparsed_frames": self.unparsed_frames,
                "duplicate_correlation_ids": self.duplicate_correlation_ids,
                "pending_overflow": self.pending_overflow, "gaps": self.gaps}

    # -- resynchronisation

    def _find_start(self, direction: int, buf, scan: dict) -> tuple[int, int]:
        if self.client_dir is None:
            # Roles unknown: only a request start confirmed by its own frame will do.
            return scan_requests(buf, scan, self.max_frame, None, trust_open=False)
        if self.client_dir == direction:
            return scan_requests(buf, scan, self.max_frame, self.client_id, trust_open=True)
        start = find_response_start(buf, self.max_frame, self.pending)
        if start >= 0:
            return start, 0
        return -1, max(0, len(buf) - KEEP_TAIL)

    # -- events

    def sink(self, direction: int, ts_ns: int, data) -> bool:
        """Connection.sink, once confirmed with known roles (which then stay as they are): on_data
        straight from TCP, the exchanges it completes put in `ready`. True when there are some."""
        framer = self.framers[direction]
        frames = framer.feed(data)
        self.conn.demand[direction] = framer.need
        if not frames:
            return False
        ready = self.ready
        before = len(ready)
        self._frames(direction, ts_ns, frames, ready)
        return len(ready) > before

    def _frames(self, direction: int, ts_ns: int, frames: list, out: list[RawExchange]) -> None:
        """Frames of a confirmed connection whose roles are known."""
        self.frames += len(frames)
        self._dispatch(direction, ts_ns, frames, out)

    def _dispatch(self, direction: int, ts_ns: int, frames: list, out: list[RawExchange]) -> None:
        """Frames of a connection whose roles are known: requests or responses by direction."""
        if direction == self.client_dir:
            for body in frames:
                self._on_request(body, ts_ns, out)
        else:
            for body in frames:
                self._on_response(body, ts_ns, out)
        if self.orphans:
            self._expire_orphans(out)

    def on_data(self, direction: int, ts_ns: int, data) -> list[RawExchange]:
        """`data`: bytes, or a tuple of pieces (held-back bytes, kwire.tcp.events.Connection.pieces)."""
        if self.ignored:
            return []
        if type(data) is tuple and not self.confirmed:  # only a confirmed connection asks TCP to hold
            data = b"".join(data)
        framer = self.framers[direction]
        frames = framer.feed(data)
        out: list[RawExchange] = []
        if self.confirmed:
            # Tell TCP how many more bytes the frame in progress needs: it holds them until then
            # (kwire.tcp.events.Connection.demand), so a big frame costs one event, not one per segment.
            self.conn.demand[direction] = framer.need
            if self.client_dir is not None:
                # The steady state: a confirmed connection whose roles are known.
                if frames:
                    self._frames(direction, ts_ns, frames, out)
                return out
        self.frames += len(frames)
        if not self.confirmed:
            self.scanned += len(data)
        if self.client_dir is None:
            self._stash(direction, ts_ns, data, frames)
            if self.client_dir is None:
                return []
            frames = self.early
            self.early = []
            for d, ts, body in frames:
                if d == self.client_dir:
                    self._on_request(body, ts, out)
                else:
                    self._on_response(body, ts, out)
            if self.rescan:
                responder = 1 - self.client_dir
                self.framers[responder].restart(self.raw[responder])
                for body in self.framers[responder].feed(b""):
                    self._on_response(body, ts_ns, out)
            self.raw = None
            if self.orphans:
                self._expire_orphans(out)
        else:
            self._dispatch(direction, ts_ns, frames, out)
        if not self.confirmed:
            if self.scanned > GIVE_UP_BYTES and not self.held and not self.pending:
                self.ignored = True
            self.held.extend(out)
            if len(self.held) > MAX_HELD:
                self.ignored = True
                self.held.clear()
            return []
        return out

    # -- roles, when the handshake was not captured

    def _stash(self, direction: int, ts_ns: int, data, frames) -> None:
        """Keep early frames of both directions until the roles can be told apart, then decide."""
        raw = self.raw[direction]
        if len(raw) < UNDECIDED_RAW:
            raw += data
        for body in frames:
            self.early.append((direction, ts_ns, body))
            if self.first_request_at[direction] is None and _looks_like_request(body, self.max_frame):
                self.first_request_at[direction] = len(self.early)
        other = 1 - direction
        if self.first_request_at[other] is not None:
            self.bytes_after_request[direction] += len(data)
        decided = _decide_client(self.early, self.first_request_at, self.bytes_after_request, self.raw,
                                 self.max_frame)
        if decided is not None:
            self.client_dir = decided
            # The broker's side was searched for requests: frame it again, for responses, from what it
            # sent (when all of it was kept), dropping what it framed on that wrong guess.
            self.rescan = len(self.raw[1 - decided]) < UNDECIDED_RAW
            if self.rescan:
                self.early = [item for item in self.early if item[0] == decided]
        elif len(self.early) > MAX_EARLY_FRAMES:
            self.ignored = True
            self.early.clear()

    def _on_request(self, body, ts_ns: int, out: list[RawExchange]) -> None:
        try:
            header = parse_request_header(body)
        except Exception:  # noqa: BLE001 - any malformation: resync from here
            header = None
        if header is None or header.api_key not in APIS:
            self.unparsed_frames += 1
            self.chained = 0
            self.framers[self.client_dir].resync()
            return
        self.chained += 1
        if self.client_id is None and header.client_id is not None:
            self.client_id = header.client_id.encode("utf-8", "replace")
        if not self.confirmed and self.chained >= CONFIRM_CHAINED_REQUESTS and self.conn.initiator is not None:
            self._confirm()
        corr = header.correlation_id
        pending = self.pending
        if corr in pending:
            self.duplicate_correlation_ids += 1
            out.append(RawExchange(self.conn, self.client_dir, NO_RESPONSE, corr, pending.pop(corr)))
        request = PendingRequest(header, body, ts_ns, len(body) + 4)
        if self.orphans:
            orphan = self.orphans.pop(corr, None)
            if orphan is not None:
                # Its response was captured first (capture order is not wire order).
                orphan.status = PAIRED
                orphan.request = request
                out.append(orphan)
                self._confirm()
                return
        if len(pending) >= MAX_PENDING:
            oldest = next(iter(pending))
            self.pending_overflow += 1
            out.append(RawExchange(self.conn, self.client_dir, NO_RESPONSE, oldest, pending.pop(oldest)))
        pending[corr] = request

    def _on_response(self, body, ts_ns: int, out: list[RawExchange]) -> None:
        if len(body) < 4:
            self.unparsed_frames += 1
            return
        corr = _I32.unpack_from(body, 0)[0]
        request = self.pending.pop(corr, None)
        if request is None:
            # Its request may not have been captured, or may be captured just after it: wait a few
            # frames before calling it a response without a request.
            orphans = self.orphans
            if corr in orphans:
                out.append(orphans.pop(corr))
            orphans[corr] = RawExchange(self.conn, self.client_dir, NO_REQUEST, corr, None, body, ts_ns,
                                        len(body) + 4)
            self.orphan_due[corr] = self.frames + ORPHAN_GRACE_FRAMES
            self._expire_orphans(out)
            return
        if not self.confirmed:
            self._confirm()
        out.append(RawExchange(self.conn, self.client_dir, PAIRED, corr, request, body, ts_ns, len(body) + 4))

    def _confirm(self) -> None:
        self.confirmed = True

    def _expire_orphans(self, out: list[RawExchange], everything: bool = False) -> None:
        frames = self.frames
        for corr in list(self.orphans):
            if everything or self.orphan_due[corr] <= frames or len(self.orphans) > MAX_ORPHANS:
                out.append(self.orphans.pop(corr))
                del self.orphan_due[corr]

    def release_held(self) -> list[RawExchange]:
        held, self.held = self.held, []
        return held

    def on_gap(self, direction: int) -> None:
        self.gaps += 1
        self.framers[direction].gap()

    def close(self) -> list[RawExchange]:
        """The connection ended: every pending request is unanswered."""
        out = [RawExchange(self.conn, self.client_dir if self.client_dir is not None else 0, NO_RESPONSE, corr, req)
               for corr, req in self.pending.items()]
        self.pending.clear()
        self._expire_orphans(out, everything=True)
        if not self.confirmed:
            return []
        return out


class KafkaTracker:
    """All connections of a capture: TCP events in, RawExchanges out."""

    def __init__(self, *, port_hints: frozenset[int] = frozenset(), max_frame: int = DEFAULT_MAX_FRAME):
        self.port_hints = port_hints
        self.max_frame = max_frame
        self.connections: dict[int, KafkaConnection] = {}
        self.kafka_connections = 0
        self.closed_counters: dict[str, int] = {}
        # Exchanges the connections' sinks made straight from TCP (kwire.tcp.events.Connection.sink):
        # the caller takes them after each packet, before that packet's events, and empties this
        # list in place (the connections hold it).
        self.ready: list[RawExchange] = []

    def _state(self, conn: Connection) -> KafkaConnection:
        state = self.connections.get(conn.id)
        if state is None:
            hinted = conn.a[1] in self.port_hints or conn.b[1] in self.port_hints
            state = self.connections[conn.id] = KafkaConnection(conn, self.max_frame, hinted, self.ready)
            conn.pieces = True  # held-back frame bytes come as pieces: the framer joins them once
            if hinted and conn.initiator is None:
                # The hinted port is the broker's: the other side is the client.
                state.client_dir = 1 if conn.a[1] in self.port_hints else 0
        return state

    def on_event(self, event) -> list[RawExchange]:
        if type(event) is StreamData:
            state = self.connections.get(event.conn.id)
            if state is None:
                state = self._state(event.conn)
            if state.confirmed:
                out = state.on_data(event.direction, event.ts_ns, event.data)
                if state.client_dir is not None and not state.ignored:
                    event.conn.sink = state.sink  # the steady state: plain bytes may come straight
                return out
            out = state.on_data(event.direction, event.ts_ns, event.data)
            if state.confirmed:
                self.kafka_connections += 1
                return state.release_held() + out
            return out
        if type(event) is StreamGap:
            state = self._state(event.conn)
            state.on_gap(event.direction)
            return []
        if type(event) is StreamClosed:
            state = self.connections.pop(event.conn.id, None)
            if state is None:
                return []
            for key, value in state.counters.items():
                self.closed_counters[key] = self.closed_counters.get(key, 0) + value
            return state.close()
        return []

    def finish(self) -> list[RawExchange]:
        out: list[RawExchange] = []
        for conn_id in list(self.connections):
            state = self.connections.pop(conn_id)
            for key, value in state.counters.items():
                self.closed_counters[key] = self.closed_counters.get(key, 0) + value
            out += state.close()
        return out
