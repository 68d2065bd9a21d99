"""What TCP reassembly hands to the Kafka layer: ordered bytes, gaps and closes per connection.

A connection has two directions: 0 is from endpoint `a` to `b`, 1 the reverse. `a` is the side
that sent the first SYN when the handshake was seen (then `initiator` is 0), otherwise the side of
the first segment seen (and `initiator` is None: roles are unknown).

`Connection.demand` is the consumer's hint, per direction: demand[d] = n > 0 says "nothing can come
of direction d's bytes before n more of them are in" (a Kafka frame whose length is known is still
that short). Reassembly may then hold back in-order bytes until n are in and deliver them as one
StreamData, at the time of the segment that completed them; it resets demand[d] to 0 whenever it
delivers, and delivers what it holds before any other event of that direction (gap, close). Bytes
held this way are bounded by the consumer's own frame limit. A consumer that sets
`Connection.pieces` gets such a delivery as a tuple of the segments' payloads in order (StreamData.data
is then a tuple of bytes): it can join them with bytes of its own in one copy instead of two.

`Connection.sink`, when a consumer sets it, takes in-order bytes straight from the packet path:
a segment that would be delivered as a StreamData and cause no other event (in order, nothing
held, acknowledging nothing new) may instead go to sink(direction, ts_ns, data), which returns
whether it has something to say about them (kept by the consumer itself, for its caller to
collect before the next packet). It saves an event object and a trip through the caller's loop
per segment of a connection that carries many small messages. Everything else still comes as
events, in order: no event of a packet comes before the bytes a sink took from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from kwire.net.segment import Endpoint


@dataclass(slots=True, eq=False)
class Connection:
    id: int
    a: Endpoint
    b: Endpoint
    initiator: int | None  # 0 when a sent the SYN; None when the handshake was not captured
    first_ts_ns: int
    counters: dict[str, int] = field(default_factory=dict)  # per-connection reassembly counters
    demand: list[int] = field(default_factory=lambda: [0, 0])  # bytes the consumer waits for, per direction
    pieces: bool = False  # the consumer takes held-back bytes as a tuple of pieces (see the docstring)
    sink: Callable[[int, int, object], bool] | None = None  # takes plain in-order bytes (see the docstring)

    def endpoint(self, direction: int) -> Endpoint:
        """The sender of `direction`."""
        return self.a if direction == 0 else self.b


@dataclass(slots=True)
class StreamData:
    """In-order bytes of one direction; ts_ns is the capture time of the segment that completed them."""

    conn: Connection
    direction: int
    ts_ns: int
    data: bytes  # or a tuple of bytes: held-back bytes delivered to a consumer that set Connection.pieces


@dataclass(slots=True)
class StreamGap:
    """Bytes of one direction that were never captured; the stream resumes after them."""

    conn: Connection
    direction: int
    ts_ns: int
    size: int


@dataclass(slots=True)
class StreamClosed:
    """The connection ended (FIN both ways, RST, idle eviction, or end of capture)."""

    conn: Connection
    ts_ns: int
    reason: str  # "fin", "rst", "idle", "end", "reused" (a new SYN on a live 4-tuple)


StreamEvent = StreamData | StreamGap | StreamClosed
