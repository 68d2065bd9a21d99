"""The terminal view of the stats document's `end_to_end` section: a table per topic and consumer.

A pure function of the document (kwire.analytics.end_to_end_doc): from the Produce request on the
wire to the answer that first delivered its offsets to each consumer, p50/p90/p99/max, its
redeliveries, and how far behind in time it fell (the largest lag in time over its partitions); and a
table per group and partition of the lag in time of its commits (how old the record at its committed
offset was when the commit was accepted). Names from the wire are escaped Text (kwire.render.safe).
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from kwire.counts import count
from kwire.render.safe import wire_text

MAX_ROWS = 30


def _ms(value) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}" if value >= 1 else f"{value:.3f}"


def _caption(section: dict, shown: int) -> str | None:
    words = []
    rows = len(section["consumers"])
    if rows > shown:
        words.append(f"{count(rows - shown, 'more consumer')} in --json")
    bounds = section["bounds"]
    for kind, noun in (("writes", "write"), ("reads", "delivery")):
        folded = bounds[kind]["seen"] - bounds[kind]["kept"]
        if folded > 0:
            words.append(f"{count(folded, noun)} past the cap of {bounds[kind]['cap']:,} not matched")
    unmatched = sum(row["unmatched"] for row in section["consumers"])
    if unmatched:
        words.append(f"{count(unmatched, 'answer')} delivered offsets no Produce seen wrote")
    return "; ".join(words) or None


def end_to_end_table(doc: dict) -> Table | None:
    section = doc.get("end_to_end")
    if not section or not section["consumers"]:
        return None
    rows = sorted(section["consumers"], key=lambda r: (-(r["latency_ms"]["max"] or -1), r["topic"], r["consumer"]))
    table = Table(title="End to end: Produce request to first delivery (ms; slowest first)", title_justify="left",
                  title_style="bold", header_style="bold cyan", show_edge=False, pad_edge=False)
    table.add_column("topic", no_wrap=True, max_width=40, overflow="ellipsis")
    table.add_column("consumer", no_wrap=True, max_width=32, overflow="ellipsis")
    for name in ("parts", "delivered", "again", "p50", "p90", "p99", "max", "time lag max"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in rows[:MAX_ROWS]:
        latency = row["latency_ms"]
        name = wire_text(row["consumer"])
        if row["kind"] == "share":
            name = Text("share ") + name
        lag = row["time_lag_max_ms"]
        table.add_row(wire_text(row["topic"]), name, f"{row['partitions']:,}", f"{row['deliveries']:,}",
                      Text(f"{row['redeliveries']:,}", style="yellow" if row["redeliveries"] else ""),
                      _ms(latency["p50"]), _ms(latency["p90"]), _ms(latency["p99"]),
                      Text(_ms(latency["max"]), style="bold red" if (latency["max"] or 0) >= 1000 else ""),
                      Text(_ms(lag), style="yellow" if (lag or 0) >= 1000 else ""))
    table.caption = _caption(section, min(len(rows), MAX_ROWS))
    return table


def commit_lag_table(doc: dict) -> Table | None:
    section = doc.get("end_to_end")
    if not section or not section.get("commits"):
        return None
    rows = sorted(section["commits"], key=lambda r: (-(r["time_lag_ms"]["max"] or -1), r["group"], r["topic"],
                                                     r["partition"]))
    table = Table(title="Committed offsets: lag in time (ms; most behind first)", title_justify="left",
                  title_style="bold", header_style="bold cyan", show_edge=False, pad_edge=False)
    table.add_column("group", no_wrap=True, max_width=32, overflow="ellipsis")
    table.add_column("topic", no_wrap=True, max_width=40, overflow="ellipsis")
    for name in ("part", "commits", "offset last", "time lag last", "time lag max"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in rows[:MAX_ROWS]:
        lag = row["time_lag_ms"]
        table.add_row(wire_text(row["group"]), wire_text(row["topic"]), str(row["partition"]), f"{row['commits']:,}",
                      str(row["offset_last"]), _ms(lag["last"]),
                      Text(_ms(lag["max"]), style="yellow" if (lag["max"] or 0) >= 1000 else ""))
    words = []
    if len(rows) > MAX_ROWS:
        words.append(f"{count(len(rows) - MAX_ROWS, 'more partition')} in --json")
    bounds = section["bounds"]["commits"]
    if bounds["seen"] > bounds["kept"]:
        words.append(f"{count(bounds['seen'] - bounds['kept'], 'commit')} past the cap of {bounds['cap']:,} not matched")
    table.caption = "; ".join(words) or None
    return table
