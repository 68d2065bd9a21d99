"""kwire live as a service: the --no-screen loop, its health line, and the findings log writer.

- `run_service(feeder, quit_event, ...)`: no screen and no terminal; the run goes on until a signal
  (or --duration, or --exit-when-done at the end of a replay: a replay otherwise keeps serving its
  final figures; a live capture that stops on its own ends the run), writing one line of capture
  health on stderr every HEALTH_EVERY_S seconds (and one when a replay ends).
- `FindingsLog(path, feeder, state)`: a thread that once a second asks the feeder for the findings
  (kwire.live.state.DashboardState.documents, on the feeder's thread), turns them into start and end
  events (kwire.live.findings_log.FindingsTracker) and writes each as one JSON line to the file (or
  stdout for "-"), flushed at once. When the capture ends on its own (a replay or standard input at its
  end, a live capture that stopped, an error) the next look ends the open findings ("capture ended",
  `ended_by` saying which) and the thread stops looking, even while a replay's figures are still served;
  `close(cause)` does it for a run stopped from outside (a signal, q, --duration) and closes the file. So
  each finding open at the end is ended exactly once, however the run ends.
"""

from __future__ import annotations

import sys
import threading
import time

import click

from kwire.counts import count
from kwire.errors import KwireError

HEALTH_EVERY_S = 60.0
FINDINGS_EVERY_S = 1.0


def health_line(snap, name: str) -> str:
    h = snap.health
    kernel = f"{h.kernel_drops:,}" if h.kernel_drops is not None else "n/a"
    return (f"kwire: {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {name}: {count(h.packets, 'packet')} "
            f"({h.packets_per_s:,.0f}/s), {count(snap.exchanges, 'exchange')} ({snap.rate:,.0f}/s), dropped: kernel "
            f"{kernel}, queue {h.queue_drops:,}; {count(h.gaps, 'gap')}, "
            f"{count(h.kafka_connections, 'Kafka connection')}, {count(len(snap.findings), 'finding')}"
            + ("; replay finished" if snap.finished else ""))


def run_service(feeder, quit_event: threading.Event, name: str, duration: float | None,
                exit_when_done: bool, every_s: float = HEALTH_EVERY_S, replay: bool = True) -> None:
    """Until a signal, `duration`, or the feeder's end: a replay that ended keeps serving (unless
    `exit_when_done`); a live capture that stopped on its own ends the run (kwire.cli.live then exits
    with its error, and a service manager can start it again)."""
    started = time.monotonic()
    next_line = started + every_s
    told_done = False
    while not quit_event.wait(0.2):
        now = time.monotonic()
        if duration is not None and now - started >= duration:
            break
        if not feeder.running and not told_done:
            told_done = True
            if exit_when_done or not replay:
                break
            click.echo(health_line(feeder.snapshot(), name) + " (serving the final figures until interrupted)",
                       err=True)
        if now >= next_line:
            next_line += every_s
            click.echo(health_line(feeder.snapshot(), name), err=True)


class FindingsLog:
    def __init__(self, path: str, feeder, state):
        from kwire.live.findings_log import FindingsTracker

        self.feeder = feeder
        self.state = state
        self.tracker = FindingsTracker()
        self.path = path
        try:
            self.out = sys.stdout if path == "-" else open(path, "a", encoding="utf-8")
        except OSError as exc:
            raise KwireError(f"cannot write {path}: {exc.strerror or exc}") from None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kwire-findings-log", daemon=True)
        self.error: str | None = None
        self.ended: str | None = None  # what ended the capture, once its findings are ended (ENDED_BY)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(FINDINGS_EVERY_S):
            if self._look(None) is not None:
                return  # the capture ended and its findings with it: nothing new can come

    def _look(self, cause: str | None) -> str | None:
        """One look: the events since the last, every open finding ended when the capture has ended (as
        the state says; else by `cause`, when given). What ended it, once it has."""
        if self.error or self.ended:
            return self.ended
        try:
            findings, now_ns, ended, error = self.feeder.call(self._findings)
            ended = ended or cause
            self._write(self.tracker.update(findings, now_ns, ended, error))
            self.ended = ended
        except OSError as exc:
            self.error = f"cannot write {self.path}: {exc.strerror or exc}"
        return self.ended

    def _findings(self):
        """(findings, capture time of the newest exchange (epoch ns), what ended the capture or None, its error)."""
        from kwire.live.findings_log import capture_end

        state = self.state
        findings, _ = state.documents()
        return findings, state.last_exchange_ns(), capture_end(state.kind, state.finished, state.error), state.error

    def _write(self, events: list[dict]) -> None:
        from kwire.live.findings_log import event_line

        for event in events:
            self.out.write(event_line(event))
        if events:
            self.out.flush()

    def close(self, cause: str | None = None) -> None:
        """Stop looking; unless the capture's end has ended them already, log the findings still open as
        ended by `cause` (kwire.live.findings_log.ENDED_BY: what stopped the run; None: the capture's own
        end, a replay's or a live capture's); close the file."""
        from kwire.live.findings_log import CAPTURE_STOPPED, REPLAY_FINISHED

        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10.0)
        self._look(cause or (REPLAY_FINISHED if self.state.kind == "replay" else CAPTURE_STOPPED))
        if self.out is not sys.stdout:
            self.out.close()
