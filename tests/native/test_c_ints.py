"""kwire/native/c_ints.py, the pure build's twin of kwire/native/c_ints.pxd: a time's bucket is Python's floor
division for every int, and the dict look-up is dict's. The C ones run where the compiled analytics call them
(kwire.native.mergeable, series); tests/test_compiled.py holds both builds to the same bytes on every
committed capture, and tests/native/test_series.py and test_mergeable.py run on either."""

from __future__ import annotations

import random

from kwire.native.mergeable import Capped, TimeHistograms, capped_get
from kwire.native.series import Series
from kwire.native import c_ints

NS = 1_000_000_000


def test_a_bucket_is_floor_division_for_every_int():
    rng = random.Random(7)
    times = [0, 1, NS - 1, NS, -1, -NS, -NS - 1, (1 << 63) - 1, 1 << 63, -(1 << 63), 1 << 80, -(1 << 80)]
    times += [rng.randrange(-(1 << 70), 1 << 70) for _ in range(200)]
    for ts in times:
        for resolution in (1, 2, 3, 7, 1024, (1 << 62) + 1, -1, -3):
            assert c_ints._time_bucket(ts, resolution) == ts // NS // resolution, (ts, resolution)


def test_the_analytics_bucket_times_as_python_divides():
    """Whichever build runs: a time past 63 bits or before the epoch goes where Python's division puts it."""
    for ts in (0, 5 * NS + 1, -3 * NS, (1 << 63) + 5 * NS, 1 << 90):
        series = Series(("sum",))
        series.resolution = 3
        series.add(ts, (1,))
        assert list(series.buckets) == [ts // NS // 3], ts
        hist = TimeHistograms()
        hist.resolution = 3
        hist.add(ts, 1_000, "api")
        assert list(hist.buckets) == [ts // NS // 3], ts


def test_a_dict_look_up_is_dicts():
    table = Capped()
    table["a"] = 1
    for get in (c_ints._dict_get, capped_get):
        assert get(table, "a") == 1 and get(table, "b") is None
        assert get({("t", 0): 2}, ("t", 0)) == 2
