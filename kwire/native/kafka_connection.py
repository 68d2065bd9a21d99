"""One TCP connection read as Kafka: a StreamConsumer (kwire.tcp.stream) whose states are explicit.

`KafkaLayer.open(conn)` makes a `KafkaStream` for each connection TCP opens (it is the FlowTable's
factory, or the inner factory of a stream layer below Kafka such as TLS); the RawExchanges a stream
completes go to the `emit` the layer was given, in order. A stream is in one of four states, and data()
hands the bytes to the reader of the state it is in (`reader`: h11's per-state readers):

    ROLES_UNKNOWN  no handshake was captured: both directions are framed and kept (kwire.native.kafka_roles)
                   until one side's requests are seen answered by the other.
                   -> CANDIDATE (its early frames replayed), or IGNORED (no decision in 64 frames).
    CANDIDATE      roles known (from the SYN, or decided), not yet seen to be Kafka: exchanges are
                   held (at most MAX_HELD) and dropped if it never confirms.
                   -> CONFIRMED when a response answers a pending correlation id (or a request claims
                   an early response, or CONFIRM_CHAINED_REQUESTS requests frame in a row after a
                   captured SYN: acks=0 producers get no answers); its held exchanges go out first.
                   -> IGNORED after GIVE_UP_BYTES scanned in vain (a request frame still coming whose
                   header is plausible, up to WAIT_FRAME, is waited for), or MAX_HELD exchanges held.
    CONFIRMED      Kafka: exchanges go out as they complete; data() tells TCP how many bytes the
                   frame in progress still needs, so a big frame is handed over whole, once.
    IGNORED        not Kafka: nothing more is looked at.

A `--port` hint starts a connection CONFIRMED (the hinted port is the broker's). With
`KafkaLayer(track_spans=True)` (what `kwire inspect -w` needs), the readers also note where each
frame lies in its direction's bytes (`received`: bytes and gaps handed over so far; a frame ends where
the bytes the framer still holds begin) and exchanges carry those spans. Mid-stream and after
gaps the framers resynchronise (kwire.native.kafka_resync): the request side on the next plausible request
header, the response side on the next length whose correlation id is pending.
"""

from __future__ import annotations

from typing import Callable

from kwire.kafka.apis import APIS
from kwire.native.framing import CutFrame, Framer
from kwire.native.kafka_headers import parse_cut_request_header, parse_request_header, plausible_request
from kwire.native.kafka_pairing import Pairing, RawExchange
from kwire.native.kafka_resync import KEEP_TAIL, find_response_start, scan_requests
from kwire.native.kafka_roles import RoleDetector
from kwire.tcp.stream import Connection

DEFAULT_MAX_FRAME = 256 * 1024 * 1024  # Kafka's own socket.request.max.bytes default is 100 MiB
MAX_HELD = 256  # exchanges held while a connection is not yet confirmed as Kafka
CONFIRM_CHAINED_REQUESTS = 3
GIVE_UP_BYTES = 1 << 20  # unconfirmed connection: bytes scanned in vain before it is ignored
WAIT_FRAME = 16 << 20  # ... unless a request frame this long at most, its header plausible, is still coming

ROLES_UNKNOWN, CANDIDATE, CONFIRMED, IGNORED = "roles_unknown", "candidate", "confirmed", "ignored"
COUNTERS = ("frames", "unparsed_frames", "duplicate_correlation_ids", "pending_overflow", "dropped_bodies", "gaps",
            "cut_frames", "ignored_kafka_like", "ignored_exchanges")

Emit = Callable[[RawExchange], None]


class KafkaCounters:
    """What the Kafka layer counted over a run: connections seen to be Kafka, and the per-connection
    counters of COUNTERS summed as connections close (`closed`)."""

    __slots__ = ("kafka_connections", "closed")

    def __init__(self) -> None:
        self.kafka_connections = 0
        self.closed = dict.fromkeys(COUNTERS, 0)


