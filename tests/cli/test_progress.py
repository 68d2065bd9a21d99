"""kwire.cli.progress: a long read is never a silent one (issue 49: 32 KB of zstd expanding to gigabytes of empty
records ran for minutes with no word). The clock is the test's; the readers' counts are real ones."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from kwire.capture.files import open_captures
from kwire.capture.packet import RecordSink
from kwire.capture.stats import CaptureStats
from kwire.cli import progress
from kwire.cli.progress import EXPANSION_FROM, EXPANSION_NOTED, LINES_AFTER, LINES_EVERY, LINES_PAST, ReadProgress
from tests.hostile3.compressed import FORMATS, empty_records


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def reporter():
    clock, lines = Clock(), []
    return ReadProgress(clock=clock, echo=lines.append), clock, lines


def test_nothing_is_said_of_a_short_or_small_read():
    p, clock, lines = reporter()
    stats = CaptureStats()
    entry = stats.reading("a.pcap")
    stats.note_read(entry, LINES_PAST, LINES_PAST)  # a plain file of 64 MiB, read for long: not past the bound
    clock.now += 1000
    p.update(stats)
    p, clock, lines = reporter()
    stats.note_read(entry, LINES_PAST + 1, LINES_PAST + 1)  # past it, but not for long enough
    clock.now += LINES_AFTER - 0.1
    p.update(stats)
    assert lines == []


def test_a_long_read_says_where_it_is_every_few_seconds():
    p, clock, lines = reporter()
    stats = CaptureStats()
    entry = stats.reading("big.pcap")
    stats.packets = 1_234_567
    stats.note_read(entry, 100 << 20, 100 << 20)
    for t in (1, LINES_AFTER, LINES_AFTER + 1, LINES_AFTER + LINES_EVERY - 0.5, LINES_AFTER + LINES_EVERY):
        clock.now = 100 + t
        p.update(stats)
    assert lines == ["kwire: reading: 1,234,567 records, 100.0 MiB (uncompressed) from 100.0 MiB of files, 5 s",
                     "kwire: reading: 1,234,567 records, 100.0 MiB (uncompressed) from 100.0 MiB of files, 15 s"]


def test_a_file_that_expands_past_the_ratio_is_said_once_with_its_figure():
    p, clock, lines = reporter()
    stats = CaptureStats()
    plain, bomb = stats.reading("plain.pcap"), stats.reading("bomb.pcap.zst")
    stats.note_read(plain, 20 << 20, 20 << 20)
    stats.note_read(bomb, EXPANSION_FROM // 2, 1000)  # not yet judged: too few bytes
    p.update(stats)
    assert lines == []
    stats.note_read(bomb, 10 << 20, 8192)
    p.update(stats)
    stats.note_read(bomb, 20 << 20, 8192)
    p.update(stats)
    assert lines == [f"kwire: bomb.pcap.zst expands more than {EXPANSION_NOTED}x: 10.0 MiB (uncompressed) from "
                     "8.0 KiB so far (1,280x): no capture of real traffic does; it is read to its end"]
    clock.now += LINES_AFTER  # and once it is said, the read's progress is said too, though under LINES_PAST
    p.update(stats)
    assert lines[1:] == ["kwire: reading: 0 records, 40.0 MiB (uncompressed) from 20.0 MiB of files, 5 s"]


class Null(RecordSink):
    def record(self, ts, linktype, buf, start, stop, wire_len):
        return False


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("container", ["pcap", "pcapng"])
def test_the_readers_count_what_every_format_expands_from(fmt, container):
    packed = empty_records(fmt, 50_000, container)
    stats = CaptureStats()
    for _ in open_captures([io.BytesIO(packed)], stats).feed(Null()):
        pass
    size = 24 + 16 * 50_000 if container == "pcap" else 48 + 32 * 50_000
    assert stats.packets == 50_000
    assert stats.read == [["<stream>", size, len(packed)]]
    assert (stats.read_bytes, stats.file_bytes) == (size, len(packed))


def test_kwire_says_how_far_a_bomb_expands(tmp_path):
    """A small zstd bomb (12 MiB of empty records from 300 bytes): one line with the figure, exit 0."""
    path = tmp_path / "bomb.pcap.zst"
    path.write_bytes(empty_records("zstd", (12 << 20) // 16))
    got = subprocess.run([sys.executable, "-m", "kwire", "stats", str(path)], capture_output=True, timeout=600)
    assert got.returncode == 0
    noted = [line for line in got.stderr.decode().splitlines() if "expands more than" in line]
    assert len(noted) == 1 and noted[0].startswith(f"kwire: {path} expands more than 100x: "), noted


def test_a_terminal_bar_counts_file_bytes():
    """The bar's total is the files' size: it follows the compressed bytes read, not what they expand to."""
    stats = CaptureStats()
    stats.note_read(stats.reading("x"), 1 << 30, 5 << 20)
    seen = []

    class Bar:
        def update(self, s):
            seen.append(s.file_bytes)

        def say(self, line):
            seen.append(line)

    ReadProgress(Bar(), clock=Clock()).update(stats)
    assert seen[0] == 5 << 20 and "expands more than" in seen[1]
    assert progress.BAR_FROM == 32 << 20
