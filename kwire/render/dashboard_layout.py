"""Where the live dashboard puts everything: a function of the terminal's size alone.

`layout(width, height)` decides, before any figure is looked at, how many lines each part of the
screen gets and which panel sits where, so nothing moves from one refresh to the next as lists
grow or shrink: a panel keeps its column, its place in it and its height for as long as the
terminal keeps its size (an empty one says "none so far"; a long one says "+N more").

Top to bottom: the title line; `notes` lines (1, 2 from 30 lines up); the api table (a title, a
header, `api_rows` rows); the findings band across the whole width (a title, `findings_rows`
lines); the grid of small panels (kwire.render.dashboard_panels), `grid_lines` high; the
requests-in-flight line and the capture-health line at the bottom. The grid has 1 column below 60
characters, 2 below 156, 3 below 208, then 4; each column holds the panels GRID names for that
count, in that order, and drops the last ones when it cannot give each a row; the lines left are
dealt one at a time, round the column, to the panels still below the rows worth giving them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kwire.render.dashboard_panels import PANELS

# The panels of each column, by number of columns: most wanted first in each column.
GRID: dict[int, tuple[tuple[str, ...], ...]] = {
    1: (("brokers", "errors by code", "consumer groups", "consumer lag, Fetch", "end to end, ms", "time lag, ms",
         "slowest", "share groups", "top clients by bytes", "top topics by bytes"),),
    2: (("brokers", "errors by code", "slowest", "share groups", "time lag, ms"),
        ("consumer groups", "consumer lag, Fetch", "end to end, ms", "top clients by bytes", "top topics by bytes")),
    3: (("brokers", "errors by code", "slowest"),
        ("consumer groups", "consumer lag, Fetch", "share groups"),
        ("end to end, ms", "time lag, ms", "top clients by bytes", "top topics by bytes")),
    4: (("brokers", "errors by code"), ("consumer groups", "consumer lag, Fetch"),
        ("end to end, ms", "time lag, ms"), ("slowest", "share groups", "top clients by bytes", "top topics by bytes")),
}
MIN_WIDTH, MIN_HEIGHT = 20, 6


@dataclass(frozen=True)
class Slot:
    panel: str
    rows: int          # data rows (a "+N more" line among them)
    header: bool       # a line of column names under the title

    @property
    def lines(self) -> int:
        return 1 + self.header + self.rows


@dataclass(frozen=True)
class Layout:
    width: int
    height: int
    notes: int
    api_rows: int
    findings_rows: int        # 0: no findings band (a very short terminal)
    grid_lines: int
    column_width: int
    columns: tuple[tuple[Slot, ...], ...]

    @property
    def findings_lines(self) -> int:
        return 1 + self.findings_rows if self.findings_rows else 0


def grid_columns(width: int) -> int:
    if width < 60:
        return 1
    return 2 if width < 156 else 3 if width < 208 else 4


def layout(width: int, height: int) -> Layout:
    """The screen's plan for a terminal of `width` x `height` characters."""
    width, height = max(MIN_WIDTH, width), max(MIN_HEIGHT, height)
    notes = 1 if height < 30 else 2
    middle = height - 1 - notes - 2  # the title line, the notes, the two lines at the bottom
    api_rows = max(0, min(max(1, middle // 3 - 1), 24, middle - 2))
    left = middle - 2 - api_rows
    findings_rows = min(max(1, middle // 6), 12, left - 1) if left >= 2 else 0
    grid_lines = left - (1 + findings_rows if findings_rows else 0)
    ncols = grid_columns(width)
    column_width = (width - (ncols - 1)) // ncols
    columns = tuple(_column(names, column_width, grid_lines) for names in GRID[ncols])
    return Layout(width, height, notes, api_rows, findings_rows, grid_lines, column_width, columns)


def _column(names: tuple[str, ...], width: int, lines: int) -> tuple[Slot, ...]:
    """The panels of one column that get a row each within `lines`, and their rows."""
    headers = {name: PANELS[name].header(width) for name in names}
    kept = list(names)
    while kept and sum(2 + headers[name] for name in kept) > lines:
        kept.pop()
    rows = {name: 1 for name in kept}
    room = lines - sum(2 + headers[name] for name in kept)
    while room > 0:
        wanting = [name for name in kept if rows[name] < PANELS[name].most]
        if not wanting:
            break
        for name in wanting[:room]:
            rows[name] += 1
        room -= min(room, len(wanting))
    return tuple(Slot(name, rows[name], headers[name]) for name in kept)
