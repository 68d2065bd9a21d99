"""The live dashboard's screen: `build_view(snapshot, width, height)` -> a rich renderable.

A pure function of a kwire.live.snapshot.Snapshot and the terminal size: no clock, no I/O, the
same input draws the same screen. It never draws more than `height` lines or wider than `width`
(every cell is one line, cut with an ellipsis), so rich's Live never scrolls.

Layout, top to bottom: a title line; notes (replay finished, no Kafka seen yet, capture problems);
the table of requests per API (rate, p50/p99 latency, errors, and a sparkline of requests/s when
there is room); a grid of small panels (findings, consumer groups, errors by code, requests in
flight, top clients and topics by bytes, consumer lag, share-group acquisitions, slowest
exchanges), as many columns as the width
allows (two at 80 columns) and as many rows as the height leaves; a capture-health line at the
bottom. At 80x24 every panel gets a few rows; wider and taller screens get more rows, more
columns (p99 history, max latency, bytes) and longer sparklines.
"""

from __future__ import annotations


from rich.console import Group
from rich.table import Table
from rich.text import Text

from kwire.live.snapshot import Snapshot
from kwire.render.groups_view import findings_panel_rows
from kwire.render.safe import term_safe, wire_text
from kwire.render.times import local_clock
from kwire.render.units import human_bytes as fmt_bytes

SPARK = "▁▂▃▄▅▆▇█"
PANEL_WIDTH = 40  # a panel column is at least this wide


# ----------------------------------------------------------------------------------------------
# numbers


def fmt_count(n: float) -> str:
    """1,234 up to 9,999, then 12.3k, 123k, 1.2M, 12.3M, 123M, 1.2G..."""
    n = float(n)
    if abs(n) < 10_000:
        return f"{int(n):,}" if n == int(n) else f"{n:.1f}"
    for unit, size in (("k", 1e3), ("M", 1e6), ("G", 1e9)):
        value = n / size
        if abs(value) >= 999.5 and unit != "G":
            continue
        if abs(value) < 10:
            return f"{value:.1f}{unit}"
        if abs(value) < 1000 or unit == "G":
            return f"{value:.1f}{unit}" if abs(value) < 100 else f"{value:.0f}{unit}"
    return f"{n:.0f}"


def fmt_rate(r: float) -> str:
    if r == 0:
        return "0"
    if r < 10:
        return f"{r:.2f}" if r < 1 else f"{r:.1f}"
    return fmt_count(round(r))


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1:
        return f"{ms:.3f}"
    if ms < 100:
        return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"
    if ms < 100_000:
        return f"{ms:,.0f}"
    return f"{ms / 1000:,.0f}s"


def sparkline(values, width: int) -> str:
    """The last `width` values as bar characters scaled to their maximum; None draws a space."""
    values = list(values)[-width:] if width > 0 else []
    present = [v for v in values if v is not None]
    top = max(present) if present else 0
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        elif top <= 0 or v <= 0:
            out.append(SPARK[0] if v == 0 else " ")
        else:
            out.append(SPARK[min(len(SPARK) - 1, int(v / top * (len(SPARK) - 1) + 0.5))])
    return "".join(out).rjust(width)


# ----------------------------------------------------------------------------------------------
# pieces


def _table(title: str | None = None, **kwargs) -> Table:
    return Table(box=None, padding=(0, 1), pad_edge=False, show_edge=False, show_header=True,
                 header_style="bold", title=title, title_justify="left", title_style="bold cyan",
                 collapse_padding=True, expand=False, **kwargs)


def _col(table: Table, name: str, *, right: bool = False, width: int | None = None, min_width: int | None = None,
         ratio: int | None = None, style: str | None = None) -> None:
    table.add_column(name, justify="right" if right else "left", no_wrap=True, overflow="ellipsis",
                     width=width, min_width=min_width, ratio=ratio, style=style)


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


def _note_lines(snap: Snapshot, width: int, limit: int) -> list[Text]:
    out = []
    for i, note in enumerate(snap.notes[:limit]):
        style = "bold yellow"
        if i < snap.alarms:
            style = "bold red"
        elif i == snap.done:
            style = "bold green"
        text = Text(term_safe(note), style=style, no_wrap=True, overflow="ellipsis")
        text.truncate(width, overflow="ellipsis")
        out.append(text)
    return out


