"""A progress bar on stderr for long runs over capture files: only when stderr is a terminal and the
files are large enough for it to matter."""

from __future__ import annotations

import os
import sys


class ByteProgress:
    """A progress bar on stderr driven by the bytes the readers have consumed."""

    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

        self.progress = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                                 TransferSpeedColumn(), TimeRemainingColumn(),
                                 console=Console(file=sys.stderr), transient=True)
        self.task = self.progress.add_task("reading", total=total)
        self.progress.start()

    def update(self, stats) -> None:
        self.progress.update(self.task, completed=stats.captured_bytes + 16 * stats.packets)

    def close(self) -> None:
        self.progress.stop()


def progress_bar(paths: list[str]) -> ByteProgress | None:
    if not sys.stderr.isatty():
        return None
    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p)
        except OSError:
            return None
    if total < 32 << 20:
        return None
    return ByteProgress(total)
