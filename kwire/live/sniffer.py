"""The capture process of `kwire live` on Linux: ring, TCP and Kafka pairing, apart from the dashboard.

`fork_sniffer(ring, ...)` forks a process that owns an open kwire.capture.ring.RingCapture (and the
kwire.capture.pcapwrite.PcapWriter of -w). It runs the ring's blocks through a Pipeline whose every
RawExchange is offloaded (nothing is decoded here: decoding and figures are the dashboard process's
work, kwire.live.ringfeed), and sends over a kwire.live.channel pipe:

- ("batch", parts, report): the exchanges completed since the last batch, their
  kwire.native.exchange_build.ExchangeParts in completion order packed as one bytes object (kwire.native.exchange_wire; b""
  when there are none), and the capture's report so far (REPORT);
- ("end", parts, report): the same, last: after the dashboard asked it to stop (a byte, or the end
  of file, on the stop pipe) and the blocks the kernel had handed over by then were read, or after
  the capture failed (report["error"]), the pipeline is finished, so requests still waiting are
  reported unanswered.

A batch goes out every BATCH_S seconds, or as soon as BATCH exchanges wait. The capture never waits
for the dashboard: when the dashboard falls more than the channel's backlog behind, a batch's
exchanges are dropped and counted (report "queue_drops", in exchanges); reports are always sent.
Packets are counted per second of capture time by ring block (a block's packets in the second of
its last one), for the dashboard's packet rate.
"""

from __future__ import annotations

import os
import select
import signal
import time

from kwire.capture.ring import NS, RingCapture
from kwire.errors import CaptureError
from kwire.live.channel import Sender, channel
from kwire.live.report import pipeline_report
from kwire.native.exchange_wire import PartsWriter
from kwire.pipeline import Pipeline

BATCH = 1024       # exchanges per batch at most
BATCH_S = 0.05     # a batch (or at least a report) goes out this often
REPORT_S = 0.25    # the pipeline's counters (a walk over every connection) are read this often


def _offload_all(raw) -> bool:
    return True


