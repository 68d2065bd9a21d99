"""The live dashboard's panels: what each shows, over which time, in which columns, drawn in a fixed
number of lines.

`PANELS` holds the grid's panels (kwire.render.dashboard_layout places them): each one's name, the
time its figures cover (`window`: the last N s or since start, as kwire.live.snapshot's fields say),
the Snapshot list it reads, its columns (a name first, then the others, kept by rank as far as the
panel's width allows: a column that says a different time names it in the title) and how many
rows are worth giving it. `panel_view(panel, snap, width, rows)` draws one in exactly
`1 + panel.header(width) + rows` lines: its title, column names when it has more than two columns,
its rows ("none ..." when it has none; the title says "+N more" when they do not all fit), blank
lines to fill.
`findings_view(snap, width, rows)` draws the full-width findings band in exactly `1 + rows` lines;
a finding takes the lines its text needs while the band has room for them.

Pure functions of a Snapshot and a size; every string from the wire reaches rich as an escaped Text.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Callable

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kwire.live.snapshot import Snapshot
from kwire.render.dashboard_cells import (SINCE_START, WINDOW, fmt_bytes, fmt_count, fmt_ms, fmt_rate,
                                          window_words)
from kwire.render.groups_view import SEVERITY_STYLE
from kwire.render.safe import term_safe, wire_text

TITLE_STYLE = "bold cyan"


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[object], object]  # one item of the panel's list -> str or Text
    width: int = 0                    # 0: the name column, which takes what the others leave
    rank: int = 0                     # the narrower the panel, the fewer kept: lowest rank first
    right: bool = True
    note: str = ""                    # what the title adds when the column is shown (another time)


@dataclass(frozen=True)
class Panel:
    name: str
    window: str                            # kwire.render.dashboard_cells: WINDOW or SINCE_START
    items: Callable[[Snapshot], list]
    columns: tuple[Column, ...]            # the name column first
    most: int                              # rows worth giving it
    name_width: int = 12                   # the name column's least width

    def shown(self, width: int) -> tuple[Column, ...]:
        """The columns a panel `width` wide shows: by rank while they fit, in their own order."""
        room = width - self.name_width
        kept = set()
        for column in sorted(self.columns[1:], key=lambda c: c.rank):
            if column.width + 1 > room:
                break
            kept.add(column.header)
            room -= column.width + 1
        return (self.columns[0],) + tuple(c for c in self.columns[1:] if c.header in kept)

    def header(self, width: int) -> bool:
        """Whether it shows column names (a line): only with more than a name and one figure."""
        return len(self.shown(width)) > 2

    def title(self, width: int, window_s: float) -> str:
        words = [window_words(self.window, window_s)] + [c.note for c in self.shown(width) if c.note]
        return f"{self.name} ({'; '.join(words)})"


def _errors_cell(n: int) -> Text:
    return Text(fmt_count(n), style="bold red" if n else "")


def _slow_cell(ms: float | None) -> Text:
    return Text(fmt_ms(ms), style="bold red" if (ms or 0) >= 1000 else "")


def _consumer_topic(row) -> Text:
    """A consumer and the topic it read (a share group's marked so), the topic dim."""
    name = Text("share ", style="dim") if row.kind == "share" else Text("")
    return name + wire_text(row.consumer) + Text(" ") + wire_text(row.topic, style="dim")


def _lag_name(row) -> Text:
    """A consumer (its Fetch answers), or a group's committed offsets."""
    return wire_text(row.name) + Text(" commits", style="dim") if row.kind == "commits" else wire_text(row.name)


PANELS: dict[str, Panel] = {p.name: p for p in (
    Panel("brokers", WINDOW, lambda s: s.brokers, (
        Column("broker", lambda r: wire_text(r.broker)),
        Column("req/s", lambda r: fmt_rate(r.rate), 6, 0),
        Column("p50 ms", lambda r: fmt_ms(r.p50_ms), 6, 4),
        Column("p99 ms", lambda r: fmt_ms(r.p99_ms), 6, 1),
        Column("err", lambda r: _errors_cell(r.errors), 4, 2),
        Column("bytes", lambda r: fmt_bytes(r.bytes), 9, 5),
        Column("in flight", lambda r: fmt_count(r.in_flight), 9, 3, note="in flight now")),
        most=12, name_width=15),
    Panel("errors by code", SINCE_START, lambda s: s.errors, (
        Column("code", lambda kv: wire_text(kv[0])),
        Column("count", lambda kv: Text(fmt_count(kv[1]), style="red"), 7)), most=10),
    Panel("consumer groups", SINCE_START, lambda s: s.groups, (
        Column("group", lambda g: wire_text(g.group)),
        Column("gen", lambda g: "-" if g.generation is None else str(g.generation), 3, 0),
        Column("members", lambda g: str(g.members), 7, 1),
        Column("expired", lambda g: Text(str(g.expired), style="bold red" if g.expired else ""), 7, 2)),
        most=10),
    Panel("consumer lag, Fetch", SINCE_START, lambda s: s.lag, (
        Column("partition", lambda r: wire_text(f"{r.topic}[{r.partition}]")),
        Column("latest", lambda r: fmt_count(r.lag), 7, 0),
        Column("max", lambda r: fmt_count(r.lag_max), 7, 1)), most=12),
    Panel("end to end, ms", SINCE_START, lambda s: s.end_to_end, (
        Column("consumer, topic", _consumer_topic),
        Column("p50", lambda r: fmt_ms(r.p50_ms), 6, 2),
        Column("p99", lambda r: fmt_ms(r.p99_ms), 6, 0),
        Column("max", lambda r: _slow_cell(r.max_ms), 6, 1),
        Column("delivered", lambda r: fmt_count(r.deliveries), 9, 3)), most=10, name_width=14),
    Panel("time lag, ms", SINCE_START, lambda s: s.time_lag, (
        Column("consumer", _lag_name),
        Column("latest", lambda r: _slow_cell(r.latest_ms), 7, 0),
        Column("max", lambda r: fmt_ms(r.max_ms), 7, 1)), most=10, name_width=14),
    Panel("share groups", SINCE_START, lambda s: s.share, (
        Column("group", lambda r: wire_text(r.group)),
        Column("acquired", lambda r: fmt_count(r.acquired), 8, 0),
        Column("redeliv", lambda r: Text(fmt_count(r.redelivered), style="yellow" if r.redelivered else ""), 7, 1),
        Column("acked", lambda r: fmt_count(r.acknowledged), 7, 2)), most=6),
    Panel("slowest", WINDOW, lambda s: s.slowest, (
        Column("api", lambda x: wire_text(x.api)),
        Column("ms", lambda x: fmt_ms(x.latency_ms), 7, 0),
        Column("client", lambda x: wire_text(x.client_id or x.client), 16, 1, right=False)), most=10),
    Panel("top clients by bytes", SINCE_START, lambda s: s.clients, (
        Column("client", lambda kv: wire_text(kv[0])),
        Column("bytes", lambda kv: fmt_bytes(kv[1]), 10)), most=10),
    Panel("top topics by bytes", SINCE_START, lambda s: s.topics, (
        Column("topic", lambda kv: wire_text(kv[0])),
        Column("bytes", lambda kv: fmt_bytes(kv[1]), 10)), most=10),
)}


def title_line(title: str, width: int, more: int = 0) -> Text:
    """A panel's title, then "+N more" when `more` of its items did not fit (cut first when narrow)."""
    text = Text(title, style=TITLE_STYLE, no_wrap=True, overflow="ellipsis")
    if more > 0:
        text.append(f"  +{more:,} more", style="dim")
    text.truncate(width, overflow="ellipsis")
    return text


def _none(window: str, window_s: float) -> Text:
    return Text("none so far" if window == SINCE_START else f"none in the {window_words(window, window_s)}",
                style="dim", no_wrap=True, overflow="ellipsis")


def panel_view(panel: Panel, snap: Snapshot, width: int, rows: int) -> Group:
    """`panel` in exactly 1 + panel.header(width) + `rows` lines, `width` columns; the title counts
    the items left out."""
    columns = panel.shown(width)
    header = panel.header(width)
    table = Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False, show_header=header,
                  header_style="bold", collapse_padding=True, width=width)
    for column in columns:
        fixed = column.width or None
        table.add_column(column.header, justify="right" if fixed and column.right else "left", no_wrap=True,
                         overflow="ellipsis", width=fixed, min_width=fixed, max_width=fixed,
                         ratio=None if fixed else 1)
    items = panel.items(snap)
    for item in items[:rows]:
        table.add_row(*[column.cell(item) for column in columns])
    lines: list = [title_line(panel.title(width, snap.window_s), width, len(items) - rows)]
    if items or header:
        lines.append(table)
    if not items and rows:
        lines.append(_none(panel.window, snap.window_s))
    lines += [Text("") for _ in range(rows - max(len(items), 1 if rows else 0))]
    return Group(*lines)


def findings_view(snap: Snapshot, width: int, rows: int) -> list[Text]:
    """The findings band, most severe first: a title (counting those left out) and exactly `rows` lines."""
    texts = [(term_safe(f"{f.kind}: {f.summary}"), SEVERITY_STYLE.get(f.severity, "")) for f in snap.findings]
    title = title_line(f"findings ({window_words(SINCE_START, snap.window_s)})", width, len(texts) - rows)
    body: list[tuple[str, str]] = []
    spare = rows - len(texts)
    for text, style in texts[:rows]:
        wrapped = _wrap(text, width, 1 + max(0, spare))
        spare -= len(wrapped) - 1
        body += [(line, style) for line in wrapped]
    lines = [title] if texts else [title, _none(SINCE_START, snap.window_s)]
    for text, style in body:
        line = Text(text, style=style, no_wrap=True, overflow="ellipsis")
        line.truncate(width, overflow="ellipsis")
        lines.append(line)
    return lines + [Text("") for _ in range(1 + rows - len(lines))]


def _wrap(text: str, width: int, most: int) -> list[str]:
    """`text` in at most `most` lines of `width` (the next ones indented), the last cut with "…"."""
    if most <= 1 or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False, max_lines=most,
                         placeholder=" …") or [text]
