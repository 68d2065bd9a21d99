"""The feeder: one thread that turns traffic into the dashboard's state, and hands out Snapshots.

`SnapshotThread` is the hand-off both feeders share: `call(job)` may be called from any thread; it
asks the feeder thread and waits, and the feeder runs `job()` between two pieces of work and hands
the result over, so the asker never waits for a whole batch and the hot path takes no lock. Once the
thread has ended (or before it starts) `call` runs the job itself. `snapshot()` is `call` of the
dashboard's Snapshot; the exporter (kwire.cli.exporter) asks for its metric families the same way.
The thread never lets an exception out: a failure becomes a note on the screen and a line on exit;
a job that raises raises in its asker, not in the feeder.

`Feeder(source, state)` runs a packet source (kwire.live.sources: a capture replayed, or the
per-packet live capture) through the Pipeline on its thread. `start()` opens the source in the
caller's thread (so no permission, an unknown interface or a file that is not a capture raise
CaptureError before any screen is drawn) and starts the thread; `stop()` ends it. When the source
is finished (end of a replay, the sniffer died) the pipeline is finished too, so requests never
answered are counted, and `state.finished` is set. (kwire.live.ringfeed.RingFeeder is the other
feeder: Linux's ring capture in a process of its own.)
"""

from __future__ import annotations

import threading
import time
from typing import Iterable

from kwire.live.report import lost_connections, pipeline_report
from kwire.live.snapshot import Snapshot
from kwire.live.state import DashboardState
from kwire.pipeline import Pipeline

IDLE_WAIT_S = 0.05  # how long the feeder waits for packets before looking for a snapshot request
SMALL_BATCH = 64    # after a batch this small the feeder pauses, so packets are taken in batches:
BATCH_PAUSE_S = 0.005  # one wake-up per few milliseconds instead of one per packet at low rates


class SnapshotThread:
    """The feeder thread and its snapshot hand-off; subclasses give `_loop` and `_build`."""

    def __init__(self, state: DashboardState):
        self.state = state
        self.error: str | None = None
        self.snapshot_seconds = 0.0  # time the last snapshot took to build
        self._stop = threading.Event()
        self._wanted = threading.Event()
        self._served = threading.Event()
        self._asking = threading.Lock()  # one snapshot request at a time
        self._job = None      # what the asker wants run on the feeder thread
        self._result = None   # (True, value) or (False, exception)
        self._thread: threading.Thread | None = None

    def _start_thread(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kwire-feeder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._loop()
        except Exception as exc:  # noqa: BLE001 - shown on the dashboard, never a traceback
            self.error = f"internal error in the pipeline: {type(exc).__name__}: {exc}"
            self.state.finished = True
            self.state.error = self.error
        finally:
            if self._wanted.is_set():
                self._serve()

    def _loop(self) -> None:
        raise NotImplementedError

    def _build(self) -> Snapshot:
        raise NotImplementedError

    def _serve(self) -> None:
        t0 = time.perf_counter()
        try:
            self._result = (True, (self._job or self._build)())
        except Exception as exc:  # noqa: BLE001 - handed to the asker
            self._result = (False, exc)
        self.snapshot_seconds = time.perf_counter() - t0
        self._wanted.clear()
        self._served.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the feeder to end on its own (a replay reaching its end); True when it has."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def snapshot(self) -> Snapshot:
        return self.call(self._build)

    def call(self, job):
        """`job()` run on the feeder thread between two pieces of work (here, once it has ended)."""
        with self._asking:
            if self.running:
                self._job = job
                self._served.clear()
                self._wanted.set()
                while not self._served.wait(0.05):
                    if not self.running:
                        break
                if self._served.is_set():
                    done, value = self._result
                    self._result = self._job = None
                    if not done:
                        raise value
                    return value
                self._thread.join()  # type: ignore[union-attr] - it has ended or is ending
            self._wanted.clear()
            self._job = None
            return job()


class Feeder(SnapshotThread):
    def __init__(self, source, state: DashboardState, *, port_hints: Iterable[int] = (), keys=None,
                 key_wait_bytes: int = 0):
        super().__init__(state)
        self.source = source
        self.pipeline = Pipeline(port_hints=port_hints, keys=keys, key_wait_bytes=key_wait_bytes)

    def start(self) -> None:
        self.source.start()
        self._start_thread()

    def _loop(self) -> None:
        source, state, pipeline = self.source, self.state, self.pipeline
        feed = pipeline.feed
        add = state.add_exchanges
        wanted = self._wanted
        stop = self._stop
        while not stop.is_set():
            if wanted.is_set():
                self._serve()
            packets = source.take(IDLE_WAIT_S)
            if not packets:
                if source.finished:
                    break
                continue
            state.add_packets(packets)
            for packet in packets:
                exchanges = feed(packet)
                if exchanges:
                    add(exchanges)
                if wanted.is_set():
                    self._serve()
            if len(packets) < SMALL_BATCH and not source.finished:
                time.sleep(BATCH_PAUSE_S)
        if stop.is_set():
            return
        state.add_exchanges(pipeline.finish())
        state.error = getattr(source, "error", None)
        state.finished = True

    def _build(self) -> Snapshot:
        health = dict(self.source.health(), lost=lost_connections(self.pipeline))
        return self.state.snapshot(self.source.now_ns(), self.pipeline, health)

    def totals(self) -> tuple[dict, dict]:
        """(the source's health, pipeline_report) for kwire.live.report.final_document, once stopped."""
        return self.source.health(), pipeline_report(self.pipeline)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.source.stop()