class Sniffer:
    """The capture process's loop (see the module docstring); `run()` returns when it is over."""

    def __init__(self, ring: RingCapture, sender: Sender, stop_fd: int, *, port_hints=(), keys=None,
                 key_wait_bytes: int = 0, writer=None):
        self.ring = ring
        self.sender = sender
        self.stop_fd = stop_fd
        self.writer = writer
        self.pipeline = Pipeline(port_hints=port_hints, offload=_offload_all, keys=keys,
                                 key_wait_bytes=key_wait_bytes)
        self.queue_drops = 0
        self.seconds: dict[int, int] = {}  # capture second -> packets, since the last report
        self.first_packet_ns: int | None = None
        self.last_packet_ns: int | None = None
        self.error: str | None = None
        self._pipeline_report: dict = {}
        self._next_pipeline_report = 0.0

    def run(self) -> None:
        pipeline, ring, take = self.pipeline, self.ring, self.pipeline.take
        batch = PartsWriter()
        blocks = ring.stats.blocks
        next_send = time.monotonic() + BATCH_S
        drain = -1  # once asked to stop: blocks still to read of those the kernel has handed over
        try:
            for _ in ring.feed(pipeline.records, self.writer):
                for raw in take():
                    batch.add(raw)
                if ring.stats.blocks != blocks:
                    blocks = ring.stats.blocks
                    self._count_block()
                if drain >= 0:
                    if drain == 0 or not ring.ready():
                        break
                    drain -= 1
                now = time.monotonic()
                if now >= next_send or batch.rows >= BATCH:
                    if drain < 0 and self._stop_asked():
                        drain = ring.blocks  # what arrived before the stop is counted, at most a ring
                        if not ring.ready():
                            break
                    self._send("batch", batch, now)
                    batch = PartsWriter()
                    next_send = now + BATCH_S
        except CaptureError as exc:
            self.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - reported on the dashboard, never a traceback
            self.error = f"internal error in the capture: {type(exc).__name__}: {exc}"
        for raw in pipeline.finish():
            batch.add(raw)
        if self.writer is not None:
            try:
                self.writer.close()
            except CaptureError as exc:
                self.error = self.error or str(exc)
        self._send("end", batch, 0.0)

    def _stop_asked(self) -> bool:
        return bool(select.select([self.stop_fd], [], [], 0)[0])

    def _count_block(self) -> None:
        stats = self.ring.stats
        if not stats.block_packets:
            return
        ts = stats.block_ts_ns
        if self.first_packet_ns is None:
            self.first_packet_ns = ts
        self.last_packet_ns = ts
        second = ts // NS
        self.seconds[second] = self.seconds.get(second, 0) + stats.block_packets

    def _send(self, kind: str, batch: PartsWriter, now: float) -> None:
        """Send the batch's parts with the report; parts the channel cannot take are dropped and counted."""
        if kind == "end" or now >= self._next_pipeline_report:
            self._pipeline_report = pipeline_report(self.pipeline)
            self._next_pipeline_report = now + REPORT_S
        report = self._report()
        sender = self.sender
        parts = batch.getvalue() if batch.rows else b""
        if parts and not sender.send((kind, parts, report)):
            self.queue_drops += batch.rows
            parts = b""
        if not parts:
            report["queue_drops"] = self.queue_drops
            sender.send((kind, parts, report), force=True)
        self.seconds = {}

    def _report(self) -> dict:
        stats = self.ring.stats
        report = dict(self._pipeline_report)
        report.update(packets=stats.packets, bytes=stats.bytes, truncated=stats.truncated,
                      kernel_drops=self.ring.read_drops(), queue_drops=self.queue_drops,
                      seconds=sorted(self.seconds.items()), first_packet_ns=self.first_packet_ns,
                      last_packet_ns=self.last_packet_ns, error=self.error, sent_at=time.time(),
                      files=list(self.writer.files) if self.writer is not None else [])
        return report


class SnifferProcess:
    """The parent's handle on the capture process: its pid, the channel's receiving end, `stop()`."""

    def __init__(self, pid: int, receiver, stop_fd: int):
        self.pid = pid
        self.receiver = receiver
        self._stop_fd = stop_fd

    def stop(self) -> None:
        """Ask the capture process to finish (it sends its last batch, then exits)."""
        if self._stop_fd >= 0:
            try:
                os.write(self._stop_fd, b"x")
            except OSError:
                pass
            os.close(self._stop_fd)
            self._stop_fd = -1

    def wait(self, timeout: float) -> bool:
        """Reap the process; True once it has exited (killed after `timeout` seconds otherwise)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                pid, _ = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid:
                return True
            if time.monotonic() >= deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                return False
            time.sleep(0.02)


def fork_sniffer(ring: RingCapture, *, writer=None, **options) -> SnifferProcess:
    """Fork the capture process (before any thread of this process starts: fork copies only the
    calling thread). This process keeps the channel's receiving end; the ring, the socket and the
    writer are the child's from then on and are closed here."""
    receiver, sender = channel()
    stop_read, stop_write = os.pipe()
    if writer is not None:
        writer.flush()  # what is buffered would otherwise be written twice, once by each process
    pid = os.fork()
    if pid == 0:  # the capture process
        code = 1
        try:
            # Ctrl-C and SIGTERM are the dashboard's to handle: it stops this process through the
            # stop pipe; should the dashboard die, the pipes' ends tell this process so.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            receiver.close()
            os.close(stop_write)
            Sniffer(ring, sender, stop_read, writer=writer, **options).run()
            sender.close(timeout=30.0)
            code = 0
        finally:
            os._exit(code)
    sender.close_here()
    os.close(stop_read)
    ring.close()
    if writer is not None:
        writer.close()
    return SnifferProcess(pid, receiver, stop_write)
