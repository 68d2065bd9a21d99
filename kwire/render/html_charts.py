"""The inline SVG charts of the HTML report: pure functions from figures to SVG text.

- `rate_chart(timeline)`: exchanges per second over time as bars, failures stacked in red;
- `time_frame(timeline)`: (start, width) in whole seconds of a document's timeline (its `start_ts_ns`, `bucket_ms`);
- `line_chart(series, start, width_s, steps=)`: several series over the same time buckets, each
  one line through its samples (a bucket without a sample is bridged: lag is a level that holds
  between two measurements); with `steps` each sample spans its bucket, so a lone one is a line too;
- `histogram_chart(buckets, latency, span)`: a latency histogram on a log axis with p50/p90/p99
  marked, their labels in rows above the plot laid out by kwire.render.label_layout (never over
  each other, another's line or the bars, however close the percentiles); small multiples share
  `span` (`histogram_span` of every api) so they compare at a glance.

Every label passes through `esc` (HTML-escaped, control characters shown as kwire.render.safe
shows them); times through kwire.render.times, which never fails on absurd timestamps.
"""

from __future__ import annotations

import math
from html import escape

from kwire.render.label_layout import flag_layout, text_width
from kwire.render.safe import term_safe
from kwire.render.times import utc_text

PALETTE = ("#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#06b6d4", "#ec4899", "#84cc16",
           "#f97316", "#64748b")


def esc(value) -> str:
    """A string from the capture (or anything) as HTML text."""
    return escape(term_safe(value))


def nice_step(span: float, ticks: int = 5) -> float:
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def short(n: float) -> str:
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= div:
            return f"{n / div:.3g}{suffix}"
    return f"{n:.3g}" if n != int(n) else str(int(n))


def ms_label(value_ms: float) -> str:
    if value_ms >= 1000:
        return f"{value_ms / 1000:g} s"
    if value_ms >= 1:
        return f"{value_ms:g} ms"
    return f"{value_ms * 1000:g} µs"


class Frame:
    """A plot area inside an SVG of width x height with margins for axes."""

    def __init__(self, width=640, height=220, left=52, right=14, top=12, bottom=28):
        self.w, self.h = width, height
        self.x0, self.x1 = left, width - right
        self.y0, self.y1 = height - bottom, top

    def open(self, label: str) -> list[str]:
        return [f'<svg viewBox="0 0 {self.w} {self.h}" role="img" aria-label="{esc(label)}">']


