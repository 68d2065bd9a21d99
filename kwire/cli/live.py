"""`kwire live`: a live dashboard of the Kafka traffic on an interface, or of a capture replayed.

Thin: parse the options, open the source (errors end as one `kwire: error:` line before any screen
is drawn), run the feeder, and redraw kwire.render.dashboard.build_view of its snapshot a few times
a second inside rich's Live on the alternate screen. On Linux the interface is read by
kwire.live.ringfeed.RingFeeder (a capture process of its own on a TPACKET_V3 ring); elsewhere, and
for a replay, by kwire.live.feeder.Feeder on a thread. q, Ctrl-C or SIGTERM quit and leave the
terminal as it was (screen, cursor, termios). When stdout is not a terminal, or with --json, there
is no screen: the run goes on until it is done (--exit-when-done, --duration, the end of a replay,
or a signal) and the last view is printed once, or with --json the run's final figures as one JSON
document (kwire.live.report.final_document). A one-line summary goes to stderr on the way out.
As a service (docs/metrics.md): --metrics serves Prometheus metrics (kwire.cli.exporter), --no-screen
runs until a signal with a health line a minute (kwire.cli.service), --findings-log writes the
findings' starts and ends; the findings still open when the run ends are ended once, with what ended
it (`QuitEvent.cause`: a signal, q, --duration; else the capture's own end, as the state says).
"""

from __future__ import annotations

import signal
import sys
import threading
import time

import click

from kwire.capture.files import FORMATS_READ
from kwire.cli.options import capture_paths, filter_options
from kwire.cli.keys import keylog_option, load_keys
from kwire.counts import count
from kwire.live.findings_log import DURATION, FAILED, QUIT, SIGNAL
from kwire.safe_text import term_safe

MAX_REFRESH = 4.0  # screens per second at most
RING_KIB = 65536   # the capture ring: 64 MiB, seconds of traffic at tens of thousands of packets/s


class QuitEvent(threading.Event):
    """The run's quit event, with what set it first (kwire.live.findings_log: SIGNAL, QUIT, DURATION); None
    while nothing from outside stopped the run."""

    def __init__(self) -> None:
        super().__init__()
        self.cause: str | None = None

    def quit(self, cause: str) -> None:
        if self.cause is None:
            self.cause = cause
        self.set()


@click.command("live")
@click.option("-i", "--interface", "iface", default=None, metavar="IFACE",
              help="Interface to sniff (default: every interface). Needs root or CAP_NET_RAW.")
@click.option("--port", "ports", multiple=True, type=click.IntRange(1, 65535),
              help="A broker port: capture only it (live) and treat it as Kafka from the first byte; repeatable.")
@click.option("--bpf", default=None, metavar="FILTER",
              help="Capture filter in libpcap syntax (default: tcp, or the --port ports).")
@click.option("--tunnels", is_flag=True,
              help="The default filter also lets through the tunnels kwire opens (VXLAN, Geneve, GRE/ERSPAN, "
                   "IP in IP, MPLS, PPPoE): for a mirror port or an overlay's underlay.")
@click.option("--replay", "replay", multiple=True, type=click.Path(dir_okay=True), metavar="CAPTURE",
              help=f"Replay a capture file ({FORMATS_READ}) instead of sniffing; repeatable.")
