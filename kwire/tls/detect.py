"""Is this TCP connection TLS? Decided from its first bytes, then out of the way.

`TlsDetector(open_inner, keys, report)` is a StreamFactory (kwire.tcp.stream) to give the TCP layer
in place of the inner (Kafka) factory. Each connection gets a `Sniffer` that looks at the first
bytes and becomes one of two things:
- TLS: a kwire.tls.stream.TlsStream wrapping the inner consumer;
- not TLS: the inner consumer itself. The sniffer binds the chosen consumer's data, gap and close
  methods onto itself, so every later call from TCP goes straight to them (one attribute lookup,
  no wrapper frame), and the bytes seen while deciding are handed over exactly as received, with
  their times, in their order.

How it decides (states UNDECIDED -> TLS | NOT_TLS):
- connection opened in the capture (Connection.initiator known): the first 5 bytes of whichever
  side speaks first are a plausible record header (content type 20-23, version 0x0300-0x0304, a
  length TLS allows) or they are not; TLS clients speak first with a ClientHello.
- mid-stream (no SYN seen) or after a gap: plaintext Kafka wins, and TLS must earn its verdict.
  Application-data records with no handshake and no key cannot be checked, while the end of a Kafka
  frame not captured (a record value) can hold anything, records too: so both readings are kept
  while both hold, up to DECIDE_BYTES of one direction (the detection window). A segment that is
  exactly one Kafka-like frame (a 4-byte length equal to the rest), or a Kafka request frame chain
  that parses anywhere in the bytes held (`plain`, given by the pipeline:
  kwire.native.kafka_resync.request_chain, which searches every offset, those after a prefix that looks
  like records too), says not TLS at once. At the window's end, a chain of at least two plausible
  record headers (kwire.tls.records) that began in its first FIRST_BOUNDARY bytes (where a TLS
  stream's first record boundary lies), runs record after record to the end of the direction's
  bytes and was continued by a later segment than the one it began in says TLS, unless a Kafka
  request frame still open began before it (a record value holding bytes that look like records:
  the frame is waited for, at most MAX_TENTATIVE bytes more); no such chain says not TLS. A close
  before that decides on what there is: such a chain, or a direction that starts on a record header.
Work is bounded per byte: both searches are incremental (each byte searched once for record headers,
a header cut by a segment's end judged when its bytes are in; at most MAX_CHAINS chains followed at a
time, and only those whose next header has come looked at), never a rescan of what is held at each new
segment; the bytes seen are held once.
Mid-stream TLS is reported (TlsStream with "handshake not captured"), not decrypted.
"""

from __future__ import annotations

import struct
from collections import deque
from heapq import heapify, heappop, heappush

from kwire.tcp.stream import Connection, StreamConsumer, StreamFactory
from kwire.tls.keylog import KeySource
from kwire.tls.records import CANDIDATE_HEADER, HEADER, MAX_RECORD, header_length

DECIDE_BYTES = 2 * (MAX_RECORD + 2 * HEADER)  # one direction's bytes that settle a mid-stream guess
FIRST_BOUNDARY = MAX_RECORD + HEADER  # a TLS stream taken mid-record has a record header this far in
MAX_TENTATIVE = 4 << 20  # bytes held while a Kafka frame still open may hold what looks like records
MAX_CHAINS = 256  # record chains followed at once (the oldest is let go)
_I32 = struct.Struct(">i").unpack_from
UNDECIDED, TLS, NOT_TLS = "undecided", "tls", "not_tls"


