"""The HTML report of `kwire stats --html` (and `kwire spark --html`): one self-contained page.

`html_report(document, sources=..., filters=...)` is a pure function of the summary document
(kwire.analytics), the capture files it was made from and the filters as options: no scripts, no
fonts or styles from the network, every chart an inline SVG (kwire.render.html_charts). The page
puts first what an operator wants first: what was read and how it was filtered, headline figures,
request rate and failures over time, traffic over time, a latency histogram for every api (small
multiples on one latency axis, slowest p99 first), consumer lag per partition as lines over time,
then the tables (apis, client ids, brokers, partitions, share groups, slowest and unanswered).

Layout: every card fits its width. Tables sit in a `.tw` box that scrolls sideways rather than
overflow the card, and at 900 pixels and wider they fit without scrolling: names wrap anywhere,
numbers never wrap (tests/render/test_html_layout.py checks both widths in headless Chromium).
Every string from the capture is escaped (html_charts.esc).
"""

from __future__ import annotations

from kwire.render.html_charts import (PALETTE, esc, histogram_chart, histogram_span, line_chart, rate_chart, short,
                                     time_frame)
from kwire.render.html_tables import exchange_table, figure_table, lag_table, partition_table, share_table
from kwire.render.stats_view import human_bytes, ms, rate
from kwire.render.times import in_seconds, utc_text

MAX_LAG_LINES = 8
MAX_SOURCES = 6  # capture files named in the header; the rest are counted

CSS = """
:root { --fg:#0f172a; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --card:#fff; --bad:#dc2626; --warn:#d97706; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
header { padding:22px 32px 44px; background:#0f172a; color:#f8fafc; }
header h1 { margin:0; font-size:22px; font-weight:650; letter-spacing:.2px; }
header .sub { color:#94a3b8; margin-top:4px; font-size:13px; overflow-wrap:anywhere; }
header dl { display:grid; grid-template-columns:max-content minmax(0,1fr); gap:2px 12px; margin:8px 0 0; font-size:13px; }
header dt { color:#94a3b8; }
header dd { margin:0; color:#e2e8f0; overflow-wrap:anywhere; font-family:ui-monospace,Menlo,Consolas,monospace; font-size:12.5px; }
main { padding:0 32px 40px; max-width:1400px; }
.kpis { display:grid; grid-template-columns:repeat(auto-fit,minmax(128px,1fr)); gap:12px; margin:-30px 0 18px; }
.kpi { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:12px 14px; box-shadow:0 1px 2px #0f172a10; min-width:0; }
.kpi .v { font-size:22px; font-weight:650; font-variant-numeric:tabular-nums; overflow-wrap:anywhere; }
.kpi .l { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.5px; }
.kpi.bad .v { color:var(--bad); }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px; margin:0 0 18px; min-width:0; }
section h2 { margin:0 0 4px; font-size:16px; }
section p.note { margin:0 0 10px; color:var(--muted); font-size:12.5px; }
.grid { display:grid; grid-template-columns:repeat(auto-fit,minmax(min(420px,100%),1fr)); gap:14px; }
.grid.small { grid-template-columns:repeat(auto-fill,minmax(min(250px,100%),1fr)); gap:10px; }
.panel { border:1px solid var(--line); border-radius:8px; padding:10px 12px 6px; min-width:0; }
.panel h3 { margin:0 0 2px; font-size:13.5px; overflow-wrap:anywhere; }
.panel .meta { color:var(--muted); font-size:12px; }
svg { display:block; width:100%; height:auto; }
svg text { font:11px system-ui,sans-serif; fill:#475569; }
.tw { overflow-x:auto; max-width:100%; }
table { border-collapse:collapse; width:100%; font-size:13px; font-variant-numeric:tabular-nums; }
th, td { padding:4px 6px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
th { color:var(--muted); font-weight:600; font-size:11.5px; text-transform:uppercase; letter-spacing:.3px; white-space:normal; }
th:first-child, td:first-child, td.l, th.l { text-align:left; }
td.n { white-space:normal; overflow-wrap:anywhere; min-width:5em; }
td.err { color:var(--bad); white-space:normal; overflow-wrap:anywhere; text-align:left; min-width:6em; }
span.bad { color:var(--bad); }
tr.sub td:first-child { padding-left:20px; color:var(--muted); }
td.barcell { width:22%; min-width:50px; }
.bar { display:block; height:9px; background:#f59e0b; border-radius:2px; }
.legend { display:flex; flex-wrap:wrap; gap:4px 14px; font-size:12px; color:#334155; margin:4px 0 0; overflow-wrap:anywhere; }
.legend i { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:5px; vertical-align:-1px; }
footer { color:var(--muted); font-size:12px; padding:0 32px 24px; }
"""


