"""The live dashboard's feed on Linux: the ring capture in a process of its own, the figures here.

`RingFeeder(iface, expression, state, ...)` offers what kwire.live.feeder.Feeder offers (start,
snapshot, stop, wait, running, error, totals). `start()` opens the kwire.capture.ring.RingCapture
and the -w file in this process, so no permission, an unknown interface, a bad filter or a file that
cannot be created fail with one CaptureError before any screen is drawn; then it forks the capture
process (kwire.live.sniffer) and starts its thread. The thread decodes the exchanges each batch
carries (kwire.native.exchange_build.build_from_parts), enriches them in the order they completed
(kwire.native.exchange_enrich: the order the Pipeline itself would enrich them in) and adds them to the
DashboardState; it keeps the capture's last report for the snapshot (packets, drops, TCP and Kafka
counters, requests in flight, connections that lost bytes).

Why two processes: capture, TCP and pairing cost a few microseconds per packet, decoding and
figures some tens per exchange; in one process, with Python's one lock, the two compete for one
core, and at tens of thousands of packets a second one core is not enough. In two, the capture
process keeps up with the wire on its own core, and the dashboard's process does the rest on the
other, without ever holding the capture up (kwire.live.sniffer drops and counts exchanges when
this side falls a whole channel behind; the ring itself absorbs seconds of traffic).
"""

from __future__ import annotations

import time

from kwire.capture.pcapwrite import PcapWriter
from kwire.capture.ring import RING_BYTES, RingCapture
from kwire.native.exchange_enrich import Enricher
from kwire.native.exchange_build import build_from_parts
from kwire.native.exchange_wire import unpack
from kwire.live.feeder import IDLE_WAIT_S, SnapshotThread
from kwire.live.report import ReportedPipeline
from kwire.live.snapshot import Snapshot
from kwire.live.sniffer import fork_sniffer
from kwire.live.state import DashboardState

STOP_WAIT_S = 30.0  # how long stop() waits for the capture process's last batch


class RingFeeder(SnapshotThread):
    kind = "live"

    def __init__(self, iface: str | None, expression: str, state: DashboardState, *, port_hints=(), keys=None,
                 key_wait_bytes: int = 0, write: str | None = None, file_size: int | None = None,
                 ring_bytes: int = RING_BYTES, ring=None):
        super().__init__(state)
        # `ring`: anything with RingCapture's interface (tests give one that replays a capture file)
        self.ring = ring if ring is not None else RingCapture(iface, expression, ring_bytes=ring_bytes)
        self.where = self.ring.where
        self.expression = expression
        self.write = write
        self.file_size = file_size
        self.options = {"port_hints": tuple(port_hints), "keys": keys, "key_wait_bytes": key_wait_bytes}
        self.enricher = Enricher()
        self.report: dict = {}
        self.process = None
        self.lag_max_s = 0.0  # the longest a batch waited between the capture process and the figures

    def start(self) -> None:
        self.ring.open()
        writer = None
        try:
            if self.write is not None:
                writer = PcapWriter(self.write, self.ring.linktype, self.file_size)
            self.process = fork_sniffer(self.ring, writer=writer, **self.options)
        except BaseException:
            self.ring.close()
            if writer is not None:
                writer.close()
            raise
        self._start_thread()

    # -- the feeder thread

    def _loop(self) -> None:
        receive = self.process.receiver.receive
        wanted = self._wanted
        while True:
            if wanted.is_set():
                self._serve()
            try:
                message = receive(IDLE_WAIT_S)
            except EOFError:
                self.error = self.report.get("error") or "the capture process ended without a word"
                break
            if message is None:
                continue
            kind, parts, report = message
            self._take(parts, report)
            if kind == "end":
                self.error = report.get("error")
                break
        self.state.error = self.error
        self.state.finished = True

    def _take(self, parts: bytes, report: dict) -> None:
        if parts:
            enrich = self.enricher.enrich
            exchanges = []
            for item in unpack(parts):
                ex = build_from_parts(item)
                enrich(ex)
                exchanges.append(ex)
            self.state.add_exchanges(exchanges)
        self.report = report
        self.lag_max_s = max(self.lag_max_s, time.time() - report.get("sent_at", time.time()))
        self.state.count_packets(report.get("seconds", ()), report.get("first_packet_ns"),
                                 report.get("last_packet_ns"))

    def _build(self) -> Snapshot:
        return self.state.snapshot(time.time_ns(), ReportedPipeline(self.report), self.health())

    # -- any thread

    def health(self) -> dict:
        r = self.report
        return {"packets": r.get("packets", 0), "bytes": r.get("bytes", 0), "kernel_drops": r.get("kernel_drops", 0),
                "queue_drops": r.get("queue_drops", 0), "queue_holds": "exchanges", "queue": 0,
                "truncated": r.get("truncated", 0), "lost": r.get("lost", []), "error": r.get("error"),
                "figures_lag_max_s": round(self.lag_max_s, 3)}

    def totals(self) -> tuple[dict, dict]:
        """(health, the capture's last report) for kwire.live.report.final_document, once stopped."""
        return self.health(), dict(self.report)

    @property
    def files(self) -> list[str]:
        return list(self.report.get("files", []))

    def stop(self) -> None:
        """Ask the capture process to finish, take its last batch, reap it."""
        self._stop.set()
        if self.process is None:
            return
        self.process.stop()
        if self._thread is not None:
            self._thread.join(STOP_WAIT_S)
        self.process.wait(0.0 if self._thread is not None and self._thread.is_alive() else 5.0)
        if self._thread is not None:
            self._thread.join(5.0)
        self.process.receiver.close()
