"""The live dashboard's screen: `build_view(snapshot, width, height)` -> a rich renderable.

A pure function of a kwire.live.snapshot.Snapshot and the terminal size: no clock, no I/O, the
same input draws the same screen. It draws exactly `height` lines (6 at least) no wider than
`width` (every cell is one line, cut with an ellipsis), so rich's Live never scrolls, and where
each part goes is decided by the size alone (kwire.render.dashboard_layout): a panel stays where it
is as its rows come and go.

Top to bottom: a title line; the notes (replay finished, no Kafka seen yet, capture problems; the
last line holds the ones left over); the table of requests per API (rate, p50/p99 latency, errors
over the window, the total since the start, and sparklines of the last seconds when there is room);
the findings across the whole width; the grid of small panels (kwire.render.dashboard_panels:
brokers, errors by code, consumer groups, consumer lag, slowest exchanges, share groups, top
clients and topics by bytes); the requests-in-flight line and the capture-health line. Every
title says the time its figures cover: "last N s" (the window), "since start", "now".
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kwire.live.snapshot import Snapshot
from kwire.render.dashboard_cells import (SINCE_START, WINDOW, fmt_bytes, fmt_count, fmt_ms, fmt_rate, sparkline,
                                          window_words)
from kwire.render.dashboard_layout import Layout, layout
from kwire.render.dashboard_panels import PANELS, findings_view, panel_view, title_line
from kwire.render.safe import term_safe, wire_text
from kwire.render.times import local_clock

SEPARATOR = " · "


def _title_line(snap: Snapshot, width: int) -> Text:
    when = local_clock(snap.now_ns) if snap.now_ns else "--:--:--"
    left = Text.assemble(("kwire live", "bold magenta"), "  ", (term_safe(snap.where), "bold"), "  ", when)
    state = "finished" if snap.finished else ("replay" if snap.kind == "replay" else "capturing")
    right = Text(f"{fmt_rate(snap.rate)} req/s  {fmt_count(snap.exchanges)} exchanges  {state}  q quits",
                 style="dim")
    if left.cell_len + right.cell_len + 2 > width:
        right = Text("q quits", style="dim")
    left.truncate(max(1, width - right.cell_len - 1), overflow="ellipsis")
    pad = max(1, width - left.cell_len - right.cell_len)
    line = left + Text(" " * pad) + right
    line.no_wrap = True
    line.truncate(width, overflow="ellipsis")
    return line


def _note_style(snap: Snapshot, i: int) -> str:
    if i < snap.alarms:
        return "bold red"
    return "bold green" if i == snap.done else "bold yellow"


def _note_lines(snap: Snapshot, width: int, lines: int) -> list[Text]:
    """Exactly `lines` lines: one note each, the last line holding every note left (" · " between)."""
    out = []
    for i in range(lines):
        text = Text(no_wrap=True, overflow="ellipsis")
        last = i == lines - 1
        for j, note in enumerate(snap.notes[i:] if last else snap.notes[i:i + 1]):
            if j:
                text.append(SEPARATOR, style="dim")
            text.append(term_safe(note), style=_note_style(snap, i + j))
        text.truncate(width, overflow="ellipsis")
        out.append(text)
    return out


def _api_columns(width: int) -> tuple[list[tuple[str, bool, int]], int, bool]:
    """The api table's columns (name, right-aligned, width) for `width`, the sparklines' width, and
    whether it is wide (max, bytes and a p99 sparkline too); widths depend on the terminal alone."""
    wide = width >= 110
    columns = [("api", False, 28 if wide else 16), ("req/s", True, 6), ("total", True, 6), ("p50 ms", True, 6),
               ("p99 ms", True, 6)]
    if wide:
        columns += [("max ms", True, 6), ("bytes", True, 9)]
    columns.append(("err", True, 4))
    left = width - sum(w for _, _, w in columns) - len(columns)
    sparks = 2 if wide else 1
    spark_width = min(60, (left - (sparks - 1)) // sparks)
    if spark_width >= 6:
        columns.append((f"req/s, last {spark_width} s", False, spark_width))
        if wide:
            columns.append((f"p99 ms, last {spark_width} s", False, spark_width))
    else:
        spark_width = 0
    return columns, spark_width, wide


def _api_table(snap: Snapshot, width: int, rows: int) -> Group:
    """The api table in exactly 2 + `rows` lines; every column has a width set by the terminal."""
    columns, spark_width, wide = _api_columns(width)
    table = Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False, header_style="bold",
                  collapse_padding=True, expand=False)
    for name, right, w in columns:
        style = ("green" if name.startswith("req") else "yellow") if name.startswith(("req/s,", "p99 ms,")) else None
        table.add_column(name, justify="right" if right else "left", no_wrap=True, overflow="ellipsis",
                         width=w, min_width=w, max_width=w, style=style)
    apis = snap.apis
    for row in apis[:rows]:
        cells = [wire_text(row.api), fmt_rate(row.rate), fmt_count(row.requests), fmt_ms(row.p50_ms),
                 fmt_ms(row.p99_ms)]
        if wide:
            cells += [fmt_ms(row.max_ms), fmt_bytes(row.bytes)]
        cells.append(Text(fmt_count(row.errors), style="bold red") if row.errors else "0")
        if spark_width:
            cells.append(sparkline(row.history, spark_width))
            if wide:
                cells.append(sparkline(row.p99_history, spark_width))
        table.add_row(*cells)
    title = title_line(f"requests by api ({window_words(WINDOW, snap.window_s)}; total {SINCE_START})", width,
                       len(apis) - rows)
    fill = [Text("") for _ in range(rows - len(table.rows))]
    if not apis and fill:
        fill[0] = Text("no Kafka requests yet", style="dim")
    return Group(title, table, *fill)


def _grid(snap: Snapshot, plan: Layout) -> Table:
    """The small panels, each column exactly `plan.grid_lines` high."""
    grid = Table.grid(padding=(0, 1), expand=False)
    cells = []
    for column in plan.columns:
        parts: list = [panel_view(PANELS[slot.panel], snap, plan.column_width, slot.rows) for slot in column]
        parts += [Text("") for _ in range(plan.grid_lines - sum(slot.lines for slot in column))]
        cells.append(Group(*parts))
        grid.add_column(width=plan.column_width, no_wrap=True, overflow="ellipsis", vertical="top")
    grid.add_row(*cells)
    return grid


def _flight_line(snap: Snapshot, width: int) -> Text:
    text = Text("requests: ", style="bold cyan", no_wrap=True, overflow="ellipsis")
    text.append(f"in flight {fmt_count(snap.in_flight)} now")
    if snap.oldest_in_flight_ms is not None:
        text.append(f" (oldest {fmt_ms(snap.oldest_in_flight_ms)} ms)")
    text.append(SEPARATOR + SINCE_START + ": ", style="dim")
    text.append(f"unanswered {fmt_count(snap.unanswered)}", style="bold yellow" if snap.unanswered else "")
    text.append(SEPARATOR, style="dim")
    text.append(f"responses without request {fmt_count(snap.orphans)}")
    text.truncate(width, overflow="ellipsis")
    return text


def _health_parts(snap: Snapshot) -> list[tuple[str, str]]:
    """(text, style) of the capture-health line: the counts since the start, then the rate over the
    window, then what is open now."""
    h = snap.health
    parts = [(f"{fmt_count(h.packets)} pkts", ""), (fmt_bytes(h.bytes), "")]
    drops = []
    if h.kernel_drops is not None:
        drops.append(f"kernel {fmt_count(h.kernel_drops)}")
    if snap.kind == "live" or h.queue_drops:
        drops.append(f"queue {fmt_count(h.queue_drops)}")
    if drops:
        parts.append(("drops " + " ".join(drops), "bold red" if h.queue_drops or h.kernel_drops else ""))
    parts.append((f"gaps {fmt_count(h.gaps)}", "bold yellow" if h.gaps else ""))
    if h.decode_errors:
        parts.append((f"decode errors {fmt_count(h.decode_errors)}", "yellow"))
    if h.truncated:
        parts.append((f"truncated {fmt_count(h.truncated)}", "yellow"))
    parts.append((f"kafka conns {h.kafka_connections}", ""))
    parts.append((f"{window_words(WINDOW, snap.window_s)}: {fmt_rate(h.packets_per_s)} pkt/s", ""))
    now = f"now: conns {h.connections} open" + (f", queued {fmt_count(h.queue)}" if h.queue else "")
    parts.append((now, ""))
    return parts


def _health_line(snap: Snapshot, width: int) -> Text:
    text = Text(f"capture {SINCE_START}: ", style="bold cyan", no_wrap=True, overflow="ellipsis")
    for i, (part, style) in enumerate(_health_parts(snap)):
        if i:
            text.append(SEPARATOR, style="dim")
        text.append(part, style=style)
    text.truncate(width, overflow="ellipsis")
    return text


def build_view(snap: Snapshot, width: int, height: int) -> Group:
    """The whole screen for `snap` in a terminal of `width` x `height` characters."""
    plan = layout(width, height)
    width = plan.width
    parts: list = [_title_line(snap, width), *_note_lines(snap, width, plan.notes),
                   _api_table(snap, width, plan.api_rows)]
    if plan.findings_rows:
        parts += findings_view(snap, width, plan.findings_rows)
    if plan.grid_lines:
        parts.append(_grid(snap, plan))
    parts += [_flight_line(snap, width), _health_line(snap, width)]
    return Group(*parts)
