"""The HTML report's end-to-end section: latency and lag in time over the capture's time, and per consumer.

A pure function of the stats document's `end_to_end` section (kwire.analytics.end_to_end_doc, its
`timeline` from kwire.analytics.end_to_end_timeline): two line charts in the style of the report's lag
chart (kwire.render.html_charts.line_chart, each bucket's largest value across its bucket), one line per
consumer (a group's commits under its name), and a table per topic and consumer. Every string from the
capture is escaped (html_charts.esc).
"""

from __future__ import annotations

from kwire.render.html_charts import PALETTE, esc, line_chart, ms_label, time_frame
from kwire.render.stats_view import ms

MAX_ROWS = 30


def _axis_ms(value: float) -> str:
    return "0" if value == 0 else ms_label(value)


def _label(series: dict) -> str:
    return f"{series['name']} (commits)" if series["kind"] == "commits" else \
        f"share {series['name']}" if series["kind"] == "share" else series["name"]


def _chart(title: str, items: list[dict], start: int, width: int, label: str) -> str:
    series = [(_label(s), s["values_ms"], PALETTE[i % len(PALETTE)]) for i, s in enumerate(items)]
    legend = "".join(f'<span><i style="background:{c}"></i>{esc(n)}</span>' for n, _, c in series)
    chart = line_chart(series, start, width, fmt=_axis_ms, label=label, steps=True) if series else \
        '<p class="note">none</p>'
    return f'<div class="panel"><h3>{esc(title)}</h3>{chart}<div class="legend">{legend}</div></div>'


def _table(section: dict) -> str:
    rows = sorted(section["consumers"], key=lambda r: (-(r["latency_ms"]["max"] or -1), r["topic"], r["consumer"]))
    body = "".join(
        f'<tr><td class="n">{esc(r["topic"])}</td><td class="n l">{esc(_label({"kind": r["kind"], "name": r["consumer"]}))}'
        f'</td><td>{r["deliveries"]:,}</td><td>{r["redeliveries"]:,}</td><td>{ms(r["latency_ms"]["p50"])}</td>'
        f'<td>{ms(r["latency_ms"]["p90"])}</td><td>{ms(r["latency_ms"]["p99"])}</td><td>{ms(r["latency_ms"]["max"])}</td>'
        f'<td>{ms(r["time_lag_max_ms"])}</td></tr>' for r in rows[:MAX_ROWS])
    more = f'<p class="note">{len(rows) - MAX_ROWS:,} more in the JSON document</p>' if len(rows) > MAX_ROWS else ""
    return ('<div class="panel"><h3>By topic and consumer (ms)</h3><div class="tw"><table><tr><th class="l">topic</th>'
            '<th class="l">consumer</th><th>delivered</th><th>again</th><th>p50</th><th>p90</th><th>p99</th>'
            f'<th>max</th><th>time lag max</th></tr>{body}</table></div>{more}</div>')


def end_to_end_section(doc: dict) -> str:
    section = doc.get("end_to_end")
    if not section or not (section["consumers"] or section["commits"]):
        return ""
    tl = section["timeline"]
    if tl["start_ts_ns"] is None:
        return ""
    start, width = time_frame(tl)
    counts = tl["series"]
    more = [f"the {counts['cap']} with the largest maxima" for kind in ("latency", "time_lag")
            if counts[kind] > counts["cap"]][:1]
    return ('<section id="end-to-end"><h2>End to end: from write to read</h2><p class="note">Latency: from the '
            'Produce request on the wire to the answer that first delivered its offsets to each consumer, the '
            f'largest per {width}-second bucket (by the answer\'s time). Time lag: how old the oldest record not '
            'yet delivered to the consumer was at its Fetch answers, or (commits) the record at the offset a group '
            f'committed when its commit was accepted, the largest per bucket{"; " + more[0] if more else ""}.</p>'
            '<div class="grid">'
            + _chart("Latency over time", tl["latency"], start, width, "end-to-end latency per consumer")
            + _chart("Time lag over time", tl["time_lag"], start, width, "lag in time per consumer and group")
            + '</div><div class="grid">' + _table(section) + '</div></section>')