def _closed(direction: int, ts_ns: int, data) -> int:
    """The reader of a closed stream: what still comes is dropped."""
    return 0


class KafkaStream:
    """The Kafka reader of one connection; see the module docstring for its states."""

    __slots__ = ("conn", "layer", "emit", "counters", "state", "reader", "client_dir", "framers", "pairing", "roles",
                 "held", "chained", "scanned", "max_frame", "client_id", "client_id_text", "frames", "unparsed_frames",
                 "gaps", "received")

    def __init__(self, conn: Connection, layer: KafkaLayer, *, hinted_client: int | None):
        self.conn = conn
        self.layer = layer
        self.emit = layer.emit
        self.counters = layer.counters
        self.max_frame = max_frame = layer.max_frame
        synced = conn.initiator is not None
        # one bound method for both (a method, not a lambda: Spark's follow mode pickles the state)
        find_start = self._find_start
        self.framers = (Framer(find_start, synced=synced, max_frame=max_frame, direction=0),
                        Framer(find_start, synced=synced, max_frame=max_frame, direction=1))
        self.client_id: bytes | None = None  # the client id every request of this connection carries
        self.client_id_text: str | None = None  # the same as text: one str that each request's header then holds
        self.held: list[RawExchange] = []
        self.chained = self.scanned = 0
        self.frames = self.unparsed_frames = self.gaps = 0
        self.received = [0, 0] if layer.track_spans else None  # bytes (and gaps) of each direction so far
        self.client_dir: int | None = None
        self.pairing: Pairing | None = None
        self.roles: RoleDetector | None = None
        if hinted_client is not None:
            self._roles_known(0 if conn.initiator == 0 else hinted_client)
            self._enter(CONFIRMED)
        elif conn.initiator == 0:
            self._roles_known(0)
            self._enter(CANDIDATE)
        else:
            self.roles = RoleDetector(max_frame)
            self._enter(ROLES_UNKNOWN)

    # -- states

    def data(self, direction: int, ts_ns: int, data) -> int:
        """StreamConsumer.data: the current state's reader takes the bytes. CONFIRMED's, when spans
        are not tracked (`reader` None), is here itself: the frames go straight out; the bytes of
        every exchange come this way, so it is one call deep."""
        reader = self.reader
        if reader is not None:
            return reader(direction, ts_ns, data)
        framer = self.framers[direction]
        frames = framer.feed(data)
        if frames:
            self.frames += len(frames)
            emit = self.emit
            pairing = self.pairing
            if direction == self.client_dir:
                for body in frames:
                    self._request(body, ts_ns, emit)  # a C call, compiled (kwire/native/kafka_connection.pxd)
            else:
                count = self.frames
                for body in frames:
                    if len(body) < 4:
                        self.unparsed_frames += 1
                    else:
                        pairing.response(body, ts_ns, count, emit)  # (confirmed already)
            if pairing.orphans:
                pairing.expire_orphans(self.frames, emit)
        return framer.need

    def _enter(self, state: str) -> None:
        was, self.state = getattr(self, "state", None), state
        self.reader = {ROLES_UNKNOWN: self._data_roles_unknown, CANDIDATE: self._data_candidate,
                       CONFIRMED: None if self.received is None else self._data_spanned,
                       IGNORED: self._data_ignored}[state]
        if state == CONFIRMED:
            self.counters.kafka_connections += 1
            held, self.held = self.held, []
            for raw in held:
                self.emit(raw)
        elif state == IGNORED:
            if was != CONFIRMED and (self.held or self.chained):  # it framed Kafka requests: say so
                self.counters.closed["ignored_kafka_like"] += 1
                self.counters.closed["ignored_exchanges"] += len(self.held)
            self.held = []
            self.roles = None

    def _roles_known(self, client_dir: int) -> None:
        self.client_dir = client_dir
        self.pairing = Pairing(self.conn, client_dir)
        if self.roles is not None and self.roles.gapped[1 - client_dir]:
            self.pairing.lossy = True

    def _confirm(self) -> None:
        if self.state != CONFIRMED:
            self._enter(CONFIRMED)

    def _out(self, raw: RawExchange) -> None:
        """An exchange completed: out at once when confirmed, else held."""
        if self.state == CONFIRMED:
            self.emit(raw)
        else:
            self.held.append(raw)

    # -- the per-state readers

    def _data_spanned(self, direction: int, ts_ns: int, data) -> int:
        """CONFIRMED's reader (data()), noting where each frame lies in the direction's bytes."""
        framer = self.framers[direction]
        frames = framer.feed(data)
        self.received[direction] += sum(map(len, data)) if type(data) is tuple else len(data)
        if frames:
            self.frames += len(frames)
            self._dispatch(direction, ts_ns, frames, self._spans(direction, frames))
        return framer.need

    def _spans(self, direction: int, frames) -> list | None:
        """(start, end) of each frame just cut: they end where the bytes the framer holds begin, one
        after the other (a resync inside the same delivery would skip bytes between them: rare, and
        then the spans of the frames before it are not given)."""
        if self.received is None:
            return None
        end = self.received[direction] - len(self.framers[direction].buf)
        spans = []
        for body in reversed(frames):
            start = end - (body.size if type(body) is CutFrame else 4 + len(body))
            spans.append((start, end))
            end = start
        spans.reverse()
        return spans

    def _framed(self, direction: int, data) -> tuple:
        """(the bytes as one, the frames they complete), counted as scanned: the first step of the
        states that still look at every byte (roles unknown, candidate)."""
        if type(data) is tuple:
            data = b"".join(data)
        frames = self.framers[direction].feed(data)
        self.frames += len(frames)
        self.scanned += len(data)
        if self.received is not None:
            self.received[direction] += len(data)
        return data, frames

    def _data_candidate(self, direction: int, ts_ns: int, data) -> int:
        data, frames = self._framed(direction, data)
        self._dispatch(direction, ts_ns, frames, self._spans(direction, frames))
        self._judge()
        return 0

    def _data_roles_unknown(self, direction: int, ts_ns: int, data) -> int:
        data, frames = self._framed(direction, data)
        return self._roles_add(direction, ts_ns, data, frames)

    def _roles_add(self, direction: int, ts_ns: int, data, frames) -> int:
        """What a direction sent (and the frames it completed) to the role detector; decided: on."""
        roles = self.roles
        decided = roles.add(direction, ts_ns, data, frames)
        if decided is None:
            if roles.gave_up:
                self._enter(IGNORED)
            return 0
        self._roles_known(decided)
        self._enter(CANDIDATE)
        self._replay(roles, ts_ns)
        if self.state == CANDIDATE:
            self._judge()
        return 0

    def _data_ignored(self, direction: int, ts_ns: int, data) -> int:
        return 0

    def _replay(self, roles: RoleDetector, ts_ns: int) -> None:
        """Roles just decided: the early frames as requests and responses, in the order they came."""
        self.roles = None
        for d, ts, body in roles.early:
            self._dispatch(d, ts, (body,), expire=False)  # (their spans are not known)
        if roles.rescan:
            responder = 1 - self.client_dir
            self.framers[responder].restart(roles.raw[responder])
            self._dispatch(responder, ts_ns, self.framers[responder].feed(b""), expire=False)
        if self.pairing.orphans:
            self.pairing.expire_orphans(self.frames, self._out)

    def _judge(self) -> None:
        """A candidate that has shown nothing Kafka-like for long enough is not Kafka."""
        if self.state != CANDIDATE:
            return
        if self.scanned > GIVE_UP_BYTES and not self.held and not self.pairing.pending \
                and not self._request_in_progress():
            self._enter(IGNORED)
        elif len(self.held) > MAX_HELD:
            self._enter(IGNORED)

    def _request_in_progress(self) -> bool:
        """Is the client's framer inside a request frame (its header plausible, at most WAIT_FRAME
        long) that has not completed yet? A first request larger than the detection window (a 2 MiB
        Produce) is waited for, and the connection recognised by it, not ignored half-way."""
        framer = self.framers[self.client_dir] if self.client_dir is not None else None
        if framer is None or not framer.synced or not framer.need or len(framer.buf) < 14:
            return False
        return len(framer.buf) + framer.need <= WAIT_FRAME + 4 and plausible_request(framer.buf, 0, self.max_frame)

    # -- frames of a connection whose roles are known

    def _dispatch(self, direction: int, ts_ns: int, frames, spans=None, expire: bool = True) -> None:
        # Confirmed: exchanges go straight out (a candidate confirmed meanwhile goes on through _out)
        out = self.emit if self.state == CONFIRMED else self._out
        pairing = self.pairing
        if spans is not None:
            self._dispatch_spanned(direction, ts_ns, frames, spans, out)
        elif direction == self.client_dir:
            for body in frames:
                self._request(body, ts_ns, out)
        else:
            for body in frames:
                if len(body) < 4:
                    self.unparsed_frames += 1
                elif pairing.response(body, ts_ns, self.frames, out):
                    self._confirm()
        if expire and pairing.orphans:
            pairing.expire_orphans(self.frames, out)

    def _dispatch_spanned(self, direction: int, ts_ns: int, frames, spans, out) -> None:
        pairing = self.pairing
        for body, span in zip(frames, spans):
            if direction == self.client_dir:
                self._request(body, ts_ns, out, span)
            elif len(body) < 4:
                self.unparsed_frames += 1
            elif pairing.response(body, ts_ns, self.frames, out, span):
                self._confirm()

    def _request(self, body, ts_ns: int, out, span: tuple | None = None) -> None:
        try:
            header = parse_request_header(body)
        except Exception:  # noqa: BLE001 - any malformation: resync from here
            header = self._cut_header(body)
        if header is None or header.api_key not in APIS:
            self.unparsed_frames += 1
            self.chained = 0
            self.framers[self.client_dir].resync()
            return
        self.chained += 1
        text = header.client_id
        if text is not None:
            known = self.client_id_text
            if known is not None and text == known:
                # the connection's one str: the look-ups keyed by client id (stats' cells, the JSON line's parts)
                # then find theirs by identity, its hash made once
                header.client_id = known
            else:
                self.client_id_text = text
                if self.client_id is None:
                    self.client_id = text.encode("utf-8", "replace")
        if self.state is CONFIRMED:
            self.pairing.request(header, body, ts_ns, out, span)
            return
        if (self.state == CANDIDATE and self.chained >= CONFIRM_CHAINED_REQUESTS
                and self.conn.initiator is not None):
            self._confirm()
        if self.pairing.request(header, body, ts_ns, out, span):
            self._confirm()

    @staticmethod
    def _cut_header(body):
        """The header of a request the snap length cut inside its header, or None."""
        if type(body) is not CutFrame:
            return None
        try:
            return parse_cut_request_header(body)
        except Exception:  # noqa: BLE001 - less than api, version and correlation id: nothing to go on
            return None

    def _find_start(self, direction: int, buf, scan: dict) -> tuple[int, int]:
        """Where the next frame of `direction` starts in `buf` (the framers' resync callback)."""
        if self.client_dir is None:
            # Roles unknown: only a request start confirmed by its own frame will do.
            return scan_requests(buf, scan, self.max_frame, None, trust_open=False)
        if self.client_dir == direction:
            return scan_requests(buf, scan, self.max_frame, self.client_id, trust_open=True)
        start = find_response_start(buf, self.max_frame, self.pairing.pending)
        if start >= 0:
            return start, 0
        return -1, max(0, len(buf) - KEEP_TAIL)

    # -- the rest of the contract

    def gap(self, direction: int, ts_ns: int, size: int, exact: bool = True) -> None:
        """StreamConsumer.gap: the framer follows a frame of known length through it (kwire.native.framing);
        a frame that ends in the gap comes out cut, at the gap's time, and is read as any other."""
        self.gaps += 1
        if self.roles is not None:
            self.roles.gap(direction)
        elif self.pairing is not None and direction != self.client_dir:
            self.pairing.lossy = True
        frames = self.framers[direction].gap(size if exact else None)
        if self.received is not None:
            self.received[direction] += size
        if not frames:
            return
        self.frames += len(frames)
        state = self.state
        if state == ROLES_UNKNOWN:
            self._roles_add(direction, ts_ns, b"", frames)
        elif state == CANDIDATE:
            self._dispatch(direction, ts_ns, frames)
            self._judge()
        elif state == CONFIRMED:
            self._dispatch(direction, ts_ns, frames)

    def gap_at_most(self, direction: int, ts_ns: int, size: int) -> None:
        """At most `size` bytes were lost (a decrypting layer's gap): nothing to follow, resynchronise."""
        self.gap(direction, ts_ns, size, exact=False)

    def close(self, ts_ns: int, reason: str) -> None:
        """The connection ended: every pending request is unanswered (reported once confirmed)."""
        closed = self.counters.closed
        closed["frames"] += self.frames
        closed["unparsed_frames"] += self.unparsed_frames
        closed["gaps"] += self.gaps
        closed["cut_frames"] += self.framers[0].cut_frames + self.framers[1].cut_frames
        pairing = self.pairing
        if pairing is not None:
            closed["duplicate_correlation_ids"] += pairing.duplicate_correlation_ids
            closed["pending_overflow"] += pairing.pending_overflow
            closed["dropped_bodies"] += pairing.dropped_bodies
            if self.state == CONFIRMED:
                pairing.close(ts_ns, self.frames, self._out, reason)
        self._enter(IGNORED)
        self.layer.streams.pop(self.conn.id, None)
        # The reader and the framers' callbacks are bound to this stream: cycles that only the collector frees,
        # which kwire's settings (kwire/gc_policy.py) let wait, so a run of 100,000 connections kept 41,000 closed
        # ones (140 MB). Broken here, each stream is freed with its connection.
        self.reader = _closed
        for framer in self.framers:
            framer.find_start = None


