"""The JSON Lines renderer's small helpers."""

from __future__ import annotations


def test_seconds_equal_rounding_to_the_nanosecond():
    """_seconds skips round() where a double cannot hold finer than a nanosecond anyway."""
    import random

    from kwire.render.jsonl import _seconds

    rng = random.Random(5)
    samples = [0, 1, 999, 10**9 + 1, 8388607_999_999_999, 8388608 * 10**9, 8388608 * 10**9 + 1,
               1_763_791_000_123_456_789]
    samples += [rng.randrange(0, 2**63) for _ in range(20000)]
    for ts in samples:
        assert _seconds(ts) == round(ts / 1e9, 9), ts
