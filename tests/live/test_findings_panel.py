"""The dashboard's findings and consumer-groups panels: the rows are `kwire stats`' findings and groups
(a real recording replayed through a DashboardState whose window holds only one second), and the
screen shows them first."""

from __future__ import annotations

from rich.console import Console

from kwire.capture.files import read_captures
from kwire.live.snapshot import FindingRow, GroupRow
from kwire.live.state import DashboardState
from kwire.pipeline import Pipeline
from kwire.render.dashboard import build_view
from tests import problems as P
from tests.live.test_dashboard import _snapshot


def test_panel_rows_are_the_stats_findings_and_groups():
    name = "member-expired"
    state = DashboardState("replay", name, window=1)
    pipeline = Pipeline()
    last = 0
    for packet in read_captures([str(P.capture(name))]):
        state.add_packets([packet])
        last = packet.ts_ns
        exchanges = pipeline.feed(packet)
        if exchanges:
            state.add_exchanges(exchanges)
    state.add_exchanges(pipeline.finish())
    state.finished = True
    snap = state.snapshot(last, pipeline, {})
    doc = P.document(name)
    assert [(f.severity, f.kind, f.summary) for f in snap.findings] == \
        [(f["severity"], f["kind"], f["summary"]) for f in doc["findings"]]
    (row,) = snap.groups
    group = doc["groups"]["kwire-app"]
    assert (row.group, row.protocol, row.generation, row.generations, row.expired) == (
        "kwire-app", "classic", group["generations"][-1]["generation"], len(group["generations"]), 1)


def test_the_screen_shows_findings_first():
    snap = _snapshot(3, findings=[FindingRow("warning", "member_expired", "member m (c3) of group g stopped", 1.0)],
                     groups=[GroupRow("kwire-app", "classic", 3, 2, 2, 1, 1.0)])
    console = Console(width=100, height=30, color_system=None, force_terminal=True, legacy_windows=False)
    with console.capture() as capture:
        console.print(build_view(snap, 100, 30))
    screen = capture.get()
    assert "findings" in screen and "member_expired: member m (c3)" in screen and "consumer groups" in screen
    assert screen.index("findings") < screen.index("errors by code")
