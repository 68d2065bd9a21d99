"""Chart labels that never overlap (kwire.render.label_layout, and its use in kwire.render.html_charts'
histograms and kwire.render.groups_html's timeline), checked with geometry of the test's own: every
label a rectangle (its row's height, its estimated width), every percentile line a segment from the
plot up to its label's row; no two rectangles meet, no segment crosses another label's rectangle.
The real boxes Chromium draws are checked in tests/render/test_html_labels.py."""

from __future__ import annotations

import random
import re

import pytest

from kwire.render.groups_html import groups_section
from kwire.render.html_charts import FLAG_ROW, histogram_chart, text_width
from kwire.render.label_layout import GAP, flag_layout, spaced

KEYS = ("p50", "p90", "p99")


def rectangles(xs, widths, flags):
    """(x0, x1, y0, y1) of each label, rows FLAG_ROW high, row 0 just above the plot (y 0)."""
    out = []
    for x, w, f in zip(xs, widths, flags):
        x0 = x + GAP if f.anchor == "start" else x - GAP - w
        assert (f.left, f.right) == pytest.approx((x0, x0 + w))
        out.append((x0, x0 + w, f.row * FLAG_ROW, (f.row + 1) * FLAG_ROW))
    return out


def meet(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]


def assert_clear(xs, widths, flags, lo, hi):
    boxes = rectangles(xs, widths, flags)
    for i, a in enumerate(boxes):
        assert lo <= a[0] and a[1] <= hi, (i, a)
        for j, b in enumerate(boxes):
            if i != j:
                assert not meet(a, b), (i, j, a, b)
                line = (xs[j] - 0.5, xs[j] + 0.5, 0, boxes[j][3] - 1)  # from the plot up into its own row
                assert not meet(a, line), (i, j, "label over the line of", KEYS[j % 3])


def cases(seed: int, count: int):
    """Three sorted percentiles on plots from 30 to 400 units wide, bunched together or spread."""
    rng = random.Random(seed)
    for _ in range(count):
        lo, width = 2.0, rng.choice([30, 45, 60, 90, 150, 250, 400])
        hi = lo + 34 + width  # a histogram's frame: 34 units of axis left of the plot
        spread = rng.choice([0, 0.5, 3, 10, 30, width])
        first = rng.uniform(lo + 34, hi)
        xs = sorted(min(max(first + rng.uniform(-spread, spread), lo + 34), hi) for _ in KEYS)
        yield xs, lo, hi


@pytest.mark.parametrize("seed", range(4))
def test_percentile_labels_never_overlap_on_narrow_plots(seed):
    widths = [text_width(k) for k in KEYS]
    for xs, lo, hi in cases(seed, 500):
        assert_clear(xs, widths, flag_layout(xs, widths, lo, hi), lo, hi)


def test_one_line_for_all_three_stacks_them_beside_it():
    widths = [text_width(k) for k in KEYS]
    flags = flag_layout([100, 100, 100], widths, 2, 346)
    assert_clear([100] * 3, widths, flags, 2, 346)
    assert sorted(f.row for f in flags) == [0, 0, 1]  # p50 left of the line, p90 right, p99 above


def test_at_the_right_edge_labels_go_left_of_their_lines():
    widths = [text_width(k) for k in KEYS]
    xs = [330, 340, 344]
    flags = flag_layout(xs, widths, 2, 346)
    assert_clear(xs, widths, flags, 2, 346)
    assert all(f.anchor == "end" for f in flags)


def test_spread_percentiles_share_the_row_next_to_the_plot():
    widths = [text_width(k) for k in KEYS]
    flags = flag_layout([60, 150, 300], widths, 2, 346)
    assert [(f.row, f.anchor) for f in flags] == [(0, "start")] * 3


def test_no_room_on_either_side_is_an_error_not_an_overlap():
    with pytest.raises(ValueError):
        flag_layout([10, 10], [30, 30], 0, 40)


def test_spaced_keeps_labels_clear_of_the_one_before_and_drops_only_those_that_meet_it():
    rng = random.Random(7)
    boxes = [(x, x + 12) for x in sorted(rng.uniform(0, 200) for _ in range(60))]
    kept = spaced(boxes)
    for a, b in zip(kept, kept[1:]):
        assert boxes[a][1] < boxes[b][0]
    for i in set(range(len(boxes))) - set(kept):
        before = max(k for k in kept if boxes[k][0] <= boxes[i][0])
        assert boxes[i][0] < boxes[before][1] + 2


def svg_flags(svg: str):
    """(key, x of its line, text x, anchor, baseline) of each percentile of a histogram's SVG."""
    lines = {k: float(x) for x, k in re.findall(r'<line x1="([\d.]+)"[^>]*stroke-dasharray="4 3"><title>(p\d\d) ', svg)}
    texts = re.findall(r'<text class="pct" x="([\d.]+)" y="([\d.]+)" text-anchor="(\w+)"[^>]*><title>(p\d\d) ', svg)
    return [(k, lines[k], float(x), anchor, float(y)) for x, y, anchor, k in texts]


def test_histogram_draws_its_percentile_labels_above_the_plot_and_apart():
    buckets = [[0.1, 0.12, 5], [0.12, 0.14, 9], [4000, 5000, 3]]
    for latency in ({"p50": 0.12, "p90": 0.13, "p99": 0.131}, {"p50": 4500, "p90": 4600, "p99": 4999},
                    {"p50": 0.001, "p90": 0.001, "p99": 0.001}):
        svg = histogram_chart(buckets, latency, (-2, 4))
        marks = svg_flags(svg)
        assert [k for k, *_ in marks] == list(KEYS)
        plot_top = min(float(y) for y in re.findall(r'<line x1="34" x2="344" y1="([\d.]+)"', svg))
        boxes = []
        for key, line_x, text_x, anchor, baseline in marks:
            assert baseline < plot_top  # above the bars
            w = text_width(key)
            x0 = text_x if anchor == "start" else text_x - w
            boxes.append((x0, x0 + w, baseline - 9, baseline + 3))
        for i, a in enumerate(boxes):
            assert 0 <= a[0] and a[1] <= 360
            for b in boxes[i + 1:]:
                assert not meet(a, b), (latency, a, b)


def test_generation_numbers_that_would_overlap_are_left_out_and_said_so():
    group = {"protocol": "consumer", "coordinator": "b:9092", "rebalance_in_progress": 0,
             "members": {"m-1": {"client_id": "c", "client": "h:1", "first_seen_ts_ns": 0,
                                 "last_seen_ts_ns": 600 * 10**9, "left": None}},
             "generations": [{"generation": g, "start_ts_ns": (100_000 + 200 * g) * 10**6,
                              "end_ts_ns": (100_000 + 200 * (g + 1)) * 10**6, "members": [{"member_id": "m-1"}]}
                             for g in range(1, 13)]}
    page = groups_section({"span": {"start_ts_ns": 0, "end_ts_ns": 600 * 10**9}, "groups": {"g": group}})
    numbers = re.findall(r'<text x="([\d.]+)" y="10">(\d+)</text>', page)
    assert 1 <= len(numbers) < 12
    boxes = sorted((float(x), float(x) + text_width(n)) for x, n in numbers)
    assert all(a[1] < b[0] for a, b in zip(boxes, boxes[1:]))
    assert f"{12 - len(numbers)} generation numbers left out" in page
