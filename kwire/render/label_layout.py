"""Where the labels of the HTML report's charts go so that no two overlap: pure geometry in SVG units.

A chart's SVG scales as a whole (its viewBox), so a layout that holds in SVG units holds at every
width the page is shown at, but for the browser rounding a text's line box to whole pixels: the
caller's row height allows for it (kwire.render.html_charts.FLAG_ROW). Text widths are estimated
from the characters (`text_width`), generously (CHAR_EM em a character, wider than a bold digit of
common sans fonts); tests/render/test_html_labels.py measures the boxes Chromium draws.

- `flag_layout(xs, widths, lo, hi)`: labels that name a vertical line at x (a histogram's p50, p90,
  p99), each beside its line (right of it, else left) in one of as many rows above the plot as
  there are labels, the line running up to its label. No two labels overlap, no label covers
  another's line, every label lies within [lo, hi]; of the layouts that do that, the one with the
  labels nearest the plot, right of their lines, in the order given (`_cost`). One always exists
  when each label fits left of its line (x - GAP - width >= lo): the labels by x, one a row, each
  left of its line. With more than MAX_FLAGS labels, or none fitting, ValueError.
- `spaced(boxes)`: which of these boxes (left to right) to draw so that none overlaps the one drawn
  before it; the caller says what it left out.
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

CHAR_EM = 0.8  # estimated width of a character, in em
GAP = 3.0  # between a line and its label
SPACE = 2.0  # between two labels
MAX_FLAGS = 4  # the search tries every row and side: 2 x rows per label


def text_width(text: str, size: float = 11.0) -> float:
    return len(text) * size * CHAR_EM


class Flag(NamedTuple):
    """A label placed: its row above the plot (0 nearest), its side of the line, its box [left, right]."""
    row: int
    anchor: str  # "start": right of the line; "end": left of it
    left: float
    right: float


def _box(x: float, width: float, row: int, anchor: str) -> Flag:
    if anchor == "start":
        return Flag(row, anchor, x + GAP, x + GAP + width)
    return Flag(row, anchor, x - GAP - width, x - GAP)


def _clear(flags: tuple[Flag, ...], xs: list[float]) -> bool:
    """No two boxes in one row overlap; no box lies across the line of a label in its row or above
    (a line runs from the plot up to its own label's row)."""
    for i, a in enumerate(flags):
        for j, b in enumerate(flags):
            if i == j:
                continue
            if a.row == b.row and a.left < b.right + SPACE and b.left < a.right + SPACE:
                return False
            if b.row >= a.row and a.left - 1 <= xs[j] <= a.right + 1:
                return False
    return True


def _cost(flags: tuple[Flag, ...]) -> int:
    """Lower is better: labels near the plot, right of their lines, in one row in the order given."""
    cost = sum(2 * f.row + (f.anchor == "end") for f in flags)
    return cost + sum(1 for i, a in enumerate(flags) for b in flags[i + 1:] if a.row == b.row and a.left > b.left)


def flag_layout(xs: list[float], widths: list[float], lo: float, hi: float) -> list[Flag]:
    """A Flag for each label of `widths` naming the line at the same place of `xs` (see the module)."""
    if len(xs) > MAX_FLAGS:
        raise ValueError(f"{len(xs)} flags: at most {MAX_FLAGS}")
    rows = range(len(xs))
    choices = [[f for row in rows for anchor in ("start", "end")
                if lo <= (f := _box(x, w, row, anchor)).left and f.right <= hi] for x, w in zip(xs, widths)]
    best, best_cost = None, None
    for flags in itertools.product(*choices):
        cost = _cost(flags)
        if (best_cost is None or cost < best_cost) and _clear(flags, xs):
            best, best_cost = list(flags), cost
    if best is None:
        raise ValueError("no layout: a label fits on neither side of its line")
    return best


def spaced(boxes: list[tuple[float, float]]) -> list[int]:
    """Indexes of the boxes (left, right), left to right, to draw: each clear of the one drawn before it."""
    kept: list[int] = []
    for i in sorted(range(len(boxes)), key=lambda i: boxes[i][0]):
        if not kept or boxes[i][0] >= boxes[kept[-1]][1] + SPACE:
            kept.append(i)
    return kept
