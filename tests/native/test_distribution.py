"""Nearest-rank percentiles and latency histogram buckets."""

import math

from hypothesis import given
from hypothesis import strategies as st

from kwire.native.distribution import (add_value, bucket_bounds, bucket_of, histogram, merge_into,
                                          nearest_rank, percentiles)


def test_nearest_rank_known_values():
    assert nearest_rank(50, 1) == 1
    assert nearest_rank(50, 2) == 1
    assert nearest_rank(50, 3) == 2
    assert nearest_rank(90, 10) == 9
    assert nearest_rank(99, 10) == 10
    assert nearest_rank(99, 100) == 99
    assert nearest_rank(99, 101) == 100
    assert nearest_rank(100, 7) == 7


def test_percentiles_of_small_lists():
    dist = {}
    for v in (5, 1, 4, 2, 3):
        add_value(dist, v)
    n, ps, top = percentiles(dist)
    assert (n, ps, top) == (5, {50: 3, 90: 5, 99: 5}, 5)
    assert percentiles({}) == (0, {}, None)
    assert percentiles({7: 1000}) == (1000, {50: 7, 90: 7, 99: 7}, 7)


@given(st.lists(st.integers(-10, 10**9), min_size=1, max_size=300))
def test_percentiles_match_sorted_list_definition(values):
    dist = {}
    for v in values:
        add_value(dist, v)
    n, ps, top = percentiles(dist)
    ordered = sorted(values)
    assert n == len(values)
    assert top == ordered[-1]
    for p in (50, 90, 99):
        assert ps[p] == ordered[math.ceil(p * n / 100) - 1]


@given(st.lists(st.integers(0, 10**6)), st.lists(st.integers(0, 10**6)))
def test_merge_adds_counts(a, b):
    da, db, whole = {}, {}, {}
    for v in a:
        add_value(da, v)
        add_value(whole, v)
    for v in b:
        add_value(db, v)
        add_value(whole, v)
    merge_into(da, db)
    assert da == whole


def test_histogram_buckets():
    assert bucket_of(0) == 0 and bucket_of(-5) == 0 and bucket_of(1000) == 0
    assert bucket_of(1001) == 1
    assert bucket_bounds(4) == (1682, 2000)
    assert bucket_of(2000) == 4 and bucket_of(2001) == 5
    for k in range(1, 100):
        lo, hi = bucket_bounds(k)
        assert lo < hi and bucket_of(hi) == k and bucket_of(lo + 1) == k
    assert histogram({1000: 2, 1500: 1, 10**6: 3}) == {0: 2, 3: 1, 40: 3}
