"""Connections cut by file edges, without Spark: the map side, the shuffle's order and the reduce side
run in process (tests/spark/inprocess.py) and must give the document `kwire stats` gives over the same
files, on real captures rotated at random points, clean and damaged (segments lost, duplicated,
swapped), and on files that overlap in time; and each connection must come from exactly one file's
partition of the data source, with the rows `kwire stats` would count."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kwire.native.exchange_facts import EXCHANGE_COLUMNS, exchange_row
from kwire.capture.files import read_captures
from kwire.capture.packet import LINKTYPE_ETHERNET, Packet
from kwire.native.net_decode import decode_segment
from kwire.pipeline import RunSummary, analyze_files
from kwire.spark.results import DecodeOptions
from kwire.spark.source import last_time, owned_exchanges
from tests.spark.inprocess import run_in_process
from tests.spark.rotate import pcap_records
from tests.spark.test_stitching import assert_same, stats_document

CAPTURES = Path(__file__).parents[2] / "captures"
NAMES = ["multi-broker-3.pcap", "share-consumer.pcap", "bulk-fetch.pcap", "produce-consume-zstd.pcap",
         "consumer-protocol-lz4.pcap"]


def cut(tmp_path: Path, seed: int, damage: bool, reorder: bool = True) -> list[Path]:
    """A real capture, damaged or not, cut into 2 to 41 files at random packets."""
    rnd = random.Random(seed)
    header, records = pcap_records((CAPTURES / rnd.choice(NAMES)).read_bytes())
    out = []
    for record in records:
        x = rnd.random()
        if damage and x < 0.03:
            continue  # lost
        out.append(record)
        if damage and x > 0.97:
            out.append(record)  # captured twice
    if damage and reorder:
        for i in range(len(out) - 1):
            if rnd.random() < 0.03:
                out[i], out[i + 1] = out[i + 1], out[i]  # reordered
    cuts = sorted(rnd.sample(range(1, len(out)), rnd.randint(1, 40)))
    paths = []
    for j, (a, b) in enumerate(zip([0] + cuts, cuts + [len(out)])):
        path = tmp_path / f"part-{j:04d}.pcap"
        path.write_bytes(header + b"".join(out[a:b]))
        paths.append(path)
    return paths


@pytest.mark.parametrize("seed", range(8))
def test_clean_rotations_stitch_without_reading_again(tmp_path, seed):
    paths = cut(tmp_path, seed, damage=False)
    result, reducers = run_in_process(paths, parts=1 + seed % 4)
    assert_same(result.aggregator.document(), stats_document(paths))
    assert not any(r.dirty for r in reducers)  # every edge was clean: no packet read twice


@pytest.mark.parametrize("seed", range(100, 116))
def test_damaged_rotations_equal_stats(tmp_path, seed):
    paths = cut(tmp_path, seed, damage=True)
    result, _ = run_in_process(paths, parts=1 + seed % 4)
    assert_same(result.aggregator.document(), stats_document(paths))


@pytest.mark.parametrize("name", ["multi-broker-3.pcap", "share-consumer.pcap"])
def test_files_overlapping_in_time_equal_stats(tmp_path, name):
    header, records = pcap_records((CAPTURES / name).read_bytes())
    paths = []
    for i in range(3):  # every third packet in each file: each file spans the whole capture
        path = tmp_path / f"if-{i}.pcap"
        path.write_bytes(header + b"".join(records[i::3]))
        paths.append(path)
    result, reducers = run_in_process(paths, parts=2)
    assert all(r.overlap for r in reducers)
    assert_same(result.aggregator.document(), stats_document([CAPTURES / name]))


@pytest.mark.parametrize("seed", [0, 3, 101, 104, 107])
def test_data_source_partitions_own_each_connection_once(tmp_path, seed):
    paths = [str(p) for p in cut(tmp_path, seed, damage=seed > 100, reorder=False)]  # rotated: no overlap
    firsts = [next(iter(read_captures([p]))).ts_ns for p in paths]
    order = sorted(range(len(paths)), key=lambda i: (firsts[i], i))
    paths, firsts = [paths[i] for i in order], [firsts[i] for i in order]
    end = max(last_time(p) for p in paths)
    rows = [row for k in range(len(paths)) for t in owned_exchanges(paths, firsts, k, DecodeOptions(), end)
            for row in t.to_pylist()]
    expected = [{name: row[name] for name in EXCHANGE_COLUMNS}  # the columns (a row also says its connection)
                for row in map(exchange_row, analyze_files(paths))]
    assert sorted(map(repr, rows)) == sorted(map(repr, expected))


def _carries_payload(record: bytes) -> bool:
    """Whether a pcap record (Ethernet) is a TCP segment with payload, as kwire's decoder reads it."""
    seg = decode_segment(Packet(0, LINKTYPE_ETHERNET, record[16:], len(record) - 16))
    return seg is not None and len(seg.payload) > 0


def _retransmitted_across_edges(tmp_path: Path, name: str, edges: int, alter: bool) -> list[Path]:
    """The capture cut before `edges` data segments spread over it, each cut's next file starting
    with the segment before the cut again (captured again, its time that of the packet after it):
    a retransmission across every edge. `alter`: the copy's last byte differs (a conflicting copy)."""
    header, records = pcap_records((CAPTURES / name).read_bytes())
    data = [i for i, r in enumerate(records[:-1]) if i > 0 and _carries_payload(r)]
    cuts = sorted({data[len(data) * (j + 1) // (edges + 1)] + 1 for j in range(edges)})
    paths, start = [], 0
    for j, end in enumerate(cuts + [len(records)]):
        body = records[start:end]
        if j:
            again = bytearray(records[start - 1])
            again[:8] = records[start][:8]  # the time of the packet that follows it
            if alter:
                again[-1] ^= 0xFF
            body = [bytes(again)] + body
        path = tmp_path / f"part-{j:04d}.pcap"
        path.write_bytes(header + b"".join(body))
        paths.append(path)
        start = end
    return paths


@pytest.mark.parametrize("alter", [False, True], ids=["same", "conflicting"])
@pytest.mark.parametrize("name", ["produce-consume-zstd.pcap", "bulk-fetch.pcap", "consumer-protocol-lz4.pcap"])
def test_a_segment_retransmitted_across_an_edge_is_stitched_not_read_again(tmp_path, name, alter):
    """A long connection crosses many files; one retransmission at an edge once made the rest of the
    connection be read again from its packets, by one task. The next piece now drops the bytes TCP
    already had, counted as TCP counts them (retransmitted, conflicting), and the result is exact."""
    paths = _retransmitted_across_edges(tmp_path, name, 12, alter)
    result, reducers = run_in_process(paths, parts=2)
    assert_same(result.aggregator.document(), stats_document(paths))
    assert not any(r.dirty for r in reducers)
    summary = RunSummary()
    for _ in analyze_files([str(p) for p in paths], summary=summary):
        pass
    for key in ("retransmitted_bytes", "conflicting_bytes", "gaps", "gap_bytes", "bytes"):
        assert result.tcp.get(key, 0) == summary.tcp.get(key, 0), key
    assert summary.tcp["retransmitted_bytes"] > 0
    assert (summary.tcp["conflicting_bytes"] > 0) == alter
