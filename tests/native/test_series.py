"""Series: bounded, mergeable, and the same answer however the data was split."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.native.series import NS, Series


def test_sums_per_second():
    s = Series(("sum", "max"))
    s.add(10 * NS, (1, 5))
    s.add(10 * NS + 999_999_999, (2, 3))
    s.add(11 * NS, (4, 1))
    assert s.resolution == 1
    assert s.rebin(1, 10, 3) == [[3, 5], [4, 1], None]
    assert s.rebin(2, 5, 1) == [[7, 5]]


def test_coarsens_to_stay_within_limit():
    s = Series(("sum",), limit=8)
    for t in range(100):
        s.add(t * NS, (1,))
    assert len(s.buckets) <= 8
    assert s.resolution == 16
    assert sum(cell[0] for cell in s.rebin(16, 0, 7) if cell) == 100


events = st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 50)), max_size=200)


@settings(max_examples=60)
@given(events, st.integers(1, 6), st.integers(0, 2**32))
def test_split_and_merged_equals_one_pass(items, parts, seed):
    whole = Series(("sum", "max"), limit=16)
    for t, v in items:
        whole.add(t * NS, (v, v))
    rng = random.Random(seed)
    pieces = [Series(("sum", "max"), limit=16) for _ in range(parts)]
    shuffled = list(items)
    rng.shuffle(shuffled)
    for t, v in shuffled:
        rng.choice(pieces).add(t * NS, (v, v))
    merged = pieces[0]
    for p in pieces[1:]:
        merged.merge(p)
    assert merged.resolution == whole.resolution
    width = max(whole.resolution, 64)
    assert merged.rebin(width, 0, 5000 // width + 1) == whole.rebin(width, 0, 5000 // width + 1)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 50), st.integers(0, 3)), max_size=200))
def test_add_sums_is_add_of_a_series_of_sums(items):
    added, summed = Series(("sum", "sum"), limit=16), Series(("sum", "sum"), limit=16)
    for t, v, w in items:
        added.add(t * NS, (v, w))
        summed.add_sums(t * NS, (v, w))
    assert (summed.resolution, summed.buckets) == (added.resolution, added.buckets)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 50), st.integers(0, 3), st.integers(0, 9),
                          st.integers(0, 1 << 40)), max_size=200))
def test_add_sums4_is_add_of_a_series_of_four_sums(items):
    added, summed = Series(("sum",) * 4, limit=16), Series(("sum",) * 4, limit=16)
    for t, a, b, c, d in items:
        added.add(t * NS, (a, b, c, d))
        summed.add_sums4(t * NS, a, b, c, d)
    assert (summed.resolution, summed.buckets) == (added.resolution, added.buckets)


def test_a_time_falls_in_the_bucket_python_divides_it_into_at_any_size():
    """Compiled, a time's bucket is divided in C where the time and the resolution fit 63 bits (and the time is
    not negative): the same bucket as Python's floor division, at the edges of that range and past them."""
    from kwire.native.mergeable import TimeHistograms

    edges = [0, 1, NS - 1, NS, 1_764_000_000 * NS + 123, (1 << 63) - 1, 1 << 63, 1 << 70, -1, -NS, -(1 << 63),
             -(1 << 63) - 1]
    for resolution in (1, 2, 3, 1 << 20, (1 << 63) - 1, 1 << 63, 1 << 64):
        series, times = Series(("sum",), limit=1 << 20), TimeHistograms(limit=1 << 20)
        series.resolution = times.resolution = resolution
        for ts in edges:
            series.add(ts, (1,))
            series.add_sums(ts, (1,))
            times.add(ts, 5, "Produce")
        expected = {ts // NS // resolution for ts in edges}
        assert set(series.buckets) == expected and set(times.buckets) == expected
        assert all(type(k) is int for k in series.buckets)
    four = Series(("sum",) * 4, limit=1 << 20)
    four.resolution = 3
    for ts in edges:
        four.add_sums4(ts, 1, 2, 3, 4)
    assert set(four.buckets) == {ts // NS // 3 for ts in edges}
