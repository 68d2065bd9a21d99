"""The HTML report of `kwire stats --html` (and `kwire spark --html`): one self-contained page.

`html_report(document)` is a pure function of the summary document (kwire.analytics): no scripts, no
fonts or styles from the network, every chart an inline SVG drawn here. The page puts the pictures
an operator wants first: headline figures, request rate and failures over time, traffic over time,
a latency histogram per api (log scale, p50/p90/p99 marked), consumer lag per partition over time,
then the tables (apis, client ids, brokers, partitions, share groups, slowest and unanswered).
Every string from the capture is HTML-escaped.
"""

from __future__ import annotations

import datetime as _dt
import math
from html import escape

from kwire.render.stats_view import human_bytes, ms, rate

PALETTE = ("#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#06b6d4", "#ec4899", "#84cc16",
           "#f97316", "#64748b")
MAX_HISTOGRAMS = 12
MAX_LAG_LINES = 8
MAX_TABLE_ROWS = 50

CSS = """
:root { --fg:#0f172a; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --card:#fff; --bad:#dc2626; --warn:#d97706; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif; color:var(--fg); background:var(--bg); }
header { padding:22px 32px 14px; background:#0f172a; color:#f8fafc; }
header h1 { margin:0; font-size:22px; font-weight:650; letter-spacing:.2px; }
header .sub { color:#94a3b8; margin-top:4px; font-size:13px; }
main { padding:18px 32px 40px; max-width:1400px; }
.kpis { display:grid; grid-template-columns:repeat(auto-fit,minmax(128px,1fr)); gap:12px; margin:-34px 0 18px; }
.kpi { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:12px 14px; box-shadow:0 1px 2px #0f172a10; }
.kpi .v { font-size:22px; font-weight:650; font-variant-numeric:tabular-nums; }
.kpi .l { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.5px; }
.kpi.bad .v { color:var(--bad); }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:16px 18px; margin:0 0 18px; }
section h2 { margin:0 0 4px; font-size:16px; }
section p.note { margin:0 0 10px; color:var(--muted); font-size:12.5px; }
.grid { display:grid; grid-template-columns:repeat(auto-fill,minmax(420px,1fr)); gap:14px; }
.grid.small { grid-template-columns:repeat(auto-fill,minmax(330px,1fr)); }
.panel { border:1px solid var(--line); border-radius:8px; padding:10px 12px 6px; }
.panel h3 { margin:0 0 2px; font-size:13.5px; }
.panel .meta { color:var(--muted); font-size:12px; }
svg { display:block; width:100%; height:auto; }
svg text { font:11px system-ui,sans-serif; fill:#475569; }
table { border-collapse:collapse; width:100%; font-variant-numeric:tabular-nums; }
th, td { padding:5px 8px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
th { color:var(--muted); font-weight:600; font-size:12px; text-transform:uppercase; letter-spacing:.4px; }
th:first-child, td:first-child, td.l, th.l { text-align:left; }
td.err { color:var(--bad); white-space:normal; text-align:left; }
tr.sub td:first-child { padding-left:22px; color:var(--muted); }
.legend { display:flex; flex-wrap:wrap; gap:4px 14px; font-size:12px; color:#334155; margin:4px 0 0; }
.legend i { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:5px; vertical-align:-1px; }
.bar { display:inline-block; height:9px; background:#f59e0b; border-radius:2px; vertical-align:middle; }
footer { color:var(--muted); font-size:12px; padding:0 32px 24px; }
"""


# -- formatting --------------------------------------------------------------------------------


def _utc(ts: float | None, fmt: str = "%Y-%m-%d %H:%M:%S") -> str:
    if ts is None:
        return "-"
    return _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).strftime(fmt)


def _num(n) -> str:
    return "-" if n is None else f"{n:,}"


def _nice_step(span: float, ticks: int = 5) -> float:
    if span <= 0:
        return 1.0
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def _short(n: float) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:.3g}" if n != int(n) else str(int(n))


