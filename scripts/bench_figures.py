#!/usr/bin/env python3
"""What the live dashboard's process spends per exchange, on a real capture.

Reads the captures once through a Pipeline that offloads every exchange, as the capture process of
`kwire live` does (kwire.live.sniffer), and keeps the kwire.native.exchange_build.ExchangeParts it would send,
in batches of BATCH. Then times, several rounds, in CPU time, what the dashboard's process does
with them (kwire.live.ringfeed.RingFeeder._take): unpickle each message as the channel does and unpack its
batch (kwire.native.exchange_wire), decode
and enrich each exchange, DashboardState.add_exchanges, and a snapshot every second of capture time
(the screen asks about once a second), with the collector settled as the kwire command settles
it. Prints microseconds per exchange, best of the rounds, and
the share of each step.

    python scripts/bench_figures.py /tmp/kwire-bench/live/small-2.5m.pcap.first200000.pcap [--rounds 3]
    python scripts/bench_figures.py captures/*.pcap --profile /tmp/figures.prof
    python scripts/bench_figures.py CAPTURE --metrics --scrape-every 5   # with kwire live --metrics' work
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from kwire.capture.files import open_captures  # noqa: E402
from kwire.cli.main import settle_gc  # noqa: E402
from kwire.native.exchange_enrich import Enricher  # noqa: E402
from kwire.native.exchange_build import build_from_parts  # noqa: E402
from kwire.live.report import ReportedPipeline  # noqa: E402
from kwire.live.labels import LabelCaps  # noqa: E402
from kwire.live.metric_families import families  # noqa: E402
from kwire.live.metrics_state import MetricsState  # noqa: E402
from kwire.live.state import DashboardState  # noqa: E402
from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402
from kwire.native.exchange_wire import PartsWriter, unpack  # noqa: E402
from kwire.pipeline import Pipeline  # noqa: E402

BATCH = 1024  # kwire.live.sniffer.BATCH
NS = 1_000_000_000


def sent_batches(paths: list[str], batch: int = BATCH) -> list[bytes]:
    """The messages of packed ExchangeParts the capture process would send for `paths`, pickled as the channel
    pickles them (kwire.live.sniffer: a message holds the batch as one bytes object)."""
    pipeline = Pipeline(offload=lambda raw: True)
    messages = []
    writer = PartsWriter()

    def take(raws) -> None:
        nonlocal writer
        for raw in raws:
            writer.add(raw)  # packed as it comes (its bodies copied), as the capture process does
            if writer.rows == batch:
                messages.append(pickle.dumps(("batch", writer.getvalue(), {}), protocol=pickle.HIGHEST_PROTOCOL))
                writer = PartsWriter()

    for out in pipeline.feed_capture(open_captures(paths)):
        take(out)
    take(pipeline.finish())
    if writer.rows:
        messages.append(pickle.dumps(("batch", writer.getvalue(), {}), protocol=pickle.HIGHEST_PROTOCOL))
    return messages


def run(batches: list[bytes], timers: dict[str, float] | None = None, metrics: bool = False,
        scrape_every_s: int = 0) -> tuple[int, DashboardState]:
    """The dashboard process's work on `batches`; `timers` gets the CPU seconds of each step. `metrics`:
    with the exporter's counts (kwire live --metrics), and its families made every `scrape_every_s`
    seconds of capture time (a scraper; the text itself is made on the exporter's thread, also timed)."""
    clock = time.process_time
    state = DashboardState("live", "bench", metrics=MetricsState(LabelCaps()) if metrics else None)
    enrich = Enricher().enrich
    pipeline = ReportedPipeline({})
    t = timers if timers is not None else {}
    for key in ("unpack", "decode", "add", "snapshot") + (("scrape",) if scrape_every_s else ()):
        t.setdefault(key, 0.0)
    second = None
    scraped = None
    count = 0
    for data in batches:
        t0 = clock()
        parts = unpack(pickle.loads(data)[1])
        t1 = clock()
        exchanges = []
        for item in parts:
            ex = build_from_parts(item)
            enrich(ex)
            exchanges.append(ex)
        t2 = clock()
        state.add_exchanges(exchanges)
        t3 = clock()
        t["unpack"] += t1 - t0
        t["decode"] += t2 - t1
        t["add"] += t3 - t2
        count += len(parts)
        done = max((p[12] or p[9] or 0) for p in parts) if parts else 0
        if second is None or done // NS > second:
            second = done // NS
            state.snapshot(done, pipeline, {})
            t4 = clock()
            t["snapshot"] += t4 - t3
            if scrape_every_s and (scraped is None or second - scraped >= scrape_every_s):
                scraped = second
                _Fixed.families = families(state.metrics_view({}, {}))
                generate_latest(_REGISTRY)
                t["scrape"] += clock() - t4
    state.finished = True
    t0 = clock()
    state.snapshot(second * NS if second is not None else 0, pipeline, {})
    t["snapshot"] += clock() - t0
    return count, state


class _Fixed:
    families: list = []

    def collect(self):
        return self.families


_REGISTRY = CollectorRegistry(auto_describe=False)
_REGISTRY.register(_Fixed())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("captures", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", help="write a cProfile of one round to this file")
    parser.add_argument("--metrics", action="store_true", help="with kwire live --metrics' counts")
    parser.add_argument("--scrape-every", type=int, default=0, metavar="S",
                        help="with --metrics: make the exporter's text every S seconds of capture time")
    args = parser.parse_args()
    batches = sent_batches(args.captures)
    settle_gc()  # as the kwire command does once it is loaded (the collector's thresholds)
    if args.profile:
        import cProfile

        cProfile.runctx("run(batches)", globals(), {"batches": batches, "run": run}, args.profile)
        print(f"profile written to {args.profile}")
        return
    best: dict[str, float] | None = None
    for _ in range(args.rounds):
        timers: dict[str, float] = {}
        count, _state = run(batches, timers, args.metrics or bool(args.scrape_every), args.scrape_every)
        if best is None or sum(timers.values()) < sum(best.values()):
            best = timers
    assert best is not None
    total = sum(best.values())
    print(f"{count} exchanges in {len(batches)} batches; best of {args.rounds}: "
          f"{total * 1e6 / max(count, 1):.1f} us per exchange ({count / total if total else 0:,.0f} exchanges/s)")
    for key, seconds in best.items():
        print(f"  {key:9} {seconds * 1e6 / max(count, 1):6.1f} us  {seconds / total * 100 if total else 0:5.1f} %")


if __name__ == "__main__":
    main()
