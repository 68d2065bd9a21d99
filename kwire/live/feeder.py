"""The feeder: one thread that runs a packet source through the Pipeline into the dashboard state.

`Feeder(source, state)`; `start()` opens the source in the caller's thread (so no permission,
an unknown interface or a file that is not a capture raise CaptureError before any screen is
drawn) and starts the thread; `snapshot()` may be called from any thread; `stop()` ends it.

The pipeline and the state are only touched under `state.lock`: the feeder takes it for each
batch of packets (at most sources.BATCH), `snapshot()` for the moment it copies the figures out,
so the screen never waits long and never sees a half-applied batch. When the source is finished
(end of a replay, the sniffer died) the pipeline is finished too, so requests never answered
are counted, and `state.finished` is set. The thread never lets an exception out: a failure in
the pipeline becomes a note on the screen and a line on exit.
"""

from __future__ import annotations

import threading
import time
from typing import Iterable

from kwire.live.snapshot import Snapshot
from kwire.live.state import DashboardState
from kwire.pipeline import Pipeline


class Feeder:
    def __init__(self, source, state: DashboardState, *, port_hints: Iterable[int] = ()):
        self.source = source
        self.state = state
        self.pipeline = Pipeline(port_hints=port_hints)
        self.error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.started_wall = 0.0
        self.finished_wall: float | None = None

    def start(self) -> None:
        self.source.start()
        self.started_wall = time.monotonic()
        self._thread = threading.Thread(target=self._run, name="kwire-feeder", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._loop()
        except Exception as exc:  # noqa: BLE001 - shown on the dashboard, never a traceback
            self.error = f"internal error in the pipeline: {type(exc).__name__}: {exc}"
            with self.state.lock:
                self.state.finished = True
                self.state.error = self.error

    def _loop(self) -> None:
        source, state, pipeline = self.source, self.state, self.pipeline
        feed = pipeline.feed
        lock = state.lock
        stop = self._stop
        while not stop.is_set():
            packets = source.take(0.1)
            if not packets:
                if source.finished:
                    break
                continue
            with lock:
                for packet in packets:
                    exchanges = feed(packet)
                    if exchanges:
                        state.add_exchanges(exchanges)
                state.add_packets(packets)
        if stop.is_set():
            return
        with lock:
            state.add_exchanges(pipeline.finish())
            state.finished = True
            state.error = getattr(source, "error", None)
        self.finished_wall = time.monotonic()

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
        with self.state.lock:
            return self.state.snapshot(self.source.now_ns(), self.pipeline, self.source.health())

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
        self.source.stop()