def _ms_label(value_ms: float) -> str:
    if value_ms >= 1000:
        return f"{value_ms / 1000:g} s"
    if value_ms >= 1:
        return f"{value_ms:g} ms"
    return f"{value_ms * 1000:g} µs"


# -- charts --------------------------------------------------------------------------------


class _Frame:
    """A plot area inside an SVG of width x height with margins for axes."""

    def __init__(self, width=640, height=220, left=52, right=14, top=12, bottom=28):
        self.w, self.h = width, height
        self.x0, self.x1 = left, width - right
        self.y0, self.y1 = height - bottom, top

    def open(self, label: str) -> list[str]:
        return [f'<svg viewBox="0 0 {self.w} {self.h}" role="img" aria-label="{escape(label)}">']


def _y_axis(frame: _Frame, top: float, fmt=_short, integer: bool = False) -> tuple[list[str], float]:
    """Gridlines and labels for 0..top; returns (svg parts, the axis maximum)."""
    step = _nice_step(top if top > 0 else 1, 4)
    if integer:
        step = max(1.0, math.ceil(step))
    ymax = step * math.ceil((top if top > 0 else 1) / step)
    parts = []
    v = 0.0
    while v <= ymax + step / 2:
        y = frame.y0 - (frame.y0 - frame.y1) * v / ymax
        parts.append(f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e2e8f0"/>')
        parts.append(f'<text x="{frame.x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(fmt(v))}</text>')
        v += step
    return parts, ymax


def _time_axis(frame: _Frame, start: int, width_s: int, count: int) -> list[str]:
    parts = []
    total = width_s * count
    if total <= 0:
        return parts
    step = _nice_step(total, 6)
    nice = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
    step = next((s for s in nice if s >= step), step)
    fmt = "%H:%M:%S" if step < 60 else "%H:%M" if total < 2 * 86400 else "%m-%d %H:%M"
    t = math.ceil(start / step) * step
    while t <= start + total:
        x = frame.x0 + (frame.x1 - frame.x0) * (t - start) / total
        anchor = "end" if x > frame.x1 - 24 else "start" if x < frame.x0 + 24 else "middle"
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y0}" y2="{frame.y0 + 4}" stroke="#94a3b8"/>')
        parts.append(f'<text x="{x:.1f}" y="{frame.y0 + 16}" text-anchor="{anchor}">{_utc(t, fmt)}</text>')
        t += step
    parts.append(f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{frame.y0}" y2="{frame.y0}" stroke="#94a3b8"/>')
    return parts


def rate_chart(timeline: dict) -> str:
    """Exchanges per second over time as bars, the failed ones stacked in red on top."""
    width_s, start = timeline["bucket_s"], timeline["start"]
    total, failed = timeline["exchanges"], timeline["failed"]
    count = len(total)
    frame = _Frame()
    parts = frame.open("request rate and failures over time")
    if not count:
        return parts[0] + '<text x="320" y="110" text-anchor="middle">no exchanges</text></svg>'
    rates_ok = [(t - f) / width_s for t, f in zip(total, failed)]
    rates_bad = [f / width_s for f in failed]
    grid, ymax = _y_axis(frame, max(a + b for a, b in zip(rates_ok, rates_bad)))
    parts += grid
    slot = (frame.x1 - frame.x0) / count
    bar = max(slot * 0.82, 1.0)
    for i, (ok, bad) in enumerate(zip(rates_ok, rates_bad)):
        x = frame.x0 + i * slot + (slot - bar) / 2
        h_ok = (frame.y0 - frame.y1) * ok / ymax
        h_bad = (frame.y0 - frame.y1) * bad / ymax
        when = _utc(start + i * width_s, "%H:%M:%S")
        title = f"{when}: {ok + bad:.3g} req/s, {bad:.3g} failed/s"
        if h_ok > 0:
            parts.append(f'<rect x="{x:.1f}" y="{frame.y0 - h_ok:.1f}" width="{bar:.1f}" height="{h_ok:.1f}" '
                         f'fill="#3b82f6"><title>{title}</title></rect>')
        if h_bad > 0:
            parts.append(f'<rect x="{x:.1f}" y="{frame.y0 - h_ok - h_bad:.1f}" width="{bar:.1f}" '
                         f'height="{max(h_bad, 1.5):.1f}" fill="#ef4444"><title>{title}</title></rect>')
    parts += _time_axis(frame, start, width_s, count)
    parts.append("</svg>")
    return "".join(parts)


def _polyline_paths(frame: _Frame, values: list, ymax: float, count: int) -> list[str]:
    """Line segments through the non-null values (a null breaks the line)."""
    slot = (frame.x1 - frame.x0) / count
    paths, current = [], []
    for i, v in enumerate(values):
        if v is None:
            if current:
                paths.append(current)
            current = []
            continue
        x = frame.x0 + (i + 0.5) * slot
        y = frame.y0 - (frame.y0 - frame.y1) * v / ymax
        current.append(f"{x:.1f},{y:.1f}")
    if current:
        paths.append(current)
    return paths


def line_chart(series: list[tuple[str, list, str]], start: int, width_s: int, fmt=_short, label="") -> str:
    """Several series (name, values per bucket or None, colour) over the same time buckets."""
    count = max((len(v) for _, v, _ in series), default=0)
    frame = _Frame()
    parts = frame.open(label)
    if not count:
        return parts[0] + "</svg>"
    top = max((v for _, values, _ in series for v in values if v is not None), default=0)
    grid, ymax = _y_axis(frame, top, fmt)
    parts += grid
    for name, values, colour in series:
        for points in _polyline_paths(frame, values, ymax, count):
            if len(points) == 1:
                x, y = points[0].split(",")
                parts.append(f'<circle cx="{x}" cy="{y}" r="2.5" fill="{colour}"><title>{escape(name)}</title></circle>')
            else:
                parts.append(f'<polyline points="{" ".join(points)}" fill="none" stroke="{colour}" '
                             f'stroke-width="1.8" stroke-linejoin="round"><title>{escape(name)}</title></polyline>')
    parts += _time_axis(frame, start, width_s, count)
    parts.append("</svg>")
    return "".join(parts)


def histogram_chart(buckets: list[list], latency: dict) -> str:
    """A latency histogram on a log time axis with p50, p90 and p99 marked."""
    frame = _Frame(width=440, height=190, left=40, right=24, bottom=30)
    parts = frame.open("latency histogram")
    if not buckets:
        return parts[0] + '<text x="220" y="95" text-anchor="middle">no paired exchanges</text></svg>'
    lo = max(min(b[0] for b in buckets), 0.001)
    hi = max(b[1] for b in buckets)
    lo_dec = math.floor(math.log10(lo))
    hi_dec = math.ceil(math.log10(hi))
    if hi_dec - lo_dec < 2:
        lo_dec = hi_dec - 2
    span = hi_dec - lo_dec

    def x_of(value_ms: float) -> float:
        v = max(value_ms, 10 ** lo_dec)
        return frame.x0 + (frame.x1 - frame.x0) * (math.log10(v) - lo_dec) / span

    grid, ymax = _y_axis(frame, max(b[2] for b in buckets), integer=True)
    parts += grid
    for b_lo, b_hi, n in buckets:
        x0, x1 = x_of(max(b_lo, 10 ** lo_dec)), x_of(b_hi)
        h = (frame.y0 - frame.y1) * n / ymax
        parts.append(f'<rect x="{x0 + 0.4:.1f}" y="{frame.y0 - h:.1f}" width="{max(x1 - x0 - 0.8, 0.8):.1f}" '
                     f'height="{h:.1f}" fill="#6366f1"><title>{_ms_label(b_lo)} – {_ms_label(b_hi)}: '
                     f'{n:,}</title></rect>')
    for d in range(lo_dec, hi_dec + 1):
        x = x_of(10 ** d)
        anchor = "end" if d == hi_dec else "middle"
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y0}" y2="{frame.y0 + 4}" stroke="#94a3b8"/>')
        parts.append(f'<text x="{x:.1f}" y="{frame.y0 + 16}" text-anchor="{anchor}">{_ms_label(10 ** d)}</text>')
    parts.append(f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{frame.y0}" y2="{frame.y0}" stroke="#94a3b8"/>')
    for key, colour in (("p50", "#10b981"), ("p90", "#f59e0b"), ("p99", "#ef4444")):
        value = latency.get(key)
        if value is None:
            continue
        x = x_of(value)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y1}" y2="{frame.y0}" stroke="{colour}" '
                     f'stroke-width="1.5" stroke-dasharray="4 3"><title>{key} {_ms_label(value)}</title></line>')
        parts.append(f'<text x="{x + 3:.1f}" y="{frame.y1 + 10 + 11 * ("p50", "p90", "p99").index(key):.1f}" '
                     f'style="fill:{colour};font-weight:600">{key}</text>')
    parts.append("</svg>")
    return "".join(parts)


