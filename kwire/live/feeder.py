"""The feeder: one thread that runs a packet source through the Pipeline into the dashboard state.

`Feeder(source, state)`; `start()` opens the source in the caller's thread (so no permission,
an unknown interface or a file that is not a capture raise CaptureError before any screen is
drawn) and starts the thread; `snapshot()` may be called from any thread; `stop()` ends it.

Only the feeder thread touches the pipeline and the state while it runs. `snapshot()` asks it for
a Snapshot and waits: the feeder builds one between two packets and hands it over, so the screen
never waits for a whole batch and the hot path takes no lock. Once the thread has ended (or before
it starts) `snapshot()` builds the Snapshot itself. When the source is finished (end of a replay,
the sniffer died) the pipeline is finished too, so requests never answered are counted, and
`state.finished` is set. The thread never lets an exception out: a failure in the pipeline becomes
a note on the screen and a line on exit.
"""

from __future__ import annotations

import threading
import time
from typing import Iterable

from kwire.live.snapshot import Snapshot
from kwire.live.state import DashboardState
from kwire.pipeline import Pipeline

IDLE_WAIT_S = 0.05  # how long the feeder waits for packets before looking for a snapshot request
SMALL_BATCH = 64    # after a batch this small the feeder pauses, so packets are taken in batches:
BATCH_PAUSE_S = 0.005  # one wake-up per few milliseconds instead of one per packet at low rates


class Feeder:
    def __init__(self, source, state: DashboardState, *, port_hints: Iterable[int] = (), keys=None,
                 key_wait_bytes: int = 0):
        self.source = source
        self.state = state
        self.pipeline = Pipeline(port_hints=port_hints, keys=keys, key_wait_bytes=key_wait_bytes)
        self.error: str | None = None
        self.snapshot_seconds = 0.0  # time the last snapshot took to build
        self._stop = threading.Event()
        self._wanted = threading.Event()
        self._served = threading.Event()
        self._asking = threading.Lock()  # one snapshot request at a time
        self._snapshot: Snapshot | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.source.start()
        self._thread = threading.Thread(target=self._run, name="kwire-feeder", daemon=True)
        self._thread.start()

    # -- the feeder thread

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

    def _serve(self) -> None:
        self._snapshot = self._build()
        self._wanted.clear()
        self._served.set()

    def _build(self) -> Snapshot:
        t0 = time.perf_counter()
        snap = self.state.snapshot(self.source.now_ns(), self.pipeline, self.source.health())
        self.snapshot_seconds = time.perf_counter() - t0
        return snap

    # -- any thread

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
        with self._asking:
            if self.running:
                self._served.clear()
                self._wanted.set()
                while not self._served.wait(0.05):
                    if not self.running:
                        break
                if self._served.is_set():
                    snap = self._snapshot
                    self._snapshot = None
                    assert snap is not None
                    return snap
                self._thread.join()  # type: ignore[union-attr] - it has ended or is ending
            self._wanted.clear()
            return self._build()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.source.stop()
