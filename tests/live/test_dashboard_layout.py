"""The dashboard's layout (kwire.render.dashboard_layout) and panels (kwire.render.dashboard_panels),
read off the drawn screen: panels stay where the terminal's size puts them whatever their rows, the
findings get the width, every title names the time it covers, the broker panel shows its figures."""

from __future__ import annotations

import re

import pytest

from kwire.live.snapshot import BrokerRow, EndToEndRow, FindingRow, GroupRow, LagRow, ShareRow, SlowExchange, TimeLagRow
from kwire.render.dashboard_cells import SPARK
from kwire.render.dashboard_layout import GRID, grid_columns, layout
from kwire.render.dashboard_panels import PANELS
from tests.live.test_dashboard import APIS, _screen, _snapshot

SIZES = [(80, 24), (100, 30), (132, 43), (160, 50), (200, 60), (250, 70)]
# What each panel's figures cover, as kwire.live.snapshot's fields say (and kwire.live.state makes them):
# brokers and slowest from the window's seconds; the others from every exchange since the start.
WINDOWS = {"brokers": "last 30 s", "slowest": "last 30 s", "errors by code": "since start",
           "consumer groups": "since start", "consumer lag, Fetch": "since start", "share groups": "since start",
           "top clients by bytes": "since start", "top topics by bytes": "since start",
           "end to end, ms": "since start", "time lag, ms": "since start",
           "findings": "since start", "requests by api": "last 30 s"}


def _few():
    """Every list empty or nearly."""
    return _snapshot(2, window_s=30.0, errors=[], clients=[("c", 1)], topics=[], lag=[], share=[], slowest=[],
                     brokers=[BrokerRow("10.0.0.1:9092", 1.0, 0.1, 0.2, 0, 10, 0)], findings=[], groups=[])


def _many():
    """Every list longer than any panel."""
    return _snapshot(len(APIS), window_s=30.0,
                     errors=[(f"ERROR_{i}", 100 - i) for i in range(30)],
                     clients=[(f"client-{i}", 1000 - i) for i in range(10)],
                     topics=[(f"topic-{i}", 1000 - i) for i in range(10)],
                     lag=[LagRow("t", i, i, i) for i in range(40)],
                     share=[ShareRow(f"share-{i}", 1, 2, 0, 2) for i in range(20)],
                     slowest=[SlowExchange(0, "Fetch", 500.0 - i, "a:1", "b:2", "c", i) for i in range(10)],
                     brokers=[BrokerRow(f"10.0.0.{i}:9092", 50.0 - i, 0.1, 0.2, i, 10, i) for i in range(30)],
                     findings=[FindingRow("warning", "slow_broker", f"finding {i} " + "x" * 200, 1.0)
                               for i in range(20)],
                     groups=[GroupRow(f"group-{i}", "classic", 3, 2, 2, 0, 1.0) for i in range(30)],
                     end_to_end=[EndToEndRow(f"topic-{i % 3}", f"consumer-{i}", "fetch", 10, 1.5, 20.0, 7000.0 - i)
                                 for i in range(20)],
                     time_lag=[TimeLagRow(f"consumer-{i}", "commits" if i % 2 else "fetch", 10.0 * i, 100.0 * i)
                               for i in range(20)])


def _titles(lines: list[str]) -> dict[str, tuple[int, int]]:
    """(line, column) of each panel's title on the screen."""
    found = {}
    for name in [*PANELS, "findings", "requests by api"]:
        for n, line in enumerate(lines):
            col = line.find(name + " (")
            if col >= 0:
                found[name] = (n, col)
                break
    return found


@pytest.mark.parametrize("width,height", SIZES)
def test_panels_stay_in_place_whatever_their_rows(width, height):
    screens = [_screen(snap, width, height) for snap in (_few(), _snapshot(window_s=30.0), _many())]
    positions = [_titles(lines) for lines in screens]
    assert positions[0] == positions[1] == positions[2]
    assert all(len(lines) == height for lines in screens)
    shown = {slot.panel for column in layout(width, height).columns for slot in column}
    assert set(positions[0]) == shown | {"findings", "requests by api"}
    # A panel sits in the column the width gives it: its title starts that column.
    plan = layout(width, height)
    for c, names in enumerate(GRID[grid_columns(width)]):
        for name in names:
            if name in shown:
                assert positions[0][name][1] == c * (plan.column_width + 1), name
    for lines in screens:  # the two bottom lines stay at the bottom
        assert lines[-2].startswith("requests: ") and lines[-1].startswith("capture since start: ")