class Chains:
    """Record chains in one direction's bytes, found incrementally: `update(buf)` (buf only grows,
    one call per delivery) returns where the earliest chain begins that has at least two plausible
    headers of one version, runs to the end of buf (the last record may be incomplete) and was
    continued by a later delivery than the one it began in (bytes inside one Kafka record value can
    hold a chain; the next segment, a Kafka frame, breaks it), or -1; `best` keeps that answer.

    Work per delivery is what the new bytes call for, however many chains wait: chains wait in a heap
    by the position of their next header and only those whose header has come are looked at; the
    qualified ones in a heap by start. `steps` counts the chains and headers looked at (tests hold it
    linear in the bytes)."""

    __slots__ = ("scanned", "pending", "waiting", "found", "qualified", "alive", "deliveries", "best", "steps")

    def __init__(self) -> None:
        self.scanned = 0  # bytes below this were searched for candidate headers
        self.pending: list[int] = []  # candidate positions whose 5 header bytes are not all in yet
        # A chain: [next header position, start, headers, version bytes, born, later headers, let go, qualified]
        self.waiting: list[list] = []  # heap by next header position
        self.found: deque = deque()  # in the order found (by start), for letting the oldest go
        self.qualified: list[tuple] = []  # heap of (start, chain)
        self.alive = 0
        self.deliveries = 0
        self.best = -1
        self.steps = 0

    def update(self, buf) -> int:
        n = len(buf)
        self.deliveries += 1
        if n > self.scanned:
            self._find(buf, n)
        now, waiting, steps = self.deliveries, self.waiting, 0
        while waiting and waiting[0][0] + HEADER <= n:
            chain = heappop(waiting)
            steps += 1
            if chain[6]:
                continue
            pos, version = chain[0], chain[3]
            while pos + HEADER <= n:
                steps += 1
                length = header_length(buf, pos)
                if length <= 0 or buf[pos + 1:pos + 3] != version:
                    chain[6] = True
                    self.alive -= 1
                    break
                pos += HEADER + length
                chain[2] += 1
                if now > chain[4]:
                    chain[5] += 1
            if not chain[6]:
                chain[0] = pos
                heappush(waiting, chain)
                if not chain[7] and chain[2] >= 2 and chain[5]:
                    chain[7] = True
                    heappush(self.qualified, (chain[1], chain))
        self.steps += steps
        qualified = self.qualified
        while qualified and qualified[0][1][6]:
            heappop(qualified)
        self.best = qualified[0][0] if qualified else -1
        return self.best

    def _find(self, buf, n: int) -> None:
        """New chains at the candidate headers whose 5 bytes are in; the oldest let go past MAX_CHAINS.
        A header cut by the end of buf waits in `pending` (at most 4 positions): each byte is searched
        once, and a header that straddles two deliveries is still found."""
        now, ready, wait = self.deliveries, [], []
        for i in self.pending:
            (ready if i + HEADER <= n else wait).append(i)
        for match in CANDIDATE_HEADER.finditer(buf, self.scanned, n):
            i = match.start()
            (ready if i + HEADER <= n else wait).append(i)
        wait.extend(range(max(self.scanned, n - 2), n))  # too few bytes yet to match the pattern
        self.scanned, self.pending = n, wait
        for i in ready:
            length = header_length(buf, i)
            self.steps += 1
            if length > 0:
                chain = [i + HEADER + length, i, 1, bytes(buf[i + 1:i + 3]), now, 0, False, False]
                heappush(self.waiting, chain)
                self.found.append(chain)
                self.alive += 1
        found = self.found
        while self.alive > MAX_CHAINS:
            chain = found.popleft()
            if not chain[6]:
                chain[6] = True
                self.alive -= 1
        # Chains let go or broken are dropped from the heaps when they come up; rebuilt when they pile up.
        if len(found) > 2 * MAX_CHAINS:
            self.found = deque(chain for chain in found if not chain[6])
        if len(self.waiting) > 2 * MAX_CHAINS:
            self.waiting = [chain for chain in self.waiting if not chain[6]]
            heapify(self.waiting)
        if len(self.qualified) > 2 * MAX_CHAINS:
            self.qualified = [entry for entry in self.qualified if not entry[1][6]]
            heapify(self.qualified)


