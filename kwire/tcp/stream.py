"""The contract between TCP and the stream layers above it (tls, kafka): one interface.

TCP reassembles both directions of each connection and hands what it has, in capture order, to that
connection's StreamConsumer, made for it by the factory the FlowTable was given
(`open_stream(conn) -> StreamConsumer`) when the connection's first byte or gap comes (a connection
that never carries a byte, as in a SYN flood or a port scan, never gets one). A consumer that is
itself a stream (TLS) wraps another consumer and speaks the same interface to it.

    consumer.data(direction, ts_ns, data) -> int
        In-order bytes of `direction` (0: from conn.a to conn.b, 1: the reverse), captured at ts_ns
        (the capture time of the segment that completed them). `data` is a bytes-like object, or a
        tuple of bytes-like pieces in order when TCP held several segments back to meet the
        consumer's need (below). Returns how many more bytes of that direction the consumer needs
        before it can do anything with them: 0 means "hand me whatever comes". With n > 0, TCP may
        hold in-order bytes back until n are in and hand them over at once, at the time of the
        segment that completed them. A consumer that never returns more than 0 only ever gets bytes.
    consumer.gap(direction, ts_ns, size) -> None
        `size` bytes of `direction` were never captured; the bytes that come next follow them.
        Bytes held back are handed over first; what the consumer needed is forgotten (0).
        TCP's sizes are exact (sequence numbers), so a consumer may follow a frame of known length
        through the gap. A stream layer whose losses are known only as a bound (TLS: ciphertext lost,
        the plaintext in it is less) calls the consumer's `gap_at_most(direction, ts_ns, size)` instead,
        when it has one (kwire.native.kafka_connection.KafkaStream does: it then resynchronises).
    consumer.close(ts_ns, reason) -> None
        The connection ended: "fin", "rst", "idle" (evicted), "end" (of the capture) or "reused"
        (a new SYN on its 4-tuple), the names kwire.tcp.closes registers. Everything held was handed
        over first; nothing comes after.

Guarantees: calls for one connection come in capture order; no byte is handed over twice and none
is made up (a hole is a gap, never zero-filled); data before a gap or close is handed over before
it. The consumer never calls back into TCP and never touches TCP's objects: the number data()
returns is the whole of what it says to TCP. `Connection` is what a consumer may read about its
connection (endpoints, who opened it, when, where each direction's sequence numbers started:
`conn.start_seq`, which direction sent the first FIN or RST: `conn.closer`, set before close() is called);
`conn.counters` is filled when it closes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from kwire.net.segment import Endpoint, format_endpoint

# the contract's names for close (kwire.tcp.closes), for the stream layers
from kwire.tcp.closes import END_CLOSE, FIN_CLOSE, IDLE_CLOSE, REUSED_CLOSE, RST_CLOSE  # noqa: F401


@dataclass(slots=True, eq=False)
class Connection:
    id: int
    a: Endpoint
    b: Endpoint
    initiator: int | None  # 0 when a sent the SYN; None when the handshake was not captured
    first_ts_ns: int
    counters: dict[str, int] = field(default_factory=dict)  # reassembly counters, filled at close
    start_seq: list = field(default_factory=lambda: [None, None])  # each direction's first sequence number
    names: tuple[str, str] | None = None  # ("ip:port" of a, of b): endpoint_names(), made on first ask
    closer: int | None = None  # the direction that sent the connection's first FIN or RST (None: neither seen)

    def endpoint(self, direction: int) -> Endpoint:
        """The sender of `direction`."""
        return self.a if direction == 0 else self.b

    def endpoint_names(self) -> tuple[str, str]:
        """("ip:port" of a, of b), made once (every exchange of the connection names both)."""
        names = self.names
        if names is None:
            names = self.names = (format_endpoint(*self.a), format_endpoint(*self.b))
        return names


class StreamConsumer(Protocol):
    """What reads the two byte streams of one TCP connection (see the module docstring)."""

    def data(self, direction: int, ts_ns: int, data) -> int: ...

    def gap(self, direction: int, ts_ns: int, size: int) -> None: ...

    def close(self, ts_ns: int, reason: str) -> None: ...


StreamFactory = Callable[[Connection], StreamConsumer]
