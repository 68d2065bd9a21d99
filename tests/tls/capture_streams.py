"""Run a capture's TCP through a StreamFactory, for the real-capture tests.

One consumer per connection from the factory, fed by kwire.tcp's FlowTable through the stream
contract (data() / gap() / close() in capture order). With hold=False every data() answer is taken
as 0, so TCP never holds segments back and hands over bytes only (with hold, it hands over tuples of
pieces when the consumer asks for more, as the contract allows).
"""

from __future__ import annotations

from pathlib import Path

from kwire.capture.files import read_captures
from kwire.native.net_decode import decode_segment
from kwire.native.tcp_flows import FlowTable


class _NoHold:
    """A consumer whose data() answers are hidden from TCP (always 0)."""

    def __init__(self, consumer):
        self.consumer = consumer
        self.gap = consumer.gap
        self.close = consumer.close

    def data(self, direction, ts_ns, data) -> int:
        self.consumer.data(direction, ts_ns, data)
        return 0


def run_streams(paths, factory, *, hold: bool = True, mangle=None) -> dict:
    """Feed every segment of the captures; returns {connection id: consumer}. `mangle(segments)`
    may drop or change segments (a list of Segment) before TCP sees them."""
    consumers: dict[int, object] = {}

    def open_stream(conn):
        consumer = consumers[conn.id] = factory(conn)
        return consumer if hold else _NoHold(consumer)

    table = FlowTable(open_stream)
    segments = []
    for packet in read_captures([Path(p) for p in paths]):
        seg = decode_segment(packet)
        if seg is not None:
            segments.append(seg)
    if mangle is not None:
        segments = mangle(segments)
    last = 0
    for seg in segments:
        last = seg.ts_ns
        table.feed(seg)
    table.flush(last)
    return consumers
