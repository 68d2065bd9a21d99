"""The terminal view of `kwire stats`: the summary document as rich tables.

Pure functions from the document of kwire.analytics (Aggregator.document()) to rich renderables;
nothing is computed here that the document does not hold, so what the tables show is what
`--json` prints. Latencies are in ms, sizes in binary units; error names are Kafka's; rows are
ordered by what an operator looks for first (most traffic, slowest, most lag). Names from the wire
(client ids, topics, groups) are escaped Text (kwire.render.safe), never rich markup.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from kwire.counts import count
from kwire.render.cuts import more_rows
from kwire.render.safe import wire_text
from kwire.render.times import in_seconds, utc_text
from kwire.render.units import human_bytes

MAX_ROWS = 30


def ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def rate(value: float | None) -> str:
    return "-" if value is None else (f"{value:,.1f}" if value >= 10 else f"{value:.2f}")


def utc(ts: float | None) -> str:
    if ts is None:
        return "-"
    text = utc_text(ts, "%Y-%m-%d %H:%M:%S.%f")
    return text if text.startswith("@") else text[:-3] + " UTC"


def error_text(errors: dict[str, int], limit: int = 3) -> Text:
    if not errors:
        return Text("")
    items = sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))
    text = wire_text(", ".join(f"{name} ×{n:,}" for name, n in items[:limit]), style="red")
    if len(items) > limit:
        text.append(f" +{len(items) - limit:,} more", style="dim red")
    return text


def _latency_cells(fig: dict) -> list[Text]:
    lat = fig["latency_ms"]
    cells = []
    for key in ("p50", "p90", "p99", "max"):
        value = lat[key]
        style = "bold red" if value is not None and value >= 1000 else "yellow" if value is not None and value >= 100 else ""
        cells.append(Text(ms(value), style=style))
    return cells


def _status_text(fig: dict) -> Text:
    text = Text()
    if fig["no_response"]:
        text.append(f"{fig['no_response']:,} unanswered", style="bold red")
    if fig["no_request"]:
        if text:
            text.append(", ")
        text.append(f"{fig['no_request']:,} without request", style="yellow")
    if fig["decode_errors"]:
        if text:
            text.append(", ")
        text.append(count(fig["decode_errors"], "decode error"), style="magenta")
    return text


MAX_WAIT_NOTES = 3  # rows a table's note on waits names


def waits_note(rows: list[tuple[list, dict]]) -> str | None:
    """What a latency table leaves out: the long polls that waited for data (`waits`, answered empty at
    about their MaxWaitMs), counted in its rows' exchanges but not in their latencies."""
    waited = [(labels, fig["waits"], fig) for labels, fig in rows if fig["waits"]["count"]]
    if not waited:
        return None
    total = sum(w["count"] for _, w, _ in waited)
    waited.sort(key=lambda lw: -lw[1]["count"])
    named = ", ".join(f"{_plain(labels[0])} {w['count']:,} of {fig['exchanges']:,} (their p50 {ms(w['p50_ms'])} ms)"
                      for labels, w, fig in waited[:MAX_WAIT_NOTES])
    more = f" and {count(len(waited) - MAX_WAIT_NOTES, 'more row')}" if len(waited) > MAX_WAIT_NOTES else ""
    plural = "s" if total != 1 else ""
    return (f"latencies leave out {total:,} long poll{plural} answered empty after waiting for data "
            f"(`waits` in --json): {named}{more}")


def _plain(label) -> str:
    return (label.plain if isinstance(label, Text) else str(label)).strip()


def _figure_table(title: str, first_columns: list[str], rows: list[tuple[list, dict]], doc: dict | None = None,
                  kind: str = "", noted: list[tuple[list, dict]] | None = None) -> Table:
    """A table of figures, one row each; its caption says the rows it left out and the waits its latencies
    leave out (of `noted`, the rows that do not add up others: default all)."""
    table = Table(title=title, title_justify="left", title_style="bold", header_style="bold cyan",
                  show_edge=False, pad_edge=False, expand=False, caption_justify="left")
    for name in first_columns:
        table.add_column(name, no_wrap=True, max_width=32, overflow="ellipsis")
    for name in ("exchanges", "req/s", "out", "in", "p50 ms", "p90 ms", "p99 ms", "max ms"):
        table.add_column(name, justify="right", no_wrap=True, min_width=5)
    table.add_column("errors / problems", overflow="fold", min_width=16, ratio=1)
    for labels, fig in rows[:MAX_ROWS]:
        problems = error_text(fig["error_codes"])
        status = _status_text(fig)
        if status:
            if problems:
                problems.append("; ")
            problems.append_text(status)
        table.add_row(*labels, f"{fig['exchanges']:,}", rate(fig["requests_per_s"]), human_bytes(fig["request_bytes"]),
                      human_bytes(fig["response_bytes"]), *_latency_cells(fig), problems)
    notes = [note for note in (more_rows(len(rows), MAX_ROWS, "row", doc or {}, kind),
                               waits_note(rows if noted is None else noted)) if note]
    table.caption = "\n".join(notes) or None
    return table


