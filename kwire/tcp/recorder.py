"""A StreamConsumer that writes down what it is handed, as events: for tests and tools.

`StreamRecorder` is a stream factory and the consumer of every connection it opens: each data(),
gap() and close() call becomes a StreamData, StreamGap or StreamClosed in `events`, in the order TCP
made them. `wants[conn.id]` (a [0, 0] list per connection) is what its data() returns for each
direction, so a test can ask TCP to hold bytes back as a real consumer would.
"""

from __future__ import annotations

from dataclasses import dataclass

from kwire.tcp.stream import Connection


@dataclass(slots=True)
class StreamData:
    """In-order bytes of one direction; ts_ns is the capture time of the segment that completed them."""

    conn: Connection
    direction: int
    ts_ns: int
    data: object  # bytes, or a tuple of bytes: pieces TCP held back and handed over at once


@dataclass(slots=True)
class StreamGap:
    """Bytes of one direction that were never captured; the stream resumes after them."""

    conn: Connection
    direction: int
    ts_ns: int
    size: int


@dataclass(slots=True)
class StreamClosed:
    """The connection ended (FIN both ways, RST, idle eviction, end of capture, or reuse)."""

    conn: Connection
    ts_ns: int
    reason: str


StreamEvent = StreamData | StreamGap | StreamClosed


class StreamRecorder:
    """Records every connection's stream (see the module docstring). Call it as a factory."""

    def __init__(self) -> None:
        self.events: list[StreamEvent] = []
        self.wants: dict[int, list[int]] = {}

    def __call__(self, conn: Connection) -> "_Recording":
        return _Recording(self, conn)

    def take(self) -> list[StreamEvent]:
        """The events recorded since the last take()."""
        events, self.events = self.events, []
        return events


class _Recording:
    __slots__ = ("recorder", "conn", "want")

    def __init__(self, recorder: StreamRecorder, conn: Connection):
        self.recorder = recorder
        self.conn = conn
        self.want = recorder.wants.setdefault(conn.id, [0, 0])

    def data(self, direction: int, ts_ns: int, data) -> int:
        self.recorder.events.append(StreamData(self.conn, direction, ts_ns, data))
        return self.want[direction]

    def gap(self, direction: int, ts_ns: int, size: int) -> None:
        self.recorder.events.append(StreamGap(self.conn, direction, ts_ns, size))

    def close(self, ts_ns: int, reason: str) -> None:
        self.recorder.events.append(StreamClosed(self.conn, ts_ns, reason))
