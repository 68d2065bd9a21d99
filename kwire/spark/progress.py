"""A progress display for long Spark runs, on stderr, driven by Spark's status tracker.

`JobProgress(spark, files, total_bytes)` polls SparkContext.statusTracker() twice a second from a
daemon thread and shows the running stages: reading files (one task per file) and decoding
connections (one task per shuffle partition), with tasks done out of total. It draws with rich when
stderr is a terminal and stays silent otherwise; `close()` stops it.
"""

from __future__ import annotations

import sys
import threading


class JobProgress:
    def __init__(self, spark, files: int, total_bytes: int):
        self.tracker = spark.sparkContext.statusTracker()
        self.files = files
        self.total_bytes = total_bytes
        self._stop = threading.Event()
        self._thread = None
        if not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        self.progress = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=Console(file=sys.stderr), transient=True)
        self.tasks: dict[int, int] = {}
        self.progress.start()
        self._thread = threading.Thread(target=self._run, name="kwire-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            try:
                active = set(self.tracker.getActiveStageIds())
                for stage_id, task in self.tasks.items():
                    if stage_id not in active:  # finished between two looks
                        self.progress.update(task, completed=self.progress.tasks[task].total)
                for stage_id in sorted(active):
                    info = self.tracker.getStageInfo(stage_id)
                    if info is None:
                        continue
                    task = self.tasks.get(stage_id)
                    if task is None:
                        label = (f"reading {self.files} files ({self.total_bytes / 1e6:,.0f} MB)" if not self.tasks
                                 else "decoding connections")
                        task = self.tasks[stage_id] = self.progress.add_task(label, total=info.numTasks)
                    self.progress.update(task, completed=info.numCompletedTasks)
            except Exception:  # noqa: BLE001 - the display must never break the job
                return

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self.progress.stop()