def _utc(ts, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    return "-" if ts is None else utc_text(ts, fmt)


def _num(n) -> str:
    return "-" if n is None else f"{n:,}"


def _header(doc: dict, sources, filters: str) -> str:
    span = doc["span"]
    sub = (f'{_utc(in_seconds(span["start_ts_ns"]))} → {_utc(in_seconds(span["end_ts_ns"]))} UTC · '
           f'{span["duration_ms"] / 1000:,.3f} s · '
           f'{len(doc["brokers"])} brokers · {len(doc["client_ids"])} client ids')
    sources = list(sources)
    named = ", ".join(esc(s) for s in sources[:MAX_SOURCES])
    if len(sources) > MAX_SOURCES:
        named += f" and {len(sources) - MAX_SOURCES:,} more files"
    rows = []
    if sources:
        rows.append(f"<dt>{'capture' if len(sources) == 1 else 'captures'}</dt><dd>{named}</dd>")
    rows.append(f"<dt>filters</dt><dd>{esc(filters) if filters else 'none: every exchange'}</dd>")
    return (f'<header><h1>kwire stats</h1><div class="sub">{esc(sub)}</div>'
            f'<dl class="what">{"".join(rows)}</dl></header>')


def _kpis(doc: dict) -> str:
    t = doc["totals"]
    lat = t["latency_ms"]
    failed_pct = 100 * t["failed"] / t["exchanges"] if t["exchanges"] else 0
    cards = [
        ("exchanges", _num(t["exchanges"]), False),
        ("requests / s", rate(t["requests_per_s"]), False),
        ("p50 latency", f"{ms(lat['p50'])} ms" if lat["p50"] is not None else "-", False),
        ("p99 latency", f"{ms(lat['p99'])} ms" if lat["p99"] is not None else "-", False),
        (f"failed ({failed_pct:.1f}%)", _num(t["failed"]), t["failed"] > 0),
        ("unanswered", _num(t["no_response"]), t["no_response"] > 0),
        ("bytes out", human_bytes(t["request_bytes"]), False),
        ("bytes in", human_bytes(t["response_bytes"]), False),
    ]
    return '<div class="kpis">' + "".join(
        f'<div class="kpi{" bad" if bad else ""}"><div class="v">{esc(v)}</div><div class="l">{esc(label)}</div></div>'
        for label, v, bad in cards) + "</div>"


def _timeline_section(doc: dict) -> str:
    tl = doc["timeline"]
    start, w = time_frame(tl)
    traffic = line_chart([("bytes out/s", [v / w for v in tl["request_bytes"]], PALETTE[0]),
                          ("bytes in/s", [v / w for v in tl["response_bytes"]], PALETTE[1])],
                         start, w, fmt=lambda v: short(v) + "B", label="bytes per second")
    return (f'<section><h2>Request rate and failures over time</h2><p class="note">Exchanges per second in '
            f'{w}-second buckets; red: failed (error code, decode error, or no partner).</p>'
            f'<div class="grid"><div class="panel"><h3>Requests / s</h3>{rate_chart(tl)}'
            f'<div class="legend"><span><i style="background:#3b82f6"></i>ok</span>'
            f'<span><i style="background:#ef4444"></i>failed</span></div></div>'
            f'<div class="panel"><h3>Traffic / s</h3>{traffic}<div class="legend">'
            f'<span><i style="background:{PALETTE[0]}"></i>requests (out)</span>'
            f'<span><i style="background:{PALETTE[1]}"></i>responses (in)</span></div></div></div></section>')


def _histogram_section(doc: dict) -> str:
    """One histogram per api with paired exchanges, slowest p99 first, on one shared latency axis."""
    apis = [(api, fig) for api, fig in doc["apis"].items() if fig["latency_ms"]["count"]]
    if not apis:
        return ""
    apis.sort(key=lambda kv: (-(kv[1]["latency_ms"]["p99"] or 0), kv[0]))
    span = histogram_span([fig["latency_histogram"] for _, fig in apis])
    panels = []
    for api, fig in apis:
        lat = fig["latency_ms"]
        meta = (f'{lat["count"]:,} paired · p50 {ms(lat["p50"])} · p99 {ms(lat["p99"])} · max {ms(lat["max"])} ms')
        panels.append(f'<div class="panel hist"><h3>{esc(api)}</h3><div class="meta">{meta}</div>'
                      f'{histogram_chart(fig["latency_histogram"], lat, span)}</div>')
    return ('<section id="latency"><h2>Latency by api</h2><p class="note">Every api with paired exchanges, the '
            'slowest p99 first, on one log latency axis (4 buckets per doubling); dashed: p50, p90, p99 '
            f'(nearest rank).</p><div class="grid small">{"".join(panels)}</div></section>')


def _lag_section(doc: dict) -> str:
    start, width = time_frame(doc["timeline"])
    lagging = [(topic, part, p) for topic, parts in doc["partitions"].items() for part, p in parts.items()
               if p["lag_samples"]]
    if not lagging:
        return ""
    lagging.sort(key=lambda r: (-(r[2]["lag_max"] or 0), r[0], int(r[1]) if r[1].isdigit() else 0))
    shown = lagging[:MAX_LAG_LINES]
    series = [(f"{topic}-{part}", p.get("lag_timeline") or [], PALETTE[i % len(PALETTE)])
              for i, (topic, part, p) in enumerate(shown)]
    legend = "".join(f'<span><i style="background:{c}"></i>{esc(n)}</span>' for n, _, c in series)
    more = f" (the {MAX_LAG_LINES} with most lag)" if len(lagging) > MAX_LAG_LINES else ""
    return ('<section id="lag"><h2>Consumer lag per partition</h2><p class="note">HighWatermark minus the '
            f'FetchOffset the consumer asked for, highest sample per {width}-second bucket, one line per '
            f'partition{more}.</p><div class="grid"><div class="panel"><h3>Lag over time</h3>'
            f'{line_chart(series, start, width, label="lag per partition", steps=True)}'
            f'<div class="legend">{legend}</div></div><div class="panel"><h3>Lag by partition</h3>'
            f'{lag_table(lagging)}</div></div></section>')


def html_report(doc: dict, *, sources=(), filters: str = "") -> str:
    """The page for the summary `doc` of the capture files `sources`, filtered by `filters` (as options)."""
    from kwire.render.changes_view import changes_section, quorum_section
    from kwire.render.end_to_end_html import end_to_end_section
    from kwire.render.groups_html import findings_section, groups_section

    unanswered = doc["unanswered"]
    body = [
        _header(doc, sources, filters),
        "<main>",
        _kpis(doc),
        findings_section(doc),
        changes_section(doc),
        quorum_section(doc),
        _timeline_section(doc),
        _histogram_section(doc),
        _lag_section(doc),
        end_to_end_section(doc),
        groups_section(doc),
        figure_table("By api and version", "api", doc, "apis"),
        figure_table("By client id", "client id", doc, "client_ids"),
        figure_table("By broker", "broker", doc, "brokers"),
        partition_table(doc),
        share_table(doc),
        exchange_table("Slowest exchanges", doc["slowest"]),
        exchange_table(f"Unanswered requests ({unanswered['count']:,}; the first ones)", unanswered["first"]),
        "</main>",
        f'<footer>Generated by kwire from {esc(doc["format"])} · latency percentiles are nearest-rank over every '
        "paired exchange</footer>",
    ]
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>kwire stats</title><style>{CSS}</style></head><body>" + "".join(body) + "</body></html>")