@click.option("--speed", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Replay speed: X times the recorded pace, 0 as fast as possible.")
@click.option("--window", type=click.IntRange(1, 600), default=10, show_default=True, metavar="SECONDS",
              help="Rates and latency percentiles are over this many recent seconds.")
@click.option("--refresh", type=click.FloatRange(0.2, MAX_REFRESH), default=2.0, show_default=True,
              metavar="HZ", help="Screen refreshes per second.")
@click.option("--exit-when-done", is_flag=True, help="Quit when the replay ends instead of waiting for q.")
@click.option("--duration", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
              help="Quit after this many seconds.")
@click.option("--json", "as_json", is_flag=True,
              help="No screen: when the run ends, print its final figures as one JSON document.")
@click.option("-w", "--write", "write", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also keep the packets captured in FILE (pcap, nanosecond timestamps).")
@click.option("-C", "file_size", type=click.FloatRange(min=0, min_open=True), default=None, metavar="MB",
              help="With -w: a new file once the current one is larger than MB million bytes "
                   "(FILE, FILE1, FILE2, ... as tcpdump -C names them).")
@click.option("-B", "--buffer-size", "buffer_kib", type=click.IntRange(min=1024), default=RING_KIB,
              show_default=True, metavar="KIB", help="Kernel capture ring size in KiB (as tcpdump -B).")
@click.option("--metrics", "metrics", default=None, metavar="[HOST:]PORT",
              help="Serve Prometheus metrics (text format or OpenMetrics) on this address, e.g. :9464.")
@click.option("--metrics-cap", "metric_caps", multiple=True, metavar="LABEL=N",
              help="Keep at most N values of a metric label (client_id, broker, topic, partition, group, api, "
                   "api_version, error), the rest as 'other'; repeatable (docs/metrics.md: the defaults).")
@click.option("--no-screen", is_flag=True,
              help="Run as a service: no screen, until a signal (a replay keeps serving its final figures), "
                   "one line of capture health on stderr a minute.")
@click.option("--findings-log", "findings_log", default=None, metavar="FILE",
              help="Append each finding as one JSON line when it is first known and when it ends ('-': stdout).")
@filter_options(times=False, port=False)
@keylog_option(follow=True)
def live_command(iface, ports, bpf, tunnels, replay, speed, window, refresh, exit_when_done, duration, as_json, write,
                 file_size, buffer_kib, metrics, metric_caps, no_screen, findings_log, selection, keylog):
    """Watch Kafka traffic live: requests/s, latency, errors, lag, share groups, capture health.

    The filters (--api, --topic, ...) choose the exchanges the dashboard counts."""
    from kwire.live.state import DashboardState

    paths, where, expression = _source(iface, ports, bpf, tunnels, replay, speed, write, file_size)
    keep = selection.exchange_filter()
    if selection.active:
        where += " · " + selection.describe()
    screen = sys.stdout.isatty() and not as_json and not no_screen
    if findings_log == "-" and (screen or as_json):
        raise click.UsageError("--findings-log - writes to stdout: add --no-screen (and leave out --json)")
    state = DashboardState("replay" if replay else "live", where, window=window,
                           keep=keep if selection.active else None, metrics=_metrics_state(metrics, metric_caps))
    # A live key log may get a handshake's secrets a little after the handshake: its records wait.
    keys = load_keys(keylog, follow=not replay)
    key_wait = KEY_WAIT_BYTES if keylog and not replay else 0
    if replay:
        feeder, name = _replay_feeder(paths, speed, state, ports, keys)
    else:
        feeder, name = _live_feeder(iface, expression, state, ports, keys, key_wait, write, file_size, buffer_kib)
    exporter, log = _start(feeder, state, metrics, findings_log)
    started = time.monotonic()
    quit_event = QuitEvent()
    previous = _catch_signals(quit_event)
    try:
        if log is not None:
            log.start()
        _run(feeder, quit_event, name, no_screen, screen, refresh, exit_when_done, duration, bool(replay),
             show=not as_json)
    except BaseException:
        quit_event.quit(FAILED)
        raise
    finally:
        _restore_signals(previous)
        feeder.stop()
        _close(exporter, log, _stop_cause(quit_event, duration, started))
    snap = feeder.snapshot()
    error = state.error or feeder.error
    if as_json:
        _print_document(feeder, snap, name, expression, time.monotonic() - started, error)
    _closing_line(snap, name, error)


def _run(feeder, quit_event, name: str, no_screen: bool, screen: bool, refresh: float, exit_when_done: bool,
         duration: float | None, replay: bool, show: bool) -> None:
    """The run, as a service, on the screen or with neither, until it is done or stopped."""
    if no_screen:
        from kwire.cli.service import run_service

        run_service(feeder, quit_event, name, duration, exit_when_done, replay=replay)
    elif screen:
        _run_screen(feeder, quit_event, 1.0 / refresh, exit_when_done, duration)
    else:
        _run_plain(feeder, quit_event, exit_when_done or replay, duration, show=show)


def _stop_cause(quit_event: QuitEvent, duration: float | None, started: float) -> str | None:
    """What stopped the run from outside: a signal, q, an error, --duration; None when the capture ended on its
    own (the findings log reads what ended it from the state)."""
    if quit_event.cause is not None:
        return quit_event.cause
    if duration is not None and time.monotonic() - started >= duration:
        return DURATION
    return None


def _source(iface, ports, bpf, tunnels, replay, speed, write, file_size) -> tuple[list | None, str, str | None]:
    """(capture files or None, what is watched, the capture filter) once the options are checked."""
    if file_size is not None and write is None:
        raise click.UsageError("-C needs -w FILE")
    if replay:
        if iface is not None or bpf is not None:
            raise click.UsageError("--replay reads a file: -i and --bpf do not apply")
        if write is not None:
            raise click.UsageError("-w keeps what is captured live: --replay reads a file")
        paths = capture_paths(replay)
        return paths, ", ".join(paths) + (f" at {speed:g}x" if speed else " at full speed"), None
    if speed != 1.0:
        raise click.UsageError("--speed applies to --replay only")
    from kwire.capture.bpf import default_filter
    from kwire.net.tables import GENEVE_PORT, vxlan_ports

    udp = [*vxlan_ports(), GENEVE_PORT] if tunnels else None
    expression = bpf if bpf is not None else default_filter(ports, tunnels=udp)
    return None, f"{iface if iface not in (None, '', 'any') else 'every interface'} ({expression})", expression


def _start(feeder, state, metrics: str | None, findings_log: str | None):
    """The exporter (cannot listen: one line, exit 1), the findings log, then the feeder (CaptureError:
    one line, exit 1, no screen); (exporter, log), either None when not asked for."""
    exporter = log = None
    try:
        exporter = _start_exporter(metrics, feeder, state)
        log = _findings_log(findings_log, feeder, state)
        feeder.start()
    except BaseException:
        _close(exporter, log, FAILED)
        raise
    return exporter, log


def _metrics_state(metrics: str | None, caps: tuple[str, ...]):
    """The exporter's counts (kwire.live.metrics_state) when --metrics asks for them."""
    if metrics is None:
        if caps:
            raise click.UsageError("--metrics-cap needs --metrics")
        return None
    from kwire.live.labels import LabelCaps, parse_cap
    from kwire.live.metrics_state import MetricsState

    try:
        return MetricsState(LabelCaps(dict(parse_cap(text) for text in caps)))
    except ValueError as exc:
        raise click.UsageError(f"--metrics-cap {exc}") from None


def _start_exporter(metrics: str | None, feeder, state):
    if metrics is None:
        return None
    from kwire.cli.exporter import start_exporter

    exporter = start_exporter(metrics, feeder, state)
    click.echo(f"kwire: metrics on http://{metrics.rpartition(':')[0] or 'localhost'}:{exporter.port}/metrics",
               err=True)
    return exporter


def _findings_log(path: str | None, feeder, state):
    if path is None:
        return None
    from kwire.cli.service import FindingsLog

    return FindingsLog(path, feeder, state)


def _close(exporter, log, cause: str | None = None) -> None:
    """The findings log closed (its open findings ended by `cause` unless the capture's end did), then the
    exporter stopped."""
    if log is not None:
        log.close(cause)
    if exporter is not None:
        exporter.stop()


def _closing_line(snap, name: str, error: str | None) -> None:
    """The one-line summary on stderr (and the error, exit status 1, when the capture failed)."""
    h = snap.health
    dropped = (h.kernel_drops or 0) + h.queue_drops
    kernel = f"{h.kernel_drops:,}" if h.kernel_drops is not None else "n/a"
    click.echo(f"kwire: live {name}: {count(h.packets, 'packet')}, {count(snap.exchanges, 'exchange')}, "
               f"{count(h.kafka_connections, 'Kafka connection')}, {count(h.gaps, 'gap')}, {dropped:,} dropped "
               f"(kernel {kernel}, queue {h.queue_drops:,})", err=True)
    if error:
        click.echo(f"kwire: error: {term_safe(error)}", err=True)
        sys.exit(1)


def _replay_feeder(paths, speed, state, ports, keys):
    from kwire.live.feeder import Feeder
    from kwire.live.sources import ReplaySource

    source = ReplaySource(paths, speed)
    return Feeder(source, state, port_hints=ports, keys=keys), source.where


def _live_feeder(iface, expression, state, ports, keys, key_wait, write, file_size, buffer_kib):
    """The ring capture in a process of its own where Linux offers it, else the per-packet sniffer."""
    if _ring_capture():
        from kwire.live.ringfeed import RingFeeder

        feeder = RingFeeder(iface, expression, state, port_hints=ports, keys=keys, key_wait_bytes=key_wait,
                            write=write, file_size=int(file_size * 1_000_000) if file_size else None,
                            ring_bytes=buffer_kib << 10)
        return feeder, feeder.where
    if write is not None:
        raise click.UsageError("-w needs Linux's capture ring")
    from kwire.live.feeder import Feeder
    from kwire.live.sources import SniffSource

    source = SniffSource(iface, expression)
    return Feeder(source, state, port_hints=ports, keys=keys, key_wait_bytes=key_wait), source.where


def _ring_capture() -> bool:
    import socket

    return sys.platform.startswith("linux") and hasattr(socket, "AF_PACKET")


def _print_document(feeder, snap, name: str, expression, seconds: float, error) -> None:
    import json

    from kwire.live.report import final_document

    health, report = feeder.totals()
    doc = final_document(where=name, expression=expression, seconds=seconds, health=health, report=report,
                         counted=snap.exchanges, files=getattr(feeder, "files", []), error=error)
    click.echo(json.dumps(doc, indent=2, sort_keys=True))


KEY_WAIT_BYTES = 256 << 10  # bytes of a TLS connection held while its key log line is not written yet


def _done(feeder, started: float, exit_when_done: bool, duration: float | None) -> bool:
    if duration is not None and time.monotonic() - started >= duration:
        return True
    return exit_when_done and not feeder.running


def _run_screen(feeder, quit_event: threading.Event, interval: float, exit_when_done: bool,
                duration: float | None) -> None:
    from rich.console import Console
    from rich.live import Live

    from kwire.live.keys import KeyReader
    from kwire.render.dashboard import build_view

    console = Console(highlight=False)

    def on_key(ch: str) -> None:
        if ch in ("q", "Q", "\x1b"):
            quit_event.quit(QUIT)

    started = time.monotonic()
    with KeyReader(on_key), Live(console=console, screen=True, auto_refresh=False, transient=True,
                                 redirect_stdout=False, redirect_stderr=False) as live:
        while True:
            t0 = time.monotonic()
            snap = feeder.snapshot()
            width, height = console.size
            live.update(build_view(snap, width, height), refresh=True)
            cost = time.monotonic() - t0
            if (exit_when_done and snap.finished) or (
                    duration is not None and time.monotonic() - started >= duration):
                break
            # Drawing never takes more than about a fifth of the time, however busy the capture is.
            wait = max(interval, 4 * cost)
            if duration is not None:
                wait = max(0.0, min(wait, duration - (time.monotonic() - started)))
            if quit_event.wait(wait):
                break


def _run_plain(feeder, quit_event: threading.Event, exit_when_done: bool, duration: float | None,
               show: bool = True) -> None:
    """No screen: wait for the end (nobody can press q: a replay ends on its own), then print the
    last view once (unless `show` is off: --json prints the figures instead)."""
    started = time.monotonic()
    while not _done(feeder, started, exit_when_done, duration):
        if quit_event.wait(0.1):
            break
    if show:
        from rich.console import Console

        from kwire.render.dashboard import build_view

        console = Console(highlight=False)
        console.print(build_view(feeder.snapshot(), console.width, 50))


def _catch_signals(event: QuitEvent) -> dict:
    """SIGINT and SIGTERM set `event` (the loops quit cleanly) instead of raising mid-draw."""
    previous = {}

    def handler(signum, frame) -> None:
        event.quit(SIGNAL)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread
            pass
    return previous


def _restore_signals(previous: dict) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)
