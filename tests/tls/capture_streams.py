"""Run a capture's TCP through a StreamFactory, for the real-capture tests.

The TCP layer still speaks events (StreamData / StreamGap / StreamClosed) while the lead moves it to
the contract of kwire.tcp.stream; this adapter turns events into consumer calls: one consumer per
connection from the factory, data() / gap() / close() in capture order, and the need data() returns
written to Connection.demand (with Connection.pieces set) so reassembly holds segments back and
hands them over as tuples, as the contract allows.
"""

from __future__ import annotations

from pathlib import Path

from kwire.capture.files import read_captures
from kwire.net.decode import decode_segment
from kwire.tcp.events import StreamClosed, StreamData, StreamGap
from kwire.tcp.flows import FlowTable


def run_streams(paths, factory, *, hold: bool = True, mangle=None) -> dict:
    """Feed every segment of the captures; returns {connection id: consumer}. `mangle(segments)`
    may drop or change segments (a list of Segment) before TCP sees them."""
    table = FlowTable()
    consumers: dict[int, object] = {}
    segments = []
    for packet in read_captures([Path(p) for p in paths]):
        seg = decode_segment(packet)
        if seg is not None:
            segments.append(seg)
    if mangle is not None:
        segments = mangle(segments)
    last = 0

    def handle(events) -> None:
        for event in events:
            conn = event.conn
            consumer = consumers.get(conn.id)
            if consumer is None:
                consumer = consumers[conn.id] = factory(conn)
                conn.pieces = hold
            if type(event) is StreamData:
                need = consumer.data(event.direction, event.ts_ns, event.data)
                if hold:
                    conn.demand[event.direction] = need
            elif type(event) is StreamGap:
                consumer.gap(event.direction, event.ts_ns, event.size)
            elif type(event) is StreamClosed:
                consumer.close(event.ts_ns, event.reason)

    for seg in segments:
        last = seg.ts_ns
        handle(table.feed(seg))
    handle(table.flush(last))
    return consumers