def header(doc: dict) -> Text:
    span = doc["span"]
    totals = doc["totals"]
    lat = totals["latency_ms"]
    t = Text()
    t.append("kwire stats", style="bold")
    t.append(f"  {utc(in_seconds(span['start_ts_ns']))} → {utc(in_seconds(span['end_ts_ns']))}  "
             f"({span['duration_ms'] / 1000:.3f} s)\n", style="dim")
    t.append(count(totals["exchanges"], "exchange"), style="bold")
    t.append(f"  ({totals['paired']:,} paired, {totals['no_response']:,} unanswered, "
             f"{totals['no_request']:,} without request)")
    t.append(f"  {rate(totals['requests_per_s'])} req/s")
    t.append(f"  {human_bytes(totals['request_bytes'])} out, {human_bytes(totals['response_bytes'])} in\n")
    t.append("latency ")
    t.append(f"p50 {ms(lat['p50'])}  p90 {ms(lat['p90'])}  p99 {ms(lat['p99'])}  max {ms(lat['max'])} ms",
             style="yellow")
    t.append(f"  over {count(lat['count'], 'paired exchange')}")
    waits = totals["waits"]
    if waits["count"]:
        t.append(f"\nnot in the latencies: {count(waits['count'], 'long poll')} answered "
                 f"empty after waiting for data (their p50 {ms(waits['p50_ms'])} ms)", style="dim")
    if totals["failed"]:
        t.append(f"\n{count(totals['failed'], 'exchange')} with an error or no partner", style="red")
        if totals["error_codes"]:
            t.append(": ")
            t.append_text(error_text(totals["error_codes"], limit=6))
    return t


def api_table(doc: dict) -> Table:
    rows, leaves = [], []  # leaves: the rows of one version each (an "(all)" row adds up others)
    for api, fig in sorted(doc["apis"].items(), key=lambda kv: (-kv[1]["exchanges"], kv[0])):
        versions = fig["versions"]
        if len(versions) == 1:
            (version, vfig), = versions.items()
            rows.append(([_api_label(api, version)], vfig))
            leaves.append(rows[-1])
            continue
        rows.append(([wire_text(f"{api} (all)", style="bold")], fig))
        for version, vfig in sorted(versions.items(), key=lambda kv: _version_key(kv[0])):
            rows.append(([Text("  ").append_text(_api_label(api, version, style=""))], vfig))
            leaves.append(([_api_label(api, version, style="")], vfig))
    return _figure_table("By api and version", ["api"], rows, doc, "api_versions", noted=leaves)


def _api_label(api: str, version: str, style: str = "bold") -> Text:
    text = wire_text(api, style=style)
    if version.isdigit():
        text.append(f" v{version}", style="dim")
    return text


def _version_key(version: str):
    return (0, int(version)) if version.isdigit() else (1, version)


def group_table(title: str, column: str, groups: dict, doc: dict | None = None, kind: str = "") -> Table:
    rows = [([wire_text(key)], fig) for key, fig in sorted(groups.items(), key=lambda kv: (-kv[1]["exchanges"], kv[0]))]
    return _figure_table(title, [column], rows, doc, kind)


