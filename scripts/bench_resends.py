#!/usr/bin/env python3
"""What reading resends costs the analysis (kwire.analytics.resends), on real captures.

Decodes the captures once, then times, several rounds, in CPU time, `observations(ex)` over every
exchange with the resend readers (kwire.analytics.resends: a Produce batch's header asked about, records of
failed sends and of batches that may be resends read; Fetch batch CRCs noted) and without them
(both replaced by no-ops), and the Aggregator fed those
observations. Prints microseconds per exchange, best of the rounds, and the batches and records the
readers read.

    python scripts/bench_resends.py captures/produce-consume-*.pcap captures/problems/dup-write-*.pcap.gz
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kwire.analytics import Aggregator, observe  # noqa: E402
from kwire.native.exchange_facts import exchange_row, partition_rows, topic_names  # noqa: E402
from kwire.pipeline import analyze_files  # noqa: E402


class _NoReader:
    def __init__(self, ex, watch) -> None:
        pass

    def batch(self, *args) -> None:
        pass


def _round(exchanges) -> float:
    start = time.process_time()
    agg = Aggregator()
    for ex in exchanges:
        agg.add(exchange_row(ex), partition_rows(ex), topic_names(ex), observe.observations(ex, agg.analysis.watch))
    agg.document()
    return time.process_time() - start


def _best(exchanges, rounds: int) -> float:
    return min(_round(exchanges) for _ in range(rounds)) / max(len(exchanges), 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("captures", nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for path in args.captures:
        exchanges = list(analyze_files([path]))
        rs = fb = prints = 0
        counted = Aggregator()
        for ex in exchanges:
            observed = observe.observations(ex, counted.analysis.watch)
            for ob in observed:
                rs += ob[0] == "rs"
                fb += ob[0] == "fb"
                prints += len(ob[-1]) if ob[0] == "rs" else 0
            counted.add(exchange_row(ex), observed=observed)
        with_readers = _best(exchanges, args.rounds)
        saved = observe.ResendReader, observe.fetched
        observe.ResendReader, observe.fetched = _NoReader, lambda ex, out: None
        try:
            without = _best(exchanges, args.rounds)
        finally:
            observe.ResendReader, observe.fetched = saved
        print(f"{os.path.basename(path)}: {len(exchanges)} exchanges; {with_readers:.1f} us/exchange with the "
              f"resend readers, {without:.1f} without ({with_readers - without:+.1f}); "
              f"{rs} batches read ({prints} records), {fb} fetched batches noted")


if __name__ == "__main__":
    main()
