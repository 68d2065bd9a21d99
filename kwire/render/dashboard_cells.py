"""The live dashboard's cells: numbers as the dashboard writes them, sparklines, and the words that
say which time a figure covers.

Pure functions of values; shared by kwire.render.dashboard (the screen) and
kwire.render.dashboard_panels (its panels). Every panel title ends with `window_words`: "last N s"
for figures over the window (kwire.live.snapshot says which fields those are), "since start" for
cumulative ones, "now" for what is read at snapshot time.
"""

from __future__ import annotations

from kwire.render.units import human_bytes as fmt_bytes

__all__ = ["LATEST", "NOW", "SINCE_START", "WINDOW", "fmt_bytes", "fmt_count", "fmt_ms", "fmt_rate", "sparkline",
           "window_words"]

SPARK = "▁▂▃▄▅▆▇█"

WINDOW = "window"            # the last `Snapshot.window_s` seconds
SINCE_START = "since start"  # everything counted since the dashboard started
NOW = "now"                  # read when the snapshot was made
LATEST = "latest"            # the latest value seen (since the start)


def window_words(window: str, window_s: float) -> str:
    """How a title names `window`: "last 10 s", "since start", "now", "latest"."""
    if window == WINDOW:
        return f"last {window_s:.0f} s"
    return window


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
