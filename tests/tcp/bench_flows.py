"""Throughput of FlowTable on synthetic captures (not a test: run `python -m tests.tcp.bench_flows`).

Scenarios, each ~1M segments:
- inorder: data segments exactly in order, no ACKs (the pure fast path);
- bulk: 100 connections, each direction's data in order, one pure ACK every two data segments;
- lossy: bulk with 1% of data segments held back and released a few segments later (reordered)
  and 0.1% missing from the capture (the receiver got and acked them: gaps by ACK).
"""

from __future__ import annotations

import random
import sys
import time

from kwire.net.segment import ACK, SYN, Segment
from kwire.native.tcp_flows import FlowTable
from kwire.tcp.recorder import StreamRecorder

MSS = 1448


def make_bulk(n_segments: int, n_conns: int = 100, acks: bool = True, seed: int = 1,
              reorder: float = 0.0, drop: float = 0.0) -> list[Segment]:
    rng = random.Random(seed)
    payload = bytes(rng.randrange(256) for _ in range(MSS))
    out: list[Segment] = []
    conns = []
    for i in range(n_conns):
        cip = bytes([10, 0, i >> 8 & 255, i & 255])
        sip = b"\x0a\x00\xff\x01"
        isn = rng.randrange(1 << 32)
        sisn = rng.randrange(1 << 32)
        out.append(Segment(0, cip, 40000 + i, sip, 9092, isn, 0, SYN, b"", False))
        out.append(Segment(0, sip, 9092, cip, 40000 + i, sisn, (isn + 1) & 0xFFFFFFFF, SYN | ACK,
                           b"", False))
        conns.append([cip, 40000 + i, sip, 9092, (isn + 1) & 0xFFFFFFFF, (sisn + 1) & 0xFFFFFFFF])
    ts = 1
    k = 0
    pending: list[Segment] = []
    while len(out) < n_segments:
        c = conns[k % n_conns]
        k += 1
        for _ in range(2):
            ts += 1000
            seg = Segment(ts, c[2], c[3], c[0], c[1], c[5], c[4], ACK, payload, False)
            c[5] = (c[5] + MSS) & 0xFFFFFFFF
            r = rng.random()
            if r < drop:
                continue
            if r < drop + reorder:
                pending.append(seg)
                continue
            out.append(seg)
            if pending and rng.random() < 0.3:
                out.append(pending.pop(0))
        if acks:  # the receiver acks what it has, but never past a segment still held back
            ts += 1000
            held = [p.seq for p in pending if p.dst_port == c[1]]
            ack = held[0] if held else c[5]
            out.append(Segment(ts, c[0], c[1], c[2], c[3], c[4], ack, ACK, b"", False))
    out.extend(pending)
    return out


def measure(name: str, segments: list[Segment], repeat: int = 3) -> None:
    """Best of `repeat` runs, in CPU time (the machine may be shared) and wall time."""
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        recorder = StreamRecorder()
        table = FlowTable(recorder, max_buffer_per_direction=1 << 22)
        feed = table.feed
        w0 = time.perf_counter()
        c0 = time.process_time()
        for seg in segments:
            feed(seg)
        table.flush(segments[-1].ts_ns)
        events = len(recorder.events)
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - w0)
    c = table.counters()
    n = len(segments)
    print(f"{name:8s} {n:>9,d} segments: {n / best_cpu:>10,.0f} seg/s CPU, {n / best_wall:>10,.0f} seg/s wall"
          f"  ({events:,d} events, {c['gaps']} gaps, {c['out_of_order_segments']} out of order)")


def main(n: int = 1_000_000) -> None:
    measure("inorder", make_bulk(n, n_conns=1, acks=False))
    measure("bulk", make_bulk(n))
    measure("lossy", make_bulk(n, reorder=0.01, drop=0.001))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