# -- page parts ---------------------------------------------------------------------------------


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
        f'<div class="kpi{" bad" if bad else ""}"><div class="v">{escape(v)}</div><div class="l">{escape(l)}</div></div>'
        for l, v, bad in cards) + "</div>"


def _timeline_section(doc: dict) -> str:
    tl = doc["timeline"]
    w = tl["bucket_s"]
    per_s = lambda values: [v / w for v in values]  # noqa: E731
    traffic = line_chart([("bytes out/s", per_s(tl["request_bytes"]), PALETTE[0]),
                          ("bytes in/s", per_s(tl["response_bytes"]), PALETTE[1])],
                         tl["start"], w, fmt=lambda v: _short(v) + "B", label="bytes per second")
    return (f'<section><h2>Request rate and failures over time</h2><p class="note">Exchanges per second in '
            f'{w}-second buckets; red: failed (error code, decode error, or no partner).</p>'
            f'<div class="grid"><div class="panel"><h3>Requests / s</h3>{rate_chart(tl)}'
            f'<div class="legend"><span><i style="background:#3b82f6"></i>ok</span>'
            f'<span><i style="background:#ef4444"></i>failed</span></div></div>'
            f'<div class="panel"><h3>Traffic / s</h3>{traffic}<div class="legend">'
            f'<span><i style="background:{PALETTE[0]}"></i>requests (out)</span>'
            f'<span><i style="background:{PALETTE[1]}"></i>responses (in)</span></div></div></div></section>')


