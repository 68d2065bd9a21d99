"""kwire/native/c_ints.pxd's helpers in Python: what the pure-Python build runs under the same names (a compiled
module cimports the .pxd as `c_ints`, so there each is inline C). tests/native/test_c_ints.py holds the two to
the same results."""

from __future__ import annotations

NS = 1_000_000_000


def _time_bucket(ts_ns: int, resolution: int) -> int:
    """The bucket of a time at a resolution of seconds."""
    return ts_ns // NS // resolution


def _dict_get(table: dict, key):
    """dict.get(table, key), a subclass's override left out (Capped has none)."""
    return dict.get(table, key)
