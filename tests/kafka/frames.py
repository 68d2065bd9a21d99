"""Test-only builders of Kafka frames (synthetic bytes for unit tests of framing and pairing)."""

from __future__ import annotations

import struct


def request_frame(api_key: int, version: int, corr: int, client_id: str | None = "cli", body: bytes = b"",
                  flexible: bool = False) -> bytes:
    head = struct.pack(">hhi", api_key, version, corr)
    if client_id is None:
        head += struct.pack(">h", -1)
    else:
        raw = client_id.encode()
        head += struct.pack(">h", len(raw)) + raw
    if flexible:
        head += b"\x00"
    payload = head + body
    return struct.pack(">i", len(payload)) + payload


def response_frame(corr: int, body: bytes = b"", flexible: bool = False) -> bytes:
    payload = struct.pack(">i", corr) + (b"\x00" if flexible else b"") + body
    return struct.pack(">i", len(payload)) + payload


class Tracker:
    """A KafkaLayer and the streams it opens, fed events the way TCP hands bytes over
    (kwire.tcp.recorder's event types): on_event returns what that event made the layer emit."""

    def __init__(self, port_hints: frozenset = frozenset()):
        from kwire.native.kafka_connection import KafkaLayer

        self.emitted: list = []
        self.layer = KafkaLayer(self.emitted.append, port_hints=port_hints)
        self.streams: dict = {}

    def on_event(self, event) -> list:
        from kwire.tcp.recorder import StreamClosed, StreamData, StreamGap

        conn = event.conn
        stream = self.streams.get(conn.id)
        if stream is None:
            stream = self.streams[conn.id] = self.layer.open(conn)
        if isinstance(event, StreamData):
            stream.data(event.direction, event.ts_ns, event.data)
        elif isinstance(event, StreamGap):
            stream.gap(event.direction, event.ts_ns, event.size)
        elif isinstance(event, StreamClosed):
            stream.close(event.ts_ns, event.reason)
            del self.streams[conn.id]
        out = self.emitted[:]
        self.emitted.clear()
        return out

    def finish(self) -> list:
        """Every connection still open closes (as TCP's flush does)."""
        from kwire.tcp.recorder import StreamClosed

        out = []
        for stream in list(self.streams.values()):
            out += self.on_event(StreamClosed(stream.conn, 0, "end"))
        return out

    @property
    def closed_counters(self) -> dict:
        return self.layer.counters.closed


def find_request_start(buf, max_frame: int, client_id: bytes | None = None) -> int:
    """The next request start in `buf` searched at once (kwire.native.kafka_resync.scan_requests)."""
    from kwire.native.kafka_resync import scan_requests

    return scan_requests(buf, {}, max_frame, client_id, True)[0]


def finder(find):
    """A Framer's find_start from a function that returns just an offset (or -1): keeps a short tail
    while nothing is found, as kwire's own finders do."""
    from kwire.native.kafka_resync import KEEP_TAIL

    def find_start(direction, buf, scan):
        start = find(buf)
        return (start, 0) if start >= 0 else (-1, max(0, len(buf) - KEEP_TAIL))
    return find_start


def produce_request(version: int, corr: int, acks: int, transactional_id: str | None = None) -> bytes:
    """A Produce request frame (length included) whose body starts as Kafka's does: TransactionalId
    (v3+, compact from v9), Acks, TimeoutMs, and no topic."""
    import struct

    body = b""
    if version >= 9:
        tid = b"\x00" if transactional_id is None else bytes([len(transactional_id) + 1]) + transactional_id.encode()
        body += tid + struct.pack(">hi", acks, 30000) + b"\x01\x00"  # no topics, no tagged fields
    else:
        if version >= 3:
            body += (struct.pack(">h", -1) if transactional_id is None
                     else struct.pack(">h", len(transactional_id)) + transactional_id.encode())
        body += struct.pack(">hii", acks, 30000, 0)
    return request_frame(0, version, corr, body=body, flexible=version >= 9)
