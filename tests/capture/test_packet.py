"""The hand-off windows of kwire.capture.packet.HANDOFF: every reader (pcap, pcapng, merged files) hands a
sink its records in windows of about HANDOFF bytes between two yields, whatever size it reads the file in,
every record once and in order, a record longer than a window whole."""

from __future__ import annotations

import pytest

from kwire.capture.files import open_captures
from kwire.capture.packet import HANDOFF, PacketCollector
from kwire.capture.source import CHUNK
from tests.capture import builders

T0 = 1_700_000_000_000_000_000
# Small records across several 1 MiB reads, one record longer than a window and one longer than a read.
SIZES = [90, 1514, 60] * 1500 + [HANDOFF * 2 + 7] + [200] * 700 + [CHUNK + 11] + [66] * 300


def _records(sizes: list[int]) -> list[tuple[int, bytes]]:
    return [(T0 + i * 1000, bytes([i % 251]) * size) for i, size in enumerate(sizes)]


def _pcapng(records) -> bytes:
    return builders.shb() + builders.idb(1, tsresol=9) + b"".join(
        builders.epb(0, ts, data) for ts, data in records)


def _windows(paths) -> tuple[list[list], list]:
    """The records handed over between each two yields, and all of them."""
    sink = PacketCollector()
    windows = []
    seen = 0
    for _ in open_captures(paths).feed(sink):
        windows.append(sink.packets[seen:])
        seen = len(sink.packets)
    return windows, sink.packets


def _check(windows, got, records) -> None:
    assert [(p.ts_ns, p.data) for p in got] == records  # each record once, in order
    assert len(windows) > sum(len(data) for _, data in records) // CHUNK  # more often than once a read
    for window in windows:
        # a window ends at the first record that starts past HANDOFF bytes: all but its last record fit in it
        assert sum(len(p.data) for p in window[:-1]) < HANDOFF


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_one_file_is_handed_over_in_windows(tmp_path, fmt):
    records = _records(SIZES)
    path = tmp_path / f"w.{fmt}"
    path.write_bytes(builders.pcap(records, nano=True, snaplen=CHUNK * 2) if fmt == "pcap" else _pcapng(records))
    windows, got = _windows([path])
    _check(windows, got, records)
    assert max(len(w) for w in windows) < HANDOFF // 60 + 2  # never a whole read's records at once


def test_merged_files_are_handed_over_in_windows(tmp_path):
    records = _records([90, 1514, 60] * 1200)
    paths = []
    for k in range(2):
        path = tmp_path / f"m{k}.pcap"
        path.write_bytes(builders.pcap(records[k::2], nano=True))
        paths.append(path)
    windows, got = _windows(paths)
    _check(windows, got, records)
