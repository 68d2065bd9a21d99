"""kwire.spark.placement: the busiest connections of a sample of the files are dealt out to reduce
partitions by weight, the rest hashed; the weights are counted right (against scapy's reading of the
same real capture), bad files weigh nothing instead of failing, and no placement changes the result."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from scapy.layers.inet import IP, TCP
from scapy.utils import PcapReader

from kwire.spark.placement import MAX_PLACED, Placement, flow_weights, hashed, place, sample
from kwire.spark.wire import flow_bytes
from tests.spark.inprocess import run_in_process
from tests.spark.rotate import rotate
from tests.spark.test_stitching import assert_same, stats_document

CAPTURES = Path(__file__).parents[2] / "captures"


def test_sample_spreads_about_one_file_in_sixteen():
    assert sample(0) == []
    assert sample(1) == [0]
    assert sample(16) == [8]
    assert sample(17) == [4, 12]
    for files in range(1, 300):
        chosen = sample(files)
        assert chosen == sorted(set(chosen)) and 0 <= chosen[0] and chosen[-1] < files
        assert len(chosen) == -(-files // 16)


def colliding(count: int, parts: int) -> list[bytes]:
    """`count` flow keys that all hash to the last partition."""
    found, port = [], 1000
    while len(found) < count:
        flow = flow_bytes(b"\x7f\x00\x00\x01", port, b"\x7f\x00\x00\x01", 9092)
        if hashed(flow, parts) == parts - 1:
            found.append(flow)
        port += 1
    return found


def test_busy_connections_that_hash_together_are_dealt_apart_heaviest_first():
    busy = colliding(4, 16)
    weights = {flow: 1000 + i for i, flow in enumerate(busy)}
    placed = place(weights, 16)
    assert [placed[flow] for flow in reversed(busy)] == [0, 1, 2, 3]  # heaviest to the partition Spark starts first
    assert all(Placement(16, placed)(flow) == placed[flow] for flow in busy)


def test_placing_counts_what_hashing_leaves_in_each_partition():
    parts = 4
    light = [flow_bytes(b"\x0a\x00\x00\x01", port, b"\x0a\x00\x00\x02", 9092)
             for port in range(2000, 2000 + 40 * parts)]
    weights = {flow: 1 for flow in light}
    heavy = colliding(1, parts)[0]
    weights[heavy] = 500
    placed = place(weights, parts)
    assert len(placed) == MAX_PLACED * parts  # the heaviest flow keys only; the rest keep their hash
    unplaced = [flow for flow in weights if flow not in placed]
    assert unplaced and all(Placement(parts, placed)(flow) == hashed(flow, parts) for flow in unplaced)
    load = Counter()
    for flow, weight in weights.items():
        load[Placement(parts, placed)(flow)] += weight
    assert max(load.values()) - min(load.values()) <= 500  # the heavy one alone, the others even around it
    assert sum(1 for p in load if load[p] >= 500) == 1


def test_weights_are_the_payload_segments_of_each_connection():
    path = CAPTURES / "multi-broker-3.pcap"
    expected = Counter()
    with PcapReader(str(path)) as packets:
        for packet in packets:
            if IP in packet and TCP in packet and len(packet[TCP].payload) > 0:
                ip, tcp = packet[IP], packet[TCP]
                expected[flow_bytes(bytes(map(int, ip.src.split("."))), tcp.sport,
                                    bytes(map(int, ip.dst.split("."))), tcp.dport)] += 1
    weights = flow_weights(str(path))
    assert weights == dict(expected) and len(weights) > 3


def test_a_file_that_is_not_a_capture_or_is_cut_weighs_what_it_holds(tmp_path):
    junk = tmp_path / "junk.pcap"
    junk.write_bytes(b"not a capture at all" * 10)
    assert flow_weights(str(junk)) == {}
    assert flow_weights(str(tmp_path / "missing.pcap")) == {}
    whole = (CAPTURES / "multi-broker-3.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(whole[:len(whole) // 2])
    part = flow_weights(str(cut))
    assert 0 < sum(part.values()) < sum(flow_weights(str(CAPTURES / "multi-broker-3.pcap")).values())


def test_no_placement_changes_the_document(tmp_path):
    paths = rotate(CAPTURES / "multi-broker-3.pcap", tmp_path, 150)
    truth = stats_document(paths)
    weights: Counter = Counter()
    for path in paths:
        weights.update(flow_weights(str(path)))
    for placed in (place(dict(weights), 3), {flow: 0 for flow in weights}, {flow: 2 for flow in list(weights)[::2]}):
        result, _ = run_in_process(paths, parts=3, placed=placed)
        assert_same(result.aggregator.document(), truth)
