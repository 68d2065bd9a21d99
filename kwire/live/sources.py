"""Where the dashboard's packets come from: a network interface, or capture files replayed.

Both sources offer the same small interface to the feeder thread:
- `start()` opens (CaptureError at once: no permission, unknown interface, not a capture);
- `take(timeout)` -> the packets due now (possibly none, waiting at most `timeout`);
- `finished` is True once no packet will ever come again (end of the replay, sniffer died);
- `now_ns()` is the dashboard's clock, in capture time: rates and windows are measured against it,
  so a replay at any speed shows the rates that were recorded;
- `health()` -> counters for the capture-health panel; `stop()` releases everything.

Replay pacing: packet i is due when (ts_i - ts_0) / speed of wall time has passed since the first
packet was handed out; speed 0 hands packets out as fast as the pipeline takes them. The clock
advances with wall time between packets (so rates decay through a quiet part of the capture) but
never past the next packet not yet handed out, and stops at the last packet when the replay ends.
"""

from __future__ import annotations

import time
from typing import Iterator

from kwire.capture.live import LiveCapture
from kwire.capture.packet import Packet
from kwire.capture.stats import CaptureStats
from kwire.errors import CaptureError

BATCH = 2048  # packets per take() at most
_NO_LIMIT = 1 << 126


class ReplaySource:
    def __init__(self, paths: list[str], speed: float = 1.0, *, clock=time.monotonic):
        if speed < 0:
            raise ValueError("speed must be >= 0")
        self.paths = list(paths)
        self.speed = float(speed)
        self.kind = "replay"
        self.where = ", ".join(self.paths)
        self.capture_stats = CaptureStats()
        self.finished = False
        self.error: str | None = None
        self.packets = 0
        self.bytes = 0
        self._clock = clock
        self._packets: Iterator[Packet] | None = None
        self._next: Packet | None = None
        self._base_wall = 0.0
        self._base_ts = 0
        self._last_ts = 0

    def start(self) -> None:
        from kwire.capture.files import read_captures

        self._packets = read_captures(self.paths, self.capture_stats)
        self._advance()
        if self._next is not None:
            self._base_ts = self._last_ts = self._next.ts_ns
        self._base_wall = self._clock()

    def _advance(self) -> None:
        try:
            self._next = next(self._packets)  # type: ignore[arg-type]
        except StopIteration:
            self._next = None
            self.finished = True
        except CaptureError as exc:
            self._next = None
            self.finished = True
            self.error = str(exc)

    def _due_ts(self) -> int:
        """Capture time the replay has reached by now (no limit at speed 0)."""
        if self.speed == 0:
            return _NO_LIMIT
        return self._base_ts + int((self._clock() - self._base_wall) * self.speed * 1e9)

    def take(self, timeout: float = 0.1) -> list[Packet]:
        if self._next is None:
            if timeout > 0:
                time.sleep(min(timeout, 0.05))
            return []
        due = self._due_ts()
        if self._next.ts_ns > due:
            wait = (self._next.ts_ns - due) / 1e9 / self.speed
            time.sleep(max(0.0, min(wait, timeout)))
            due = self._due_ts()
        out: list[Packet] = []
        while self._next is not None and self._next.ts_ns <= due and len(out) < BATCH:
            packet = self._next
            out.append(packet)
            self.bytes += packet.wire_len
            self._advance()
        self.packets += len(out)
        if out:
            self._last_ts = max(self._last_ts, out[-1].ts_ns)
        return out

    def now_ns(self) -> int:
        if self.finished or self.speed == 0:
            return self._last_ts
        due = self._due_ts()
        if self._next is not None:
            due = min(due, self._next.ts_ns)
        return max(due, self._last_ts)

    def health(self) -> dict:
        return {"packets": self.packets, "bytes": self.bytes, "kernel_drops": None, "queue_drops": 0,
                "queue": 0, "truncated": self.capture_stats.truncated, "error": self.error}

    def stop(self) -> None:
        if self._packets is not None and hasattr(self._packets, "close"):
            try:
                self._packets.close()  # type: ignore[union-attr]
            except CaptureError:
                pass
        self.finished = True


class SniffSource:
    """A LiveCapture with the source interface; the clock is the wall clock."""

    def __init__(self, iface: str | None, bpf: str, **capture_options):
        self.capture = LiveCapture(iface, bpf, **capture_options)
        self.kind = "live"
        self.where = self.capture.where
        self.bpf = bpf

    def start(self) -> None:
        self.capture.start()

    @property
    def finished(self) -> bool:
        return not self.capture.running and self.capture.queue_length == 0

    @property
    def error(self) -> str | None:
        return self.capture.stats.error

    def take(self, timeout: float = 0.1) -> list[Packet]:
        return self.capture.take(timeout, BATCH)

    def now_ns(self) -> int:
        return time.time_ns()

    def health(self) -> dict:
        s = self.capture.stats
        return {"packets": s.packets, "bytes": s.bytes, "kernel_drops": s.kernel_drops,
                "queue_drops": s.queue_drops, "queue": self.capture.queue_length, "truncated": s.truncated,
                "drop_episodes": s.drop_episodes, "max_queue": s.max_queue, "error": s.error}

    def stop(self) -> None:
        self.capture.stop()
