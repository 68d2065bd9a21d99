"""Which reduce partition each connection's flow key goes to (`kwire spark`'s shuffle).

A reduce task pairs every exchange of the connections it is given, one after the other, so a stage
lasts as long as its busiest task. By hash (crc32 of the flow key, modulo the partitions), two busy
connections land in the same partition one time in three when four share sixteen partitions, and
that task then runs twice as long as any other while the other cores idle.

So, before the map stage, a small job weighs the connections in a sample of the files (`sample`:
evenly spread, about one in SAMPLE_EVERY): each flow key's payload-carrying TCP segments
(`flow_weights`, headers only: no reassembly, no Kafka), which is what a reduce task's work grows
with. `place` then deals the heaviest flow keys out, heaviest first, each to the partition with the
least weight so far (the longest-processing-time-first rule), counting what hashing puts in each
partition; ties go to the lowest partition, which Spark starts first. The rest keep their hash. A
connection the sample did not see keeps its hash too: the placement only moves work, it never
splits a connection, so the result is the same whatever the sample saw.
"""

from __future__ import annotations

import zlib
from heapq import heapify, heapreplace

from kwire.capture.files import read_captures
from kwire.native.net_decode import DecodeCounters, decode_segment
from kwire.spark.wire import flow_bytes

SAMPLE_EVERY = 16  # files per sampled file
MAX_PLACED = 8     # flow keys placed per partition at most (the rest keep their hash)


def hashed(flow: bytes, parts: int) -> int:
    return zlib.crc32(flow) % parts


def sample(files: int) -> list[int]:
    """The indices of the files to weigh: about one in SAMPLE_EVERY, evenly spread, at least one."""
    if files <= 0:
        return []
    count = max(1, -(-files // SAMPLE_EVERY))
    return sorted({i * files // count + files // (2 * count) for i in range(count)})


def flow_weights(path: str) -> dict[bytes, int]:
    """Payload-carrying TCP segments per flow key in one file (what it held before any damage)."""
    weights: dict[bytes, int] = {}
    counters = DecodeCounters()
    try:
        for packet in read_captures([path]):
            seg = decode_segment(packet, counters)
            if seg is not None and seg.payload:
                flow = flow_bytes(seg.src_ip, seg.src_port, seg.dst_ip, seg.dst_port)
                weights[flow] = weights.get(flow, 0) + 1
    except Exception:  # noqa: BLE001 - a weight is a hint: the map task reports the file's damage
        pass
    return weights


def place(weights: dict[bytes, int], parts: int) -> dict[bytes, int]:
    """The partition of each of the heaviest flow keys (module docstring); the others are hashed."""
    heavy = sorted(weights, key=lambda flow: (-weights[flow], flow))[:MAX_PLACED * parts]
    chosen = set(heavy)
    load = [0] * parts
    for flow, weight in weights.items():
        if flow not in chosen:
            load[hashed(flow, parts)] += weight
    least = [(weight, p) for p, weight in enumerate(load)]  # a heap: the least loaded, then the lowest
    heapify(least)
    placed = {}
    for flow in heavy:
        weight, part = least[0]
        placed[flow] = part
        heapreplace(least, (weight + weights[flow], part))
    return placed


class Placement:
    """flow key -> reduce partition: placed, or hashed."""

    def __init__(self, parts: int, placed: dict[bytes, int] | None = None):
        self.parts = parts
        self.placed = placed or {}

    def __call__(self, flow: bytes) -> int:
        part = self.placed.get(flow)
        return hashed(flow, self.parts) if part is None else part
