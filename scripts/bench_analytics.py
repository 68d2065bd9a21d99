#!/usr/bin/env python3
"""What `kwire stats` spends per exchange in the analytics alone (kwire.analytics), on a real capture.

Decodes the captures once (as `kwire stats -j 0` does, kwire.cli.keys.Reading), keeps the Exchanges,
then feeds them to `kwire stats`' counting (kwire.cli.stats.AggregateEach) and makes the document,
several rounds, in CPU time. Prints microseconds per exchange, best of the rounds.

    python scripts/bench_analytics.py /tmp/kwire-bench-cf/small.pcap [--rounds 5]
    python scripts/bench_analytics.py CAPTURE --profile /tmp/analytics.prof    # cProfile of one round
    python scripts/bench_analytics.py CAPTURE --decode-only                    # no counting (callgrind:
                                                                               # the difference is analytics)
Instructions with callgrind (repeatable on a busy machine): run it with --rounds 1 under
`valgrind --tool=callgrind`, with and without --decode-only.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kwire.cli.keys import Reading  # noqa: E402
from kwire.cli.stats import AggregateEach, new_aggregator  # noqa: E402
from kwire.gc_policy import settle_gc  # noqa: E402
from kwire.pipeline import RunSummary  # noqa: E402
from kwire.query import ExchangeFilter  # noqa: E402


def decoded(paths: list[str]) -> list:
    return list(Reading(paths, (), None).exchanges(RunSummary()))


def count(exchanges: list) -> dict:
    agg = AggregateEach(ExchangeFilter())(exchanges, new_aggregator(False))  # no filter, as `kwire stats`
    return agg.document()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("captures", nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", metavar="FILE")
    parser.add_argument("--decode-only", action="store_true")
    args = parser.parse_args()
    exchanges = decoded(args.captures)
    settle_gc(collect=True)  # as the kwire command settles it; the decoded exchanges frozen out of the way
    if args.decode_only:
        print(f"{len(exchanges)} exchanges decoded")
        return
    if args.profile:
        import cProfile

        cProfile.runctx("count(exchanges)", globals(), {"exchanges": exchanges}, args.profile)
        print(f"profile written to {args.profile}")
        return
    best = None
    for _ in range(args.rounds):
        start = time.process_time()
        count(exchanges)
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    print(f"{len(exchanges)} exchanges: {best / len(exchanges) * 1e6:.2f} us each in the analytics (best of "
          f"{args.rounds})")


if __name__ == "__main__":
    main()