def test_the_80x24_grid_shows_brokers_errors_groups_and_lag():
    shown = {slot.panel for column in layout(80, 24).columns for slot in column}
    assert {"brokers", "errors by code", "consumer groups", "consumer lag, Fetch"} <= shown


def test_findings_get_the_width_at_160_columns():
    long = "member m (c3) of group g stopped without leaving; " + "its partitions t[1, 2] had no owner " * 6
    one = "group kwire-app rebalanced 7 times in 38.0 s (generations 2..8), 29.8 s of it rebalancing" + " y" * 20
    snap = _snapshot(3, findings=[FindingRow("warning", "member_expired", long.strip(), 1.0),
                                  FindingRow("warning", "rebalance_storm", one, 2.0)])
    lines = _screen(snap, 160, 50)
    start = next(n for n, line in enumerate(lines) if line.startswith("findings (since start)"))
    body = lines[start + 1:start + 4]
    assert 150 <= len(body[0].rstrip()) <= 160  # the first line uses the width
    assert " ".join(line.strip() for line in body[:2]) == "member_expired: " + long.strip()  # whole, on two lines
    assert body[2].rstrip() == "rebalance_storm: " + one  # 131 characters: not cut
    narrow = _screen(snap, 80, 24)
    first = next(line for line in narrow if line.startswith("member_expired"))
    assert len(first.rstrip()) >= 75  # cut by the width only


def test_findings_that_do_not_fit_are_counted_in_the_title():
    lines = _screen(_many(), 160, 50)
    title = next(line for line in lines if line.startswith("findings (since start)"))
    rows = layout(160, 50).findings_rows
    assert f"+{20 - rows} more" in title


@pytest.mark.parametrize("width,height", SIZES)
def test_every_title_names_the_time_it_covers(width, height):
    lines = _screen(_many(), width, height)
    titles = _titles(lines)
    for name, (n, col) in titles.items():
        title = lines[n][col:]
        assert title.startswith(f"{name} ({WINDOWS[name]}"), title
    header = next(line for line in lines if line.startswith("api "))
    history = re.search(r"req/s, last (\d+) s", header)
    assert history, header
    # The sparkline header says how many seconds it draws, and it draws that many (one a cell).
    seconds, at = int(history.group(1)), history.start()
    row = next(line for line in lines if line.startswith("ShareFetch "))
    assert all(c in SPARK for c in row[at:at + seconds]) and len(row[at:at + seconds]) == seconds
    assert row[at + seconds:at + seconds + 1] in ("", " ")


def test_the_broker_panel_shows_each_brokers_figures():
    brokers = [BrokerRow("10.0.0.1:9092", 12.6, 0.25, 7.5, 3, 123_456, 4),
               BrokerRow("10.0.0.2:9092", 0.5, None, None, 0, 0, 0)]
    snap = _snapshot(3, brokers=brokers)
    lines = _screen(snap, 160, 50)
    width = layout(160, 50).column_width
    title = next(line for line in lines if line.startswith("brokers ("))
    assert title[:width].strip() == "brokers (last 10 s; in flight now)"
    header = lines[lines.index(title) + 1][:width].split()
    assert header == ["broker", "req/s", "p50", "ms", "p99", "ms", "err", "in", "flight"]
    rows = [line[:width].split() for line in lines if line.startswith("10.0.0.")]
    assert rows == [["10.0.0.1:9092", "13", "0.250", "7.50", "3", "4"], ["10.0.0.2:9092", "0.50", "-", "-", "0", "0"]]
    narrow = [line[:40].split() for line in _screen(snap, 80, 24) if line.startswith("10.0.0.")]
    assert narrow[0] == ["10.0.0.1:9092", "13", "7.50", "3"]  # at 40 columns: rate, p99, errors
    empty = _screen(_snapshot(3, brokers=[]), 80, 24)
    assert any(line.startswith("none in the last 10 s") for line in empty)