def _api_table(snap: Snapshot, width: int, rows: int):
    """One row per api; every column has a fixed width so the sparklines get exactly what is left."""
    wide = width >= 110
    shown = snap.apis[:rows]
    name_width = max([10] + [len(r.api) for r in shown])
    name_width = min(name_width, 28 if wide else 16)
    columns = [("api", False, name_width), ("req/s", True, 6), ("total", True, 6), ("p50 ms", True, 6),
               ("p99 ms", True, 6)]
    if wide:
        columns += [("max ms", True, 6), ("bytes", True, 9)]
    columns.append(("err", True, 4))
    left = width - sum(w for _, _, w in columns) - len(columns)
    sparks = 2 if wide else 1
    spark_width = min(60, (left - (sparks - 1)) // sparks)
    show_spark = spark_width >= 6
    if show_spark:
        columns.append(("req/s history", False, spark_width))
        if wide:
            columns.append(("p99 history", False, spark_width))
    table = _table(f"requests by api (last {snap.window_s:.0f} s)")
    for name, right, w in columns:
        table.add_column(name, justify="right" if right else "left", no_wrap=True, overflow="ellipsis",
                         width=w, min_width=w, max_width=w)
    for i, (name, _, _) in enumerate(columns):
        if name.endswith("history"):
            table.columns[i].style = "green" if name.startswith("req") else "yellow"
    for row in shown:
        cells = [wire_text(row.api), fmt_rate(row.rate), fmt_count(row.requests), fmt_ms(row.p50_ms), fmt_ms(row.p99_ms)]
        if wide:
            cells += [fmt_ms(row.max_ms), fmt_bytes(row.bytes)]
        cells.append(Text(fmt_count(row.errors), style="bold red") if row.errors else "0")
        if show_spark:
            cells.append(sparkline(row.history, spark_width))
            if wide:
                cells.append(sparkline(row.p99_history, spark_width))
        table.add_row(*cells)
    hidden = len(snap.apis) - rows
    if hidden > 0:
        table.add_row(Text(f"+{hidden} more", style="dim"), *([""] * (len(columns) - 1)))
    if not snap.apis:
        return Group(table, Text("no Kafka requests yet", style="dim"))
    return table


def _health_line(snap: Snapshot, width: int) -> Text:
    h = snap.health
    parts: list[tuple[str, str]] = [
        (f"{fmt_count(h.packets)} pkts", ""),
        (f"{fmt_rate(h.packets_per_s)} pkt/s", ""),
        (fmt_bytes(h.bytes), ""),
    ]
    drops = []
    if h.kernel_drops is not None:
        drops.append(f"kernel {fmt_count(h.kernel_drops)}")
    if snap.kind == "live" or h.queue_drops:
        drops.append(f"queue {fmt_count(h.queue_drops)}")
    if drops:
        parts.append(("drops " + " ".join(drops), "bold red" if h.queue_drops or h.kernel_drops else ""))
    parts.append((f"gaps {fmt_count(h.gaps)}", "bold yellow" if h.gaps else ""))
    parts.append((f"conns {h.connections} open, {h.kafka_connections} kafka", ""))
    if h.decode_errors:
        parts.append((f"decode errors {fmt_count(h.decode_errors)}", "yellow"))
    if h.truncated:
        parts.append((f"truncated {fmt_count(h.truncated)}", "yellow"))
    if h.queue:
        parts.append((f"queued {fmt_count(h.queue)}", ""))
    text = Text("capture: ", style="bold cyan", no_wrap=True, overflow="ellipsis")
    for i, (part, style) in enumerate(parts):
        if i:
            text.append(" · ", style="dim")
        text.append(part, style=style)
    text.truncate(width, overflow="ellipsis")
    return text


def _panel(title: str, headers: list[tuple[str, bool]], rows: list[list], width: int, limit: int,
           show_header: bool) -> Table:
    """A small table of at most `limit` data rows (1 title line, 1 header line when shown)."""
    table = _table(title, width=width)
    table.show_header = show_header
    for i, (name, right) in enumerate(headers):
        _col(table, name, right=right, ratio=None if right else 1)  # text columns share the width
    for row in rows[:limit]:
        table.add_row(*row)
    return table


def _panels(snap: Snapshot, width: int) -> list[tuple[str, list, list]]:
    """(title, headers, rows) of every panel with something to show, most important first."""
    wide = width >= 60
    # Every name from the wire as an escaped Text (a str cell would be read as rich markup).
    errors = [[wire_text(name), Text(fmt_count(n), style="red")] for name, n in snap.errors]
    clients = [[wire_text(label), fmt_bytes(n)] for label, n in snap.clients]
    topics = [[wire_text(label), fmt_bytes(n)] for label, n in snap.topics]
    lag = [[wire_text(f"{r.topic}[{r.partition}]"), fmt_count(r.lag)] + ([fmt_count(r.lag_max)] if wide else [])
           for r in snap.lag]
    share = [[wire_text(r.group), fmt_count(r.acquired),
              Text(fmt_count(r.redelivered), style="yellow" if r.redelivered else "")]
             + ([fmt_count(r.acknowledged)] if wide else []) for r in snap.share]
    slow = [[wire_text(s.api), fmt_ms(s.latency_ms), wire_text(s.client_id or s.client)] for s in snap.slowest]
    findings, groups = findings_panel_rows(snap, wide)
    panels = [
        ("findings", [("finding", False)], findings),
        ("consumer groups", [("group", False), ("gen", True), ("members", True)]
         + ([("expired", True)] if wide else []), groups),
        ("errors by code", [("code", False), ("count", True)], errors),
        ("consumer lag (Fetch)", [("partition", False), ("lag", True)] + ([("max", True)] if wide else []), lag),
        ("share groups", [("group", False), ("acquired", True), ("redeliv", True)]
         + ([("acked", True)] if wide else []), share),
        ("slowest recent", [("api", False), ("ms", True), ("client", False)], slow),
        ("top clients by bytes", [("client", False), ("bytes", True)], clients),
        ("top topics by bytes", [("topic", False), ("bytes", True)], topics),
    ]
    return [p for p in panels if p[2]]


def _fill(needs: list[int], room: int) -> list[int]:
    """Rows for each panel: one each, then one more at a time round-robin, within `room`."""
    given = [0] * len(needs)
    while room > 0:
        progressed = False
        for i, need in enumerate(needs):
            if room > 0 and given[i] < need:
                given[i] += 1
                room -= 1
                progressed = True
        if not progressed:
            break
    return given


def _panel_grid(snap: Snapshot, width: int, height: int):
    """Panels packed into columns within `height` lines; returns (renderable or None, lines used)."""
    if height < 2:
        return None, 0
    ncols = max(1, min(4, width // PANEL_WIDTH))
    col_width = (width - (ncols - 1)) // ncols
    panels = _panels(snap, col_width)
    if not panels:
        return None, 0
    # Deal panels to the column with the least wanted height, then share each column's lines.
    columns: list[list[tuple]] = [[] for _ in range(ncols)]
    wanted = [0] * ncols
    for panel in panels:
        best = min(range(ncols), key=lambda c: wanted[c])
        header = len(panel[1]) > 2
        columns[best].append((panel, header))
        wanted[best] += 1 + header + min(len(panel[2]), 8)
    cells = []
    used = 0
    for column in columns:
        # Drop the least important panels of a column that cannot give each one row.
        while column and sum(1 + h + 1 for _, h in column) > height:
            column.pop()
        if not column:
            cells.append(Text(""))
            continue
        room = height - sum(1 + h for _, h in column)
        rows = _fill([len(p[2]) for p, _ in column], room)
        tables = [_panel(p[0], p[1], p[2], col_width, n, h) for (p, h), n in zip(column, rows)]
        used = max(used, sum(1 + h + n for (_, h), n in zip(column, rows)))
        cells.append(Group(*tables))
    grid = Table.grid(padding=(0, 1), expand=False)
    for _ in range(ncols):
        grid.add_column(width=col_width, no_wrap=True, overflow="ellipsis", vertical="top")
    grid.add_row(*cells)
    return grid, used


def _flight_line(snap: Snapshot, width: int) -> Text:
    text = Text("requests: ", style="bold cyan", no_wrap=True, overflow="ellipsis")
    text.append(f"in flight {fmt_count(snap.in_flight)}")
    if snap.oldest_in_flight_ms is not None:
        text.append(f" (oldest {fmt_ms(snap.oldest_in_flight_ms)} ms)")
    text.append(" · ", style="dim")
    text.append(f"unanswered {fmt_count(snap.unanswered)}", style="bold yellow" if snap.unanswered else "")
    text.append(" · ", style="dim")
    text.append(f"responses without request {fmt_count(snap.orphans)}")
    text.truncate(width, overflow="ellipsis")
    return text


def build_view(snap: Snapshot, width: int, height: int):
    """The whole screen for `snap` in a terminal of `width` x `height` characters."""
    width = max(20, width)
    height = max(6, height)
    parts: list = [_title_line(snap, width)]
    notes = _note_lines(snap, width, 2 if height < 30 else 4)
    parts += notes
    room = height - 1 - len(notes) - 2  # title, notes; in-flight and health lines at the bottom
    # The api table: a title and a header line, then rows; about half the room goes to panels.
    n = len(snap.apis)
    rows = max(1, min(n, max(4, room // 2 - 2) if room >= 12 else room - 2))
    more = 1 if n > rows or n == 0 else 0
    if n > rows and rows > 1:
        rows -= 1  # room for the "+N more" line
    parts.append(_api_table(snap, width, rows))
    api_lines = 2 + min(n, rows) + more
    grid, grid_lines = _panel_grid(snap, width, room - api_lines)
    if grid is not None:
        parts.append(grid)
    spare = room - api_lines - grid_lines
    if spare > 0:
        parts.append(Text("\n" * (spare - 1)))
    parts.append(_flight_line(snap, width))
    parts.append(_health_line(snap, width))
    return Group(*parts)
