"""What a run over capture files says on stderr while it reads, so that no long read is a silent one.

`read_progress(paths)` gives the run's `ReadProgress`, whose `update(stats)` the pipeline calls after each
window of records (kwire.pipeline.analyze_files), with the readers' counts (kwire.capture.stats.CaptureStats):
- on a terminal, for files of 32 MiB and more, a progress bar of the file bytes read (compressed bytes for a
  compressed file, so the bar ends at the files' size whatever they expand to);
- once per file, when a compressed file's bytes pass EXPANSION_NOTED times the file bytes they came from (and
  EXPANSION_FROM bytes): a line saying how far it expands, so that a run of gigabytes of nothing from a small file
  is explained (docs/bounds.md: the speed at which kwire reads them);
- otherwise (no bar), once the run has read for LINES_AFTER seconds and more than LINES_PAST bytes (uncompressed),
  or a file was said to expand, a line every LINES_EVERY seconds: records, bytes read, from how many file bytes,
  and for how long.
The clock and the output are given to the object (tests drive both).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable

import click

from kwire.counts import count

LINES_AFTER = 5.0         # seconds of reading before the first progress line
LINES_EVERY = 10.0        # seconds between progress lines
LINES_PAST = 64 << 20     # uncompressed bytes a run reads before progress lines (no test capture is as big)
EXPANSION_NOTED = 100     # times: real traffic's packets compress 3 to 10 times, repeated payloads some tens
EXPANSION_FROM = 8 << 20  # uncompressed bytes of a file before its expansion is judged
BAR_FROM = 32 << 20       # file bytes from which a terminal gets a bar


class ByteProgress:
    """A progress bar on stderr driven by the file bytes the readers have consumed."""

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

        self.progress = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                                 TransferSpeedColumn(), TimeRemainingColumn(),
                                 console=Console(file=sys.stderr), transient=True)
        self.task = self.progress.add_task("reading", total=total)
        self.progress.start()

    def update(self, stats) -> None:
        self.progress.update(self.task, completed=stats.file_bytes)

    def say(self, line: str) -> None:
        self.progress.console.print(line, markup=False, highlight=False)

    def close(self) -> None:
        self.progress.stop()


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1024
    return ""


class ReadProgress:
    """The run's words on stderr while it reads (see the module docstring)."""

    def __init__(self, bar: ByteProgress | None = None, clock: Callable[[], float] = time.monotonic,
                 echo: Callable[[str], None] | None = None):
        self.bar = bar
        self.clock = clock
        self.echo = echo or (bar.say if bar is not None else lambda line: click.echo(line, err=True))
        self.started = clock()
        self.next_line = self.started + LINES_AFTER
        self.noted: set[int] = set()  # the files (by their place in stats.read) said to expand
        self.next_check = EXPANSION_FROM  # bytes read at which the files' expansions are looked at next

    def update(self, stats) -> None:
        if self.bar is not None:
            self.bar.update(stats)
        read = stats.read_bytes
        if read <= EXPANSION_FROM:
            return
        if read >= self.next_check:
            self.next_check = read + (1 << 20)
            self._note_expansions(stats)
        now = self.clock()
        if self.bar is None and now >= self.next_line and (read > LINES_PAST or self.noted):
            self.next_line = now + LINES_EVERY
            self.echo(f"kwire: reading: {count(stats.packets, 'record')}, {_size(read)} (uncompressed) from "
                      f"{_size(stats.file_bytes)} of files, {now - self.started:.0f} s")

    def _note_expansions(self, stats) -> None:
        for i, (name, uncompressed, compressed) in enumerate(stats.read):
            if i not in self.noted and uncompressed > EXPANSION_FROM and uncompressed > EXPANSION_NOTED * compressed:
                self.noted.add(i)
                self.echo(f"kwire: {name} expands more than {EXPANSION_NOTED}x: {_size(uncompressed)} "
                          f"(uncompressed) from {_size(compressed)} so far ({uncompressed // max(compressed, 1):,}x): "
                          "no capture of real traffic does; it is read to its end")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def read_progress(paths: list[str]) -> ReadProgress:
    """The run's ReadProgress: with a bar when stderr is a terminal and the files are big enough to need one."""
    return ReadProgress(_bar(paths))


def _bar(paths: list[str]) -> ByteProgress | None:
    if not sys.stderr.isatty():
        return None
    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p)
        except OSError:
            return None
    if total < BAR_FROM:
        return None
    return ByteProgress(total)