class Sniffer:
    """One connection while undecided; see the module docstring."""

    # Slots (one is made per TCP connection, 100,000 may be open): `data`, `gap` and `close` are slots
    # holding bound methods, the sniffing ones first, the chosen consumer's after the decision.
    __slots__ = ("conn", "detector", "verdict", "target", "seen", "buffered", "earlier", "started", "chains",
                 "plain_scans", "data", "gap", "close")

    def __init__(self, conn: Connection, detector: "TlsDetector"):
        self.conn = conn
        self.detector = detector
        self.verdict = UNDECIDED
        self.target: StreamConsumer | None = None
        # What was seen, in order: ("data", direction, ts_ns, length) or ("gap", direction, ts_ns, size). The bytes
        # are held once, in `buffered` (each direction's since its start or last gap) and, before a gap, `earlier`.
        self.seen: list[tuple] | None = []  # (None once decided, as the other sniffing state)
        self.buffered = [bytearray(), bytearray()]
        self.earlier: list | None = None  # per direction, the buffers closed by gaps (made at the first gap)
        self.started: list | None = [conn.initiator is not None] * 2  # at the stream's start
        self.chains: list | None = None  # record chains, per direction (mid-stream only, made when needed)
        self.plain_scans: list | None = None  # the Kafka request search's state, per direction (the same)
        self.data, self.gap, self.close = self._data, self._gap, self._close

    # After the decision the chosen consumer's methods are bound on the instance and shadow these;
    # a caller that kept a bound method of the class from before still reaches the target.

    def _data(self, direction: int, ts_ns: int, data) -> int:
        if self.target is not None:
            return self.target.data(direction, ts_ns, data)
        if type(data) is tuple:
            data = b"".join(data)
        self.seen.append(("data", direction, ts_ns, len(data)))
        buf = self.buffered[direction]
        buf += data
        verdict = self._judge(direction, data)
        if verdict is UNDECIDED:
            return 0
        return self._become(verdict, direction)

    def _gap(self, direction: int, ts_ns: int, size: int) -> None:
        if self.target is not None:
            return self.target.gap(direction, ts_ns, size)
        self.seen.append(("gap", direction, ts_ns, size))
        if self.earlier is None:
            self.earlier = [[], []]
        self.earlier[direction].append(self.buffered[direction])
        self.buffered[direction] = bytearray()
        self.started[direction] = False
        if self.chains is not None:
            self.chains[direction] = Chains()
            self.plain_scans[direction] = {}

    def _close(self, ts_ns: int, reason: str) -> None:
        if self.target is not None:
            return self.target.close(ts_ns, reason)
        verdict = NOT_TLS
        for buf in self.buffered:
            if len(buf) >= HEADER and header_length(buf, 0) > 0:
                verdict = TLS
        if self.chains is not None and any(0 <= chains.best <= FIRST_BOUNDARY for chains in self.chains):
            verdict = TLS
        if self.seen:
            self._become(verdict, -1)
            self.target.close(ts_ns, reason)
        # nothing was ever seen: no consumer is made for a connection without bytes

    def _judge(self, direction: int, data) -> str:
        buf = self.buffered[direction]
        if self.started[direction]:
            if len(buf) < HEADER:
                return UNDECIDED
            return TLS if header_length(buf, 0) > 0 else NOT_TLS
        if len(data) >= 4 and _I32(data, 0)[0] == len(data) - 4:
            return NOT_TLS
        if self.chains is None:
            self.chains, self.plain_scans = [Chains(), Chains()], [{}, {}]
        plain = self.detector.plain
        open_frame = -1
        if plain is not None:
            parsed, open_frame = plain(buf, self.plain_scans[direction])
            if parsed:
                return NOT_TLS  # a plaintext Kafka frame chain parses: it wins
        start = self.chains[direction].update(buf)
        if len(buf) < DECIDE_BYTES:
            return UNDECIDED  # records alone cannot be checked: Kafka may yet frame after them
        if not 0 <= start <= FIRST_BOUNDARY:
            return NOT_TLS
        if 0 <= open_frame <= start and len(buf) <= DECIDE_BYTES + MAX_TENTATIVE:
            return UNDECIDED  # records inside a Kafka frame not yet complete: wait for its end
        return TLS

    def _become(self, verdict: str, direction: int) -> int:
        """Make the consumer, bind its methods here, replay what was seen; the need of `direction`."""
        self.verdict = verdict
        detector = self.detector
        if verdict is TLS:
            # Here, not at import: TLS streams load the cryptography package, which a capture of
            # plaintext Kafka never needs.
            from kwire.tls.stream import TlsStream

            detector.tls_connections += 1
            target = TlsStream(self.conn, detector.open_inner, detector.keys, detector.report,
                               key_wait_bytes=detector.key_wait_bytes)
        else:
            detector.plain_connections += 1
            target = detector.open_inner(self.conn)
        self.target = target
        self.data = target.data
        self.gap = target.gap
        self.close = target.close
        need = 0
        seen, buffers = self.seen, [[buf] for buf in self.buffered]
        if self.earlier is not None:
            buffers = [earlier + current for earlier, current in zip(self.earlier, buffers)]
        self.seen = self.started = self.buffered = self.earlier = self.chains = self.plain_scans = None
        at = [[0, 0], [0, 0]]  # per direction: which buffer, where in it
        for kind, d, ts, value in seen:
            where = at[d]
            if kind == "data":
                start = where[1]
                where[1] = start + value
                result = target.data(d, ts, bytes(memoryview(buffers[d][where[0]])[start:start + value]))
                if d == direction:
                    need = result
            else:
                where[0] += 1
                where[1] = 0
                target.gap(d, ts, value)
        return need


class TlsDetector:
    """A StreamFactory: TLS connections get a TlsStream around the inner consumer, others the inner
    consumer itself (see the module docstring). Counts both kinds."""

    def __init__(self, open_inner: StreamFactory, keys: KeySource | None = None, report=None,
                 *, key_wait_bytes: int = 0, plain=None):
        """`plain(buf, scan) -> (parsed, open frame start)`: does a plaintext Kafka request frame
        chain parse in these mid-stream bytes (kwire.native.kafka_resync.request_chain, given by the
        pipeline: this layer does not know Kafka)? None: record chains alone decide."""
        self.open_inner = open_inner
        self.plain = plain
        self.keys = keys
        self.report = report
        self.key_wait_bytes = key_wait_bytes
        self.tls_connections = 0
        self.plain_connections = 0

    def __call__(self, conn: Connection) -> Sniffer:
        return Sniffer(conn, self)