def y_axis(frame: Frame, top: float, fmt=short, integer: bool = False) -> tuple[list[str], float]:
    """Gridlines and labels for 0..top; returns (svg parts, the axis maximum)."""
    step = nice_step(top if top > 0 else 1, 4)
    if integer:
        step = max(1.0, math.ceil(step))
    ymax = step * math.ceil((top if top > 0 else 1) / step)
    parts = []
    v = 0.0
    while v <= ymax + step / 2:
        y = frame.y0 - (frame.y0 - frame.y1) * v / ymax
        parts.append(f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e2e8f0"/>')
        parts.append(f'<text x="{frame.x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{esc(fmt(v))}</text>')
        v += step
    return parts, ymax


NICE_SECONDS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def time_axis(frame: Frame, start: int, width_s: int, count: int) -> list[str]:
    parts = []
    total = width_s * count
    if total <= 0:
        return parts
    step = nice_step(total, 6)
    step = next((s for s in NICE_SECONDS if s >= step), step)
    fmt = "%H:%M:%S" if step < 60 else "%H:%M" if total < 2 * 86400 else "%m-%d %H:%M"
    t = math.ceil(start / step) * step
    while t <= start + total:
        x = frame.x0 + (frame.x1 - frame.x0) * (t - start) / total
        anchor = "end" if x > frame.x1 - 24 else "start" if x < frame.x0 + 24 else "middle"
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y0}" y2="{frame.y0 + 4}" stroke="#94a3b8"/>')
        parts.append(f'<text x="{x:.1f}" y="{frame.y0 + 16}" text-anchor="{anchor}">{esc(utc_text(t, fmt))}</text>')
        t += step
    parts.append(f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{frame.y0}" y2="{frame.y0}" stroke="#94a3b8"/>')
    return parts


def time_frame(timeline: dict) -> tuple[int, int]:
    """(first bucket's start, bucket width), whole seconds, of a timeline of the stats document (the document's
    `timeline`, `end_to_end.timeline`; one without a sample starts at 0)."""
    start = timeline["start_ts_ns"]
    return (start // 1_000_000_000 if start is not None else 0), timeline["bucket_ms"] // 1000


def rate_chart(timeline: dict) -> str:
    """Exchanges per second over time as bars, the failed ones stacked in red on top."""
    start, width_s = time_frame(timeline)
    total, failed = timeline["exchanges"], timeline["failed"]
    count = len(total)
    frame = Frame()
    parts = frame.open("request rate and failures over time")
    if not count:
        return parts[0] + '<text x="320" y="110" text-anchor="middle">no exchanges</text></svg>'
    rates_ok = [(t - f) / width_s for t, f in zip(total, failed)]
    rates_bad = [f / width_s for f in failed]
    grid, ymax = y_axis(frame, max(a + b for a, b in zip(rates_ok, rates_bad)))
    parts += grid
    slot = (frame.x1 - frame.x0) / count
    bar = max(slot * 0.82, 1.0)
    for i, (ok, bad) in enumerate(zip(rates_ok, rates_bad)):
        x = frame.x0 + i * slot + (slot - bar) / 2
        h_ok = (frame.y0 - frame.y1) * ok / ymax
        h_bad = (frame.y0 - frame.y1) * bad / ymax
        title = f"{esc(utc_text(start + i * width_s, '%H:%M:%S'))}: {ok + bad:.3g} req/s, {bad:.3g} failed/s"
        if h_ok > 0:
            parts.append(f'<rect x="{x:.1f}" y="{frame.y0 - h_ok:.1f}" width="{bar:.1f}" height="{h_ok:.1f}" '
                         f'fill="#3b82f6"><title>{title}</title></rect>')
        if h_bad > 0:
            parts.append(f'<rect x="{x:.1f}" y="{frame.y0 - h_ok - h_bad:.1f}" width="{bar:.1f}" '
                         f'height="{max(h_bad, 1.5):.1f}" fill="#ef4444"><title>{title}</title></rect>')
    parts += time_axis(frame, start, width_s, count)
    parts.append("</svg>")
    return "".join(parts)


def _points(frame: Frame, values: list, ymax: float, count: int, steps: bool) -> list[str]:
    """"x,y" through every non-null value, in order: at the middle of its bucket, or (`steps`) along the
    bucket's whole width, so that even a lone sample is a line."""
    slot = (frame.x1 - frame.x0) / count
    points = []
    for i, v in enumerate(values):
        if v is None:
            continue
        y = frame.y0 - (frame.y0 - frame.y1) * v / ymax
        if steps:
            points += [f"{frame.x0 + i * slot:.1f},{y:.1f}", f"{frame.x0 + (i + 1) * slot:.1f},{y:.1f}"]
        else:
            points.append(f"{frame.x0 + (i + 0.5) * slot:.1f},{y:.1f}")
    return points


def line_chart(series: list[tuple[str, list, str]], start: int, width_s: int, fmt=short, label="",
               steps: bool = False) -> str:
    """Several series (name, values per bucket or None, colour) over the same time buckets, one line
    each; `steps`: each value drawn across its bucket (a bucket's figure holds for the whole bucket)."""
    count = max((len(v) for _, v, _ in series), default=0)
    frame = Frame()
    parts = frame.open(label)
    if not count:
        return parts[0] + "</svg>"
    top = max((v for _, values, _ in series for v in values if v is not None), default=0)
    grid, ymax = y_axis(frame, top, fmt)
    parts += grid
    for name, values, colour in series:
        points = _points(frame, values, ymax, count, steps)
        title = f"<title>{esc(name)}</title>"
        if len(points) > 1:
            parts.append(f'<polyline class="series" points="{" ".join(points)}" fill="none" stroke="{colour}" '
                         f'stroke-width="2" stroke-linejoin="round">{title}</polyline>')
        elif points:
            x, y = points[0].split(",")
            parts.append(f'<circle cx="{x}" cy="{y}" r="2.5" fill="{colour}">{title}</circle>')
    parts += time_axis(frame, start, width_s, count)
    parts.append("</svg>")
    return "".join(parts)


def histogram_span(histograms) -> tuple[int, int]:
    """(lowest, highest) power of ten that holds every bucket of these histograms: the shared x axis of
    small multiples; at least two decades."""
    los = [max(b[0], 0.001) for buckets in histograms for b in buckets]
    his = [b[1] for buckets in histograms for b in buckets]
    if not los:
        return -1, 1
    lo_dec = math.floor(math.log10(min(los)))
    hi_dec = math.ceil(math.log10(max(his)))
    if hi_dec - lo_dec < 2:
        lo_dec = hi_dec - 2
    return lo_dec, hi_dec


PERCENTILES = (("p50", "#10b981"), ("p90", "#f59e0b"), ("p99", "#ef4444"))
# A row of percentile labels above a histogram: an 11-unit font's line box is 12.5 units, and the browser
# rounds it up to whole pixels (a panel 250 pixels wide has 1.44 units a pixel): 15 holds it at any width.
FLAG_ROW = 15
FLAG_BASE = 13  # row 0's baseline above the plot: its box clear of the y axis' top label


def _percentile_marks(frame: Frame, latency: dict, x_of) -> list[str]:
    """A dashed line at each of p50, p90, p99 and its label, in rows above the plot that
    kwire.render.label_layout.flag_layout chooses so that no label overlaps another or its line."""
    marks = [(key, colour, latency[key]) for key, colour in PERCENTILES if latency.get(key) is not None]
    xs = [x_of(value) for _, _, value in marks]
    flags = flag_layout(xs, [text_width(key) for key, _, _ in marks], 2, frame.w - 2)
    parts = []
    for (key, colour, value), x, flag in zip(marks, xs, flags):
        baseline = frame.y1 - FLAG_BASE - FLAG_ROW * flag.row
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{baseline - 9:.1f}" y2="{frame.y0}" stroke="{colour}" '
                     f'stroke-width="1.5" stroke-dasharray="4 3"><title>{key} {ms_label(value)}</title></line>')
        text_x = flag.left if flag.anchor == "start" else flag.right
        parts.append(f'<text class="pct" x="{text_x:.1f}" y="{baseline:.1f}" text-anchor="{flag.anchor}" '
                     f'style="fill:{colour};font-weight:600"><title>{key} {ms_label(value)}</title>{key}</text>')
    return parts


def histogram_chart(buckets: list[list], latency: dict, span: tuple[int, int] | None = None) -> str:
    """A latency histogram on a log time axis (decades `span`, default: its own) with p50, p90, p99
    named in rows above the plot (one a label at most)."""
    frame = Frame(width=360, height=198, left=34, right=16, top=FLAG_BASE + FLAG_ROW * len(PERCENTILES), bottom=28)
    parts = frame.open("latency histogram")
    if not buckets:
        return parts[0] + '<text x="180" y="99" text-anchor="middle">no paired exchanges</text></svg>'
    lo_dec, hi_dec = span or histogram_span([buckets])
    width = hi_dec - lo_dec

    def x_of(value_ms: float) -> float:
        v = min(max(value_ms, 10 ** lo_dec), 10 ** hi_dec)
        return frame.x0 + (frame.x1 - frame.x0) * (math.log10(v) - lo_dec) / width

    grid, ymax = y_axis(frame, max(b[2] for b in buckets), integer=True)
    parts += grid
    for b_lo, b_hi, n in buckets:
        x0, x1 = x_of(b_lo), x_of(b_hi)
        h = (frame.y0 - frame.y1) * n / ymax
        parts.append(f'<rect x="{x0 + 0.4:.1f}" y="{frame.y0 - h:.1f}" width="{max(x1 - x0 - 0.8, 0.8):.1f}" '
                     f'height="{h:.1f}" fill="#6366f1"><title>{ms_label(b_lo)} – {ms_label(b_hi)}: '
                     f'{n:,}</title></rect>')
    for d in range(lo_dec, hi_dec + 1):
        x = x_of(10 ** d)
        anchor = "end" if d == hi_dec else "start" if d == lo_dec else "middle"
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.y0}" y2="{frame.y0 + 4}" stroke="#94a3b8"/>')
        if width <= 6 or (d - lo_dec) % 2 == 0 or d == hi_dec:
            parts.append(f'<text x="{x:.1f}" y="{frame.y0 + 16}" text-anchor="{anchor}">{ms_label(10 ** d)}</text>')
    parts.append(f'<line x1="{frame.x0}" x2="{frame.x1}" y1="{frame.y0}" y2="{frame.y0}" stroke="#94a3b8"/>')
    parts += _percentile_marks(frame, latency, x_of)
    parts.append("</svg>")
    return "".join(parts)