def _histogram_section(doc: dict) -> str:
    apis = sorted(doc["apis"].items(), key=lambda kv: (-kv[1]["latency_ms"]["count"], kv[0]))
    panels = []
    for api, fig in apis[:MAX_HISTOGRAMS]:
        lat = fig["latency_ms"]
        if not lat["count"]:
            continue
        meta = (f'{lat["count"]:,} paired · p50 {ms(lat["p50"])} · p90 {ms(lat["p90"])} · p99 {ms(lat["p99"])} · '
                f'max {ms(lat["max"])} ms')
        panels.append(f'<div class="panel"><h3>{escape(api)}</h3><div class="meta">{meta}</div>'
                      f'{histogram_chart(fig["latency_histogram"], lat)}</div>')
    if not panels:
        return ""
    more = len(apis) - MAX_HISTOGRAMS
    note = f" {more} more apis in the table below." if more > 0 else ""
    return ('<section><h2>Latency by api</h2><p class="note">Exchanges per latency bucket (log scale, 4 buckets '
            f'per doubling); dashed: p50, p90, p99 (nearest rank).{note}</p><div class="grid small">'
            + "".join(panels) + "</div></section>")


def _lag_section(doc: dict) -> str:
    tl = doc["timeline"]
    lagging = [(topic, part, p) for topic, parts in doc["partitions"].items() for part, p in parts.items()
               if p["lag_samples"]]
    if not lagging:
        return ""
    lagging.sort(key=lambda r: (-(r[2]["lag_max"] or 0), r[0], int(r[1]) if r[1].isdigit() else 0))
    shown = lagging[:MAX_LAG_LINES]
    series = [(f"{topic}-{part}", p.get("lag_timeline") or [], PALETTE[i % len(PALETTE)])
              for i, (topic, part, p) in enumerate(shown)]
    legend = "".join(f'<span><i style="background:{c}"></i>{escape(n)}</span>' for n, _, c in series)
    top = max((p["lag_max"] or 0) for _, _, p in lagging) or 1
    rows = "".join(
        f'<tr><td class="l">{escape(topic)}</td><td>{escape(part)}</td><td>{_num(p["lag_last"])}</td>'
        f'<td>{_num(p["lag_max"])}</td><td class="l"><span class="bar" style="width:{160 * (p["lag_max"] or 0) / top:.0f}px">'
        f'</span></td><td>{_num(p["fetch_records"])}</td><td>{human_bytes(p["fetch_bytes"])}</td></tr>'
        for topic, part, p in lagging[:MAX_TABLE_ROWS])
    more = f" (the {MAX_LAG_LINES} with most lag)" if len(lagging) > MAX_LAG_LINES else ""
    return ('<section><h2>Consumer lag per partition</h2><p class="note">HighWatermark minus the FetchOffset '
            f'the consumer asked for, highest sample per {tl["bucket_s"]}-second bucket{more}.</p>'
            f'<div class="grid"><div class="panel"><h3>Lag over time</h3>'
            f'{line_chart(series, tl["start"], tl["bucket_s"], label="lag per partition")}'
            f'<div class="legend">{legend}</div></div><div class="panel"><h3>Lag by partition</h3>'
            '<table><tr><th class="l">topic</th><th>part</th><th>last</th><th>max</th><th></th><th>records</th>'
            f'<th>fetched</th></tr>{rows}</table></div></div></section>')


