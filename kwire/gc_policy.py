"""The cycle collector's settings for kwire's long runs (a leaf: imports nothing of kwire).

A run makes and drops millions of small objects, nearly all freed by reference counting, while what
was imported (modules, schemas, decoder tables) lives until exit. With Python's default thresholds
the collector walks everything again and again for nothing: 5-10 % of a `kwire stats` run, a fifth
of a Spark decode task, whose Aggregator tables grow to hundreds of thousands of objects.
"""

from __future__ import annotations

import gc


def settle_gc(collect: bool = False) -> None:
    """Move what exists now out of the collector's walks, and let it run less often. Called once
    the command is imported (kwire.cli.main), and at the start of each Spark task (kwire.spark.job,
    `collect=True`): executors' Python workers are reused from task to task, so what an earlier
    task left in cycles is collected first, not frozen for the worker's life."""
    if collect:
        gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
