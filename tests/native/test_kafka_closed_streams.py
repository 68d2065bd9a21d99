"""A closed connection's Kafka reader is freed with it, by reference counting alone: kwire lets the cycle
collector wait (kwire/gc_policy.py), so a reader kept alive by cycles of its own bound methods stayed for the
run (41,000 closed ones of 100,000 brokers, 140 MB: issue 49)."""

from __future__ import annotations

import gc

from kwire.native.kafka_connection import KafkaLayer, KafkaStream
from kwire.tcp.stream import Connection
from tests.kafka.frames import request_frame, response_frame


def _streams() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is KafkaStream)


def test_a_closed_stream_needs_no_collector():
    gc.collect()
    before = _streams()
    gc.disable()
    try:
        out: list = []
        layer = KafkaLayer(out.append)
        for i in range(200):
            conn = Connection(i + 1, (b"\x7f\x00\x00\x01", 40000 + i), (b"\x7f\x00\x00\x01", 9092), 0, 0)
            stream = layer.open(conn)
            stream.data(0, 1, request_frame(18, 3, 7, "c", b"\x00\x00\x00", flexible=True))
            stream.data(1, 2, response_frame(7, b"\x00\x00\x00\x00"))
            stream.close(3, "fin")
            stream.data(0, 4, b"late bytes")  # after its close: dropped, not a traceback
        del stream, conn
        assert len(out) == 200 and not layer.streams
        assert _streams() == before
    finally:
        gc.enable()