def _errors(errors: dict) -> str:
    items = sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{escape(k)} ×{n:,}" for k, n in items)


def _figure_row(label: str, fig: dict, cls: str = "") -> str:
    lat = fig["latency_ms"]
    problems = _errors(fig["errors"])
    extra = []
    if fig["no_response"]:
        extra.append(f"{fig['no_response']:,} unanswered")
    if fig["no_request"]:
        extra.append(f"{fig['no_request']:,} without request")
    if fig["decode_errors"]:
        extra.append(f"{fig['decode_errors']:,} decode errors")
    problems = "; ".join(x for x in [problems, ", ".join(extra)] if x)
    return (f'<tr class="{cls}"><td>{escape(label)}</td><td>{fig["exchanges"]:,}</td><td>{rate(fig["requests_per_s"])}</td>'
            f'<td>{human_bytes(fig["request_bytes"])}</td><td>{human_bytes(fig["response_bytes"])}</td>'
            f'<td>{ms(lat["p50"])}</td><td>{ms(lat["p90"])}</td><td>{ms(lat["p99"])}</td><td>{ms(lat["max"])}</td>'
            f'<td class="err">{problems}</td></tr>')


_FIG_HEAD = ('<tr><th class="l">{}</th><th>exchanges</th><th>req/s</th><th>out</th><th>in</th><th>p50 ms</th>'
             '<th>p90 ms</th><th>p99 ms</th><th>max ms</th><th class="l">errors / problems</th></tr>')


def _figure_table(title: str, column: str, rows: list[str]) -> str:
    return (f'<section><h2>{escape(title)}</h2><table>{_FIG_HEAD.format(escape(column))}'
            + "".join(rows[:MAX_TABLE_ROWS * 2]) + "</table></section>")


def _api_rows(doc: dict) -> list[str]:
    rows = []
    for api, fig in sorted(doc["apis"].items(), key=lambda kv: (-kv[1]["exchanges"], kv[0])):
        versions = sorted(fig["versions"].items(), key=lambda kv: (0, int(kv[0])) if kv[0].isdigit() else (1, 0))
        if len(versions) == 1 and versions[0][0].isdigit():
            rows.append(_figure_row(f"{api} v{versions[0][0]}", fig))
            continue
        rows.append(_figure_row(api, fig))
        rows += [_figure_row(f"v{v}" if v.isdigit() else v, vfig, "sub") for v, vfig in versions]
    return rows


