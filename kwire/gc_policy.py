"""The cycle collector's settings for kwire's long runs (a leaf: imports nothing of kwire).

A run makes and drops millions of small objects, nearly all freed by reference counting, while what
was imported (modules, schemas, decoder tables) lives until exit. With Python's default thresholds
the collector walks everything again and again for nothing: 5-10 % of a `kwire stats` run, a fifth
of a Spark decode task, whose Aggregator tables grow to hundreds of thousands of objects.
"""

from __future__ import annotations

import gc

# Allocations between two collections of the youngest generation. Each collection walks every young object still
# alive: a chunk of capture's exchanges, their bodies and rows, in flight together (tens of thousands of objects),
# whatever the threshold, so the fewer collections the better. Measured (CPU, kwire stats -j 0 on 290,009 small
# Produce exchanges, compiled): 50,000: 7.7-8.3 s; 200,000: 7.6-7.7 s; 500,000: 7.2-7.3 s, the same peak memory.
# What waits longer for a collection is only garbage in reference cycles, which kwire makes almost none of (at
# the end of a run of any committed capture: 63 to 5,864 objects in all).
YOUNG = 500_000


def settle_gc(collect: bool = False) -> None:
    """Move what exists now out of the collector's walks, and let it run less often. Called once
    the command is imported (kwire.cli.main), and at the start of each Spark task (kwire.spark.job,
    `collect=True`): executors' Python workers are reused from task to task, so what an earlier
    task left in cycles is collected first, not frozen for the worker's life."""
    if collect:
        gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG, 20, 20)
