"""What an open connection costs: the flow table holds up to 65,536 of them (kwire.native.tcp_flows.MAX_CONNECTIONS),
so 100,000 brokers that never close (tests/hostile3/changes.py, many_brokers) meet the 500 MB bound only if each
costs a few kilobytes. A connection read in step from its handshake keeps no resync state it has not needed:
one find_start callback for both framers (it was a partial each, with its args tuple and kwargs dict), no scan
dict, no dicts for reused correlation ids or early responses, and its TLS sniffer keeps nothing of its
sniffing once decided (issue 49: 504 MB with -j 0 before, 436 MB after)."""

from __future__ import annotations

import gc
import tracemalloc

from kwire.capture.files import read_captures
from kwire.pipeline import Pipeline
from tests.hostile3.changes import many_brokers

# bytes traced per open connection after one exchange each: 5,410 before the change on the pure build, 4,724
# after (4,772 compiled); the bound leaves room for allocator noise, not for another kilobyte
PER_CONNECTION = 5_000


def _opened(path) -> Pipeline:
    pipeline = Pipeline()
    for packet in read_captures([str(path)]):
        pipeline.feed(packet)
    return pipeline


def test_an_open_connection_costs_a_few_kilobytes(tmp_path):
    path = tmp_path / "brokers.pcap.gz"
    many_brokers(path, 2)  # 2,000 connections, one ApiVersions exchange each, none closed
    packets = list(read_captures([str(path)]))
    gc.collect()
    pipeline = Pipeline()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for packet in packets:
            pipeline.feed(packet)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    open_flows = len(pipeline.flows._flows)
    assert open_flows == 2_000
    assert grown / open_flows < PER_CONNECTION, grown / open_flows


def test_a_connection_read_in_step_holds_no_resync_state(tmp_path):
    path = tmp_path / "brokers.pcap.gz"
    many_brokers(path, 1)
    pipeline = _opened(path)
    streams = list(pipeline.kafka.streams.values())
    assert len(streams) == 1_000
    for stream in streams:
        first, second = stream.framers
        assert first.find_start == second.find_start and (first.direction, second.direction) == (0, 1)
        assert first.scan is None and second.scan is None
        assert stream.pairing.orphans is None and stream.pairing.waiting is None
    sniffers = [h.stream for flow in pipeline.flows._flows.values() for h in flow.halves]
    assert all(s.target is not None and s.seen is None and s.started is None for s in sniffers)
