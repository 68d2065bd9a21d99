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
- mid-stream (no SYN seen) or after a gap: plaintext Kafka wins. A segment that is exactly one
  Kafka-like frame (a 4-byte length equal to the rest), or a Kafka request frame chain that parses
  (`plain`, given by the pipeline: kwire.kafka.resync.request_chain) says not TLS. Otherwise a chain
  of at least two plausible record headers (kwire.tls.records) that runs, record after record, to the
  end of the direction's bytes, and was continued by a later segment than the one it began in, says TLS, unless a Kafka request frame still open began before it (a
  record value holding bytes that look like records: the frame is waited for, at most
  MAX_TENTATIVE bytes). DECIDE_BYTES bytes of one direction without a chain say not TLS. A close
  before that decides on what there is.

Work is bounded per byte: both searches are incremental (each byte looked at about once, at most
MAX_CHAINS chains followed at a time), never a rescan of what is held at each new segment.
Mid-stream TLS is reported (TlsStream with "handshake not captured"), not decrypted.
"""

from __future__ import annotations

import struct

from kwire.tcp.stream import Connection, StreamConsumer, StreamFactory
from kwire.tls.keylog import KeySource
from kwire.tls.records import CANDIDATE_HEADER, HEADER, MAX_RECORD, header_length

DECIDE_BYTES = 2 * (MAX_RECORD + 2 * HEADER)  # one direction's bytes that settle a mid-stream guess
MAX_TENTATIVE = 4 << 20  # bytes held while a Kafka frame still open may hold what looks like records
MAX_CHAINS = 256  # record chains followed at once (the oldest is let go)
_I32 = struct.Struct(">i").unpack_from
UNDECIDED, TLS, NOT_TLS = "undecided", "tls", "not_tls"


class Chains:
    """Record chains in one direction's bytes, found incrementally: `update(buf)` (buf only grows,
    one call per delivery) returns where a chain of at least two plausible headers with one version
    begins that runs to the end of buf (the last record may be incomplete) and was continued by a
    later delivery than the one it began in (bytes inside one Kafka record value can hold a chain;
    the next segment, a Kafka frame, breaks it), or -1."""

    __slots__ = ("scanned", "chains", "deliveries")

    def __init__(self) -> None:
        self.scanned = 0  # candidate header positions below this were looked at
        self.chains: list[list] = []  # [start, next header position, headers, version bytes, born, later]
        self.deliveries = 0

    def update(self, buf) -> int:
        n = len(buf)
        self.deliveries += 1
        now = self.deliveries
        if n - 2 > self.scanned:
            for match in CANDIDATE_HEADER.finditer(buf, self.scanned, n - 2):
                i = match.start()
                length = header_length(buf, i)
                if length > 0:
                    self.chains.append([i, i + HEADER + length, 1, bytes(buf[i + 1:i + 3]), now, 0])
            self.scanned = n - 2
            if len(self.chains) > MAX_CHAINS:
                del self.chains[:len(self.chains) - MAX_CHAINS]
        best, alive = -1, []
        for chain in self.chains:
            pos, version = chain[1], chain[3]
            broken = False
            while pos + HEADER <= n:
                length = header_length(buf, pos)
                if length <= 0 or buf[pos + 1:pos + 3] != version:
                    broken = True
                    break
                pos += HEADER + length
                chain[2] += 1
                if now > chain[4]:
                    chain[5] += 1
            if broken:
                continue
            chain[1] = pos
            alive.append(chain)
            if chain[2] >= 2 and chain[5] and (best < 0 or chain[0] < best):
                best = chain[0]
        self.chains = alive
        return best


class Sniffer:
    """One connection while undecided; see the module docstring."""

    # Slots (one is made per TCP connection, 100,000 may be open): `data`, `gap` and `close` are slots
    # holding bound methods, the sniffing ones first, the chosen consumer's after the decision.
    __slots__ = ("conn", "detector", "verdict", "target", "seen", "buffered", "started", "chains", "plain_scans",
                 "data", "gap", "close")

    def __init__(self, conn: Connection, detector: "TlsDetector"):
        self.conn = conn
        self.detector = detector
        self.verdict = UNDECIDED
        self.target: StreamConsumer | None = None
        self.seen: list[tuple] = []  # ("data"|"gap", direction, ts_ns, data or size), in order
        self.buffered = [bytearray(), bytearray()]  # each direction's bytes since its start or last gap
        self.started = [conn.initiator is not None, conn.initiator is not None]  # at the stream's start
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
        self.seen.append(("data", direction, ts_ns, data))
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
        self.buffered[direction].clear()
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
        if start >= 0:
            if 0 <= open_frame <= start and len(buf) <= DECIDE_BYTES + MAX_TENTATIVE:
                return UNDECIDED  # records inside a Kafka frame not yet complete: wait for its end
            return TLS
        if len(buf) > DECIDE_BYTES:
            return NOT_TLS
        return UNDECIDED

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
        seen, self.seen, self.buffered = self.seen, [], None
        self.chains = self.plain_scans = None
        for kind, d, ts, value in seen:
            if kind == "data":
                result = target.data(d, ts, value)
                if d == direction:
                    need = result
            else:
                target.gap(d, ts, value)
        return need


class TlsDetector:
    """A StreamFactory: TLS connections get a TlsStream around the inner consumer, others the inner
    consumer itself (see the module docstring). Counts both kinds."""

    def __init__(self, open_inner: StreamFactory, keys: KeySource | None = None, report=None,
                 *, key_wait_bytes: int = 0, plain=None):
        """`plain(buf, scan) -> (parsed, open frame start)`: does a plaintext Kafka request frame
        chain parse in these mid-stream bytes (kwire.kafka.resync.request_chain, given by the
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