def partition_table(doc: dict) -> Table | None:
    rows = []
    for topic, parts in doc["partitions"].items():
        for partition, p in parts.items():
            rows.append((topic, partition, p))
    if not rows:
        return None
    rows.sort(key=lambda r: (-(r[2]["lag_max"] or -1), r[0], _version_key(r[1])))
    table = Table(title="By topic-partition (most lag first)", title_justify="left", title_style="bold",
                  header_style="bold cyan", show_edge=False, pad_edge=False)
    table.add_column("topic", no_wrap=True, max_width=40, overflow="ellipsis")
    table.add_column("part", justify="right", no_wrap=True, min_width=4)
    share = any(p["acquired"] or p["share_records"] or any(p["acknowledgements"].values()) for _, _, p in rows)
    names = ["fetches", "fetched", "records", "lag last", "lag max", "produced", "records"]
    if share:
        names += ["acquired", "redelivered", "acked"]
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for topic, partition, p in rows[:MAX_ROWS]:
        lag_max = p["lag_max"]
        style = "bold red" if lag_max and lag_max >= 10000 else "yellow" if lag_max else ""
        cells = [wire_text(topic), wire_text(partition), f"{p['fetches']:,}", human_bytes(p["fetch_bytes"]), f"{p['fetch_records']:,}",
                 "-" if p["lag_last"] is None else f"{p['lag_last']:,}",
                 Text("-" if lag_max is None else f"{lag_max:,}", style=style),
                 human_bytes(p["produce_bytes"]), f"{p['produce_records']:,}"]
        if share:
            red = p["redelivered"]
            cells += [f"{p['acquired']:,}", Text(f"{red:,}", style="yellow" if red else ""),
                      f"{sum(p['acknowledgements'].values()):,}"]
        table.add_row(*cells)
    table.caption = more_rows(len(rows), MAX_ROWS, "partition", doc, "partitions")
    return table


def share_table(doc: dict) -> Table | None:
    groups = doc["share_groups"]
    if not groups:
        return None
    table = Table(title="Share groups", title_justify="left", title_style="bold", header_style="bold cyan",
                  show_edge=False, pad_edge=False)
    table.add_column("group", no_wrap=True)
    for name in ("fetches", "acks", "records", "acquired", "redelivered"):
        table.add_column(name, justify="right")
    table.add_column("acknowledgements")
    rows = sorted(groups.items(), key=lambda kv: (-kv[1]["share_fetches"] - kv[1]["share_acknowledges"], kv[0]))
    for group, g in rows[:MAX_ROWS]:
        acks = ", ".join(f"{name} {n:,}" for name, n in g["acknowledgements"].items() if n)
        red = g["redelivered"]
        table.add_row(wire_text(group), f"{g['share_fetches']:,}", f"{g['share_acknowledges']:,}", f"{g['records']:,}",
                      f"{g['acquired']:,}", Text(f"{red:,}", style="yellow" if red else ""), acks or "-")
    table.caption = more_rows(len(rows), MAX_ROWS, "share group", doc, "share_groups")
    return table


def exchange_list(title: str, items: list[dict]) -> Table | None:
    if not items:
        return None
    table = Table(title=title, title_justify="left", title_style="bold", header_style="bold cyan",
                  show_edge=False, pad_edge=False)
    for name, justify in (("time", "left"), ("client", "left"), ("broker", "left"), ("api", "left"),
                          ("corr", "right"), ("client id", "left"), ("latency ms", "right"), ("errors", "left")):
        table.add_column(name, justify=justify, no_wrap=name != "errors")
    for e in items:
        api = f"{e['api']} v{e['api_version']}" if e["api"] is not None else "?"
        when = utc(e["ts_ns"] / 1e9)
        table.add_row(when if when.startswith("@") else when[11:-4], wire_text(e["client"]), wire_text(e["broker"]),
                      wire_text(api), str(e["correlation_id"]),
                      wire_text(e["client_id"]) if e["client_id"] is not None else "-", ms(e["latency_ms"]),
                      wire_text(", ".join(e["error_codes"]), style="red"))
    return table


def stats_view(doc: dict) -> Group:
    from kwire.render.changes_view import changes_table, quorum_table
    from kwire.render.end_to_end_view import commit_lag_table, end_to_end_table
    from kwire.render.groups_view import findings_view, generations_table, groups_table, members_table

    parts: list = [header(doc), Text(""), *findings_view(doc), api_table(doc), Text(""),
                   group_table("By client id", "client id", doc["client_ids"], doc, "client_ids"), Text(""),
                   group_table("By broker", "broker", doc["brokers"], doc, "brokers")]
    for extra in (changes_table(doc), quorum_table(doc), groups_table(doc), generations_table(doc),
                  members_table(doc),
                  partition_table(doc), end_to_end_table(doc), commit_lag_table(doc), share_table(doc),
                  exchange_list("Slowest exchanges", doc["slowest"][:10]),
                  exchange_list(f"Unanswered requests ({doc['unanswered']['count']:,}; the first ones)",
                                doc["unanswered"]["first"][:10])):
        if extra is not None:
            parts += [Text(""), extra]
    return Group(*parts)