def _group_rows(groups: dict) -> list[str]:
    return [_figure_row(k, f) for k, f in sorted(groups.items(), key=lambda kv: (-kv[1]["exchanges"], kv[0]))]


def _exchange_table(title: str, items: list[dict]) -> str:
    if not items:
        return ""
    rows = "".join(
        f'<tr><td>{_utc(e["ts"], "%H:%M:%S")}.{int(round(e["ts"] % 1 * 1e6)) % 1000000:06d}</td>'
        f'<td class="l">{escape(e["client"])}</td><td class="l">{escape(e["broker"])}</td>'
        f'<td class="l">{escape(str(e["api"]))} v{escape(str(e["api_version"]))}</td><td>{e["correlation_id"]}</td>'
        f'<td class="l">{escape(str(e["client_id"]))}</td><td>{ms(e["latency_ms"])}</td>'
        f'<td class="err">{escape(", ".join(e["errors"]))}</td></tr>' for e in items)
    return (f'<section><h2>{escape(title)}</h2><table><tr><th class="l">time (UTC)</th><th class="l">client</th>'
            '<th class="l">broker</th><th class="l">api</th><th>corr</th><th class="l">client id</th>'
            f'<th>latency ms</th><th class="l">errors</th></tr>{rows}</table></section>')


def _share_section(doc: dict) -> str:
    groups = doc["share_groups"]
    if not groups:
        return ""
    rows = "".join(
        f'<tr><td>{escape(g)}</td><td>{f["share_fetches"]:,}</td><td>{f["share_acknowledges"]:,}</td>'
        f'<td>{f["records"]:,}</td><td>{f["acquired"]:,}</td><td>{f["redelivered"]:,}</td>'
        + "".join(f'<td>{n:,}</td>' for n in f["acknowledgements"].values()) + "</tr>"
        for g, f in sorted(groups.items()))
    names = next(iter(groups.values()))["acknowledgements"].keys()
    return ('<section><h2>Share groups</h2><p class="note">Records acquired by ShareFetch, redeliveries '
            '(DeliveryCount &gt; 1), and acknowledgements by type.</p><table><tr><th class="l">group</th>'
            '<th>fetches</th><th>acks</th><th>records</th><th>acquired</th><th>redelivered</th>'
            + "".join(f"<th>{escape(n.lower())}</th>" for n in names) + f"</tr>{rows}</table></section>")


def html_report(doc: dict) -> str:
    span = doc["span"]
    title = "kwire stats"
    sub = (f'{_utc(span["start"])} → {_utc(span["end"])} UTC · {span["seconds"]:,.3f} s · '
           f'{len(doc["brokers"])} brokers · {len(doc["client_ids"])} client ids')
    unanswered = doc["unanswered"]
    from kwire.render.groups_html import findings_section, groups_section

    body = [
        f"<header><h1>{title}</h1><div class=\"sub\">{escape(sub)}</div></header><main>",
        _kpis(doc),
        findings_section(doc),
        _timeline_section(doc),
        _histogram_section(doc),
        _lag_section(doc),
        groups_section(doc),
        _figure_table("By api and version", "api", _api_rows(doc)),
        _figure_table("By client id", "client id", _group_rows(doc["client_ids"])),
        _figure_table("By broker", "broker", _group_rows(doc["brokers"])),
        _share_section(doc),
        _exchange_table("Slowest exchanges", doc["slowest"]),
        _exchange_table(f"Unanswered requests ({unanswered['count']:,}; the first ones)", unanswered["first"]),
        "</main>",
        f'<footer>Generated by kwire from {doc["format"]} · latency percentiles are nearest-rank over every '
        "paired exchange</footer>",
    ]
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{title}</title><style>{CSS}</style></head><body>" + "".join(body) + "</body></html>")
