"""Test-only: every output kwire writes of one capture, in this process, as bytes.

- `command(*args)`: one `kwire` command through click's runner (no traceback allowed: the runner's
  exception, if any, is raised); returns stdout and stderr.
- `files_of(path, tmp)`: `stats` with `--html` and `--metrics`, returning the tables, the HTML page and the
  metrics text file.
- `live_outputs(path)`: what `kwire live --replay` makes of the capture, without its threads: the
  dashboard (kwire.render.dashboard.build_view of a DashboardState fed every exchange), the exporter's
  metric families as Prometheus writes them, and the findings log's lines (kwire.live.findings_log).
"""

from __future__ import annotations

import io

from click.testing import CliRunner

from kwire.cli.main import cli

ENV = {"COLUMNS": "160", "NO_COLOR": "1"}
COLOUR = {"COLUMNS": "160", "FORCE_COLOR": "1", "TERM": "xterm-256color"}


def command(*args: str, env: dict | None = None, exit_code: int = 0) -> tuple[bytes, bytes]:
    result = CliRunner().invoke(cli, list(args), env=env or ENV, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == exit_code, (args, result.exit_code, result.stderr[-500:])
    return result.stdout_bytes, result.stderr_bytes


def files_of(path: str, tmp, *extra: str) -> dict[str, bytes]:
    html, metrics = tmp / "report.html", tmp / "metrics.prom"
    tables, stderr = command("stats", "-j", "0", "--html", str(html), "--metrics", str(metrics), *extra, path)
    return {"stats": tables, "stats stderr": stderr, "stats --html": html.read_bytes(),
            "stats --metrics": metrics.read_bytes()}


def live_outputs(path: str) -> dict[str, bytes]:
    from prometheus_client import CollectorRegistry, generate_latest
    from rich.console import Console

    from kwire.live.findings_log import REPLAY_FINISHED, FindingsTracker, event_line
    from kwire.live.labels import LabelCaps
    from kwire.live.metric_families import families
    from kwire.live.metrics_state import MetricsState
    from kwire.live.state import DashboardState
    from kwire.pipeline import analyze_files
    from kwire.render.dashboard import build_view

    state = DashboardState("replay", path, metrics=MetricsState(LabelCaps()))
    exchanges = list(analyze_files([path]))
    state.add_exchanges(exchanges)
    state.finished = True
    last = max(ex.ts_ns for ex in exchanges)
    out = {}
    for width, height in ((160, 50), (80, 24)):
        console = Console(file=io.StringIO(), width=width, height=height, force_terminal=True, color_system=None)
        console.print(build_view(state.snapshot(last), width, height))
        out[f"live {width}x{height}"] = console.file.getvalue().encode()

    class Fixed:
        def collect(self):
            return families(state.metrics_view({"packets": 1}, {}))

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Fixed())
    out["live --metrics"] = generate_latest(registry)
    findings, _ = state.documents()
    tracker = FindingsTracker()
    events = tracker.update(findings, last) + tracker.update(findings, last, ended=REPLAY_FINISHED)
    out["live --findings-log"] = "".join(event_line(e) for e in events).encode()
    return out