class KafkaLayer:
    """Makes the KafkaStream of each connection (`open`, a kwire.tcp.stream.StreamFactory), knows the
    open ones (`streams`, by connection id) and keeps the run's KafkaCounters. `port_hints`: broker
    ports, whose connections start CONFIRMED."""

    def __init__(self, emit: Emit, *, port_hints: frozenset[int] = frozenset(),
                 max_frame: int = DEFAULT_MAX_FRAME, track_spans: bool = False):
        self.emit = emit
        self.port_hints = port_hints
        self.max_frame = max_frame
        self.track_spans = track_spans
        self.counters = KafkaCounters()
        self.streams: dict[int, KafkaStream] = {}

    def open(self, conn: Connection) -> KafkaStream:
        hints = self.port_hints
        hinted = None
        if hints and (conn.a[1] in hints or conn.b[1] in hints):
            hinted = 1 if conn.a[1] in hints else 0  # the hinted port is the broker's
        stream = self.streams[conn.id] = KafkaStream(conn, self, hinted_client=hinted)
        return stream

    def oldest_pending(self) -> tuple[int | None, int]:
        """(the capture time of the oldest request still waiting for its answer on any connection, or None;
        the connections looked at: what the answer cost)."""
        oldest = None
        for stream in self.streams.values():
            pairing = stream.pairing  # None until the connection's roles are known
            first = pairing.oldest_ts_ns() if pairing is not None else None
            if first is not None and (oldest is None or first < oldest):
                oldest = first
        return oldest, len(self.streams)
