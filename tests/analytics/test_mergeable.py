"""kwire.analytics.mergeable.SmallestKeys against keep_smallest after every key (the definition it
speeds up), on random streams of keys with repeats, merges and pickling in between; and the flood
that made per-key sorting quadratic, counted in comparisons (not timed)."""

from __future__ import annotations

import pickle
import random

from kwire.analytics.mergeable import SmallestKeys, keep_smallest


def _eager(table: dict, key, value, limit: int) -> None:
    if key in table:
        table[key] += value
        return
    table[key] = value
    keep_smallest(table, limit)


def _fast(table: dict, kept: SmallestKeys, key, value) -> None:
    if key in table:
        table[key] += value
        return
    table[key] = value
    kept.admit(table, key)


def test_smallest_keys_keep_what_keep_smallest_keeps():
    rng = random.Random(42)
    for _ in range(200):
        limit = rng.randint(1, 20)
        eager: dict = {}
        fast: dict = {}
        kept = SmallestKeys(limit)
        for _ in range(rng.randint(0, 300)):
            r = rng.random()
            if r < 0.05:  # a merge that ends in keep_smallest, as the states' merge() do
                other = {(rng.randrange(60), "x"): 1 for _ in range(rng.randint(0, 30))}
                for table in (eager, fast):
                    for key, value in other.items():
                        table[key] = table.get(key, 0) + value
                    keep_smallest(table, limit)
                kept.reset()
            elif r < 0.08:  # to another process and back
                kept = pickle.loads(pickle.dumps(kept))
            else:
                key = (rng.randrange(60), rng.choice("xy"))
                _eager(eager, key, 1, limit)
                _fast(fast, kept, key, 1)
            assert fast == eager
        assert len(fast) <= limit


class Counted:
    """A key that counts its comparisons."""

    compared = 0

    def __init__(self, n: int):
        self.n = n

    def __lt__(self, other) -> bool:
        Counted.compared += 1
        return self.n < other.n

    def __eq__(self, other) -> bool:
        return isinstance(other, Counted) and self.n == other.n

    def __hash__(self) -> int:
        return hash(self.n)


def test_a_flood_of_new_keys_costs_log_limit_comparisons_each():
    limit, n = 1000, 20_000
    table: dict = {}
    kept = SmallestKeys(limit)
    rng = random.Random(7)
    order = list(range(n))
    rng.shuffle(order)
    Counted.compared = 0
    for i in order:
        key = Counted(i)
        table[key] = None
        kept.admit(table, key)
    assert sorted(k.n for k in table) == list(range(limit))
    assert Counted.compared < 40 * n  # sorting the table for each key: ~limit x log2(limit) = 10,000 each
