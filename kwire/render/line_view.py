"""`kwire inspect`'s default view: one line per exchange, as tshark prints one line per packet.

`line_parts(ex)` -> the line as (text, Style) pieces, every wire string escaped (kwire.render.safe);
`Lines` prints such lines through rich as they are (no markup, no measuring, no wrapping):

    10:00:05.123456 10.0.0.7:50412 → 10.0.0.2:9092 Fetch v16 corr 7 consumer-1 0.151 ms  orders[0-3] 3 records 1.2 KiB

time of day (UTC), client → broker, api and version, correlation id, client id, latency, what went
wrong (status when not paired, decode errors, error names) and what it carried (kwire.render.brief).
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style

from kwire.model import Exchange
from kwire.render.brief import carried, problems
from kwire.render.safe import term_safe
from kwire.render.times import clock_ns

Part = tuple[str, Style | None]
DIM, CYAN, BOLD, MAGENTA = Style(dim=True), Style(color="cyan"), Style(bold=True), Style(color="magenta")
GREEN, YELLOW, SLOW, WRONG = Style(color="green"), Style(color="yellow"), Style(bold=True, color="yellow"), \
    Style(bold=True, color="red")
ORPHAN = Style(bold=True, color="yellow")


class Lines:
    """Lines laid out in advance, each a list of (text, Style): rich prints them as they are, without
    measuring or wrapping them (the cost of a line is a few segments, not a Text's layout)."""

    __slots__ = ("lines",)

    def __init__(self, lines: list[list[Part]]):
        self.lines = lines

    def __rich_console__(self, console, options):
        end = Segment.line()
        for line in self.lines:
            for text, style in line:
                yield Segment(text, style)
            yield end


def latency_text(latency_ms: float) -> str:
    return f"{latency_ms:.3f} ms" if latency_ms < 1000 else f"{latency_ms / 1000:.3f} s"


def line_parts(ex: Exchange) -> list[Part]:
    """The exchange's line as (text, Style) pieces."""
    parts: list[Part] = [(clock_ns(ex.ts_ns), DIM), (" ", None), (term_safe(ex.client), CYAN), (" → ", None),
                         (term_safe(ex.broker), CYAN), (" ", None)]
    if ex.api is not None:
        parts.append((f"{ex.api} v{ex.api_version}", BOLD))
    else:
        parts.append(("response without its request", ORPHAN))
    parts.append((f" corr {ex.correlation_id}", MAGENTA))
    if ex.client_id:
        parts += [(" ", None), (term_safe(ex.client_id), GREEN)]
    latency = ex.latency_ms
    if latency is not None:
        parts += [(" ", None), (latency_text(latency), SLOW if latency >= 100 else YELLOW)]
    wrong = problems(ex)
    if wrong:
        parts += [("  ", None), (", ".join(wrong), WRONG)]
    what = carried(ex)
    if what:
        parts += [("  ", None), (term_safe("  ".join(what)), None)]
    return parts

