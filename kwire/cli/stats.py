"""`kwire stats CAPTURE...`: latency, error, lag and share-group figures of captures, in process.

Runs the pipeline over the captures, feeds every exchange (after the same filters as `inspect`) to
one kwire.analytics.Aggregator, and prints its document: rich tables (default), one JSON document
with sorted keys (`--json`, the format docs/stats-document.md documents and `kwire spark --json` also prints), or
a self-contained HTML report (`--html FILE`, can be combined with either).
"""

from __future__ import annotations

import sys

import click

from kwire.analytics import Aggregator, summary_json
from kwire.cli.inspect import report_run
from kwire.cli.progress import progress_bar
from kwire.cli.outpaths import refuse_overwrite, refuse_stdin_twice
from kwire.cli.keys import Reading, keylog_option, load_keys
from kwire.cli.options import capture_paths, filter_options, stdin_once
from kwire.errors import KwireError
from kwire.kafka.pairing import RawExchange
from kwire.parallel import FoldedBatches, default_jobs, offloadable
from kwire.pipeline import RunSummary


def write_outputs(document: dict, *, as_json: bool, html: str | None, out=None, sources=(), filters: str = "") -> None:
    """Print the document (JSON or tables) and write the HTML report, which names the `sources` (capture
    files) and the `filters` (as options); shared with `kwire spark`."""
    out = out or sys.stdout
    if html:
        from kwire.render.html_report import html_report

        page = html_report(document, sources=sources, filters=filters)  # rendered before the file is opened
        try:
            with open(html, "w", encoding="utf-8") as f:
                f.write(page)
        except OSError as exc:
            raise KwireError(f"cannot write {html}: {exc.strerror or exc}") from None
    if as_json:
        out.write(summary_json(document))
        out.write("\n")
    else:
        from rich.console import Console

        from kwire.render.stats_view import stats_view

        console = Console(file=out, highlight=False)
        if not console.is_terminal:
            console.width = max(console.width, 150)  # files and pipes: room for every column
        console.print(stats_view(document))
    out.flush()


@click.command("stats")
@click.argument("captures", nargs=-1, required=True, type=click.Path(dir_okay=True, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON document (sorted keys).")
@click.option("--html", type=click.Path(dir_okay=False, writable=True), default=None, metavar="FILE",
              help="Also write a self-contained HTML report with charts.")
@filter_options()
@keylog_option()
@click.option("--no-summary", is_flag=True, help="Leave out the closing summary line (on stderr).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None,
              help="Worker processes decoding and counting exchanges (0: none; default: one per CPU when "
                   "there are several). The figures are the same either way.")
@click.option("--metrics", "metrics", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write kwire live's Prometheus metrics of the captures to FILE (the textfile format "
                   "node_exporter reads).")
@click.option("--metrics-timestamps", is_flag=True,
              help="With --metrics: OpenMetrics with the capture's end time on every sample (for promtool's "
                   "backfill; node_exporter refuses timestamps).")
@click.option("--metrics-cap", "metric_caps", multiple=True, metavar="LABEL=N",
              help="With --metrics: keep the N busiest values of a label, the rest as 'other'; repeatable.")
def stats_command(captures, as_json, html, selection, ports, keylog, no_summary, jobs, metrics, metrics_timestamps,
                  metric_caps):
    """Latency, errors, lag and share-group figures of capture files (pcap, pcapng, gzip of either)."""
    caps = _caps(metrics, metrics_timestamps, metric_caps)
    paths = capture_paths(captures)
    refuse_overwrite(html, [*paths, keylog], "--html")
    refuse_stdin_twice(keylog, paths)
    paths = stdin_once(paths, selection.needs_prepass, selection.describe())
    keep = selection.exchange_filter(paths)
    reading = Reading(paths, ports, load_keys(keylog))
    summary = RunSummary()
    progress = progress_bar(paths)
    try:
        agg = aggregate(reading, summary, keep, default_jobs() if jobs is None else jobs,
                        progress.update if progress else None, metered=metrics is not None)
    finally:
        if progress:
            progress.close()
    agg.tls.merge(summary.tls)
    document = agg.document()
    if metrics is not None:
        from kwire.cli.metrics_file import write_metrics

        write_metrics(metrics, agg, summary, caps, metrics_timestamps)
    write_outputs(document, as_json=as_json, html=html, sources=paths, filters=selection.describe())
    report_run(summary, no_summary, matched=document["totals"]["exchanges"], selection=selection)


def _caps(metrics, timestamps: bool, caps: tuple[str, ...]) -> dict[str, int]:
    if metrics is None and (timestamps or caps):
        raise click.UsageError("--metrics-timestamps and --metrics-cap need --metrics FILE")
    from kwire.live.labels import parse_cap

    try:
        return dict(parse_cap(text) for text in caps)
    except ValueError as exc:
        raise click.UsageError(f"--metrics-cap {exc}") from None


class AggregateEach:
    """The exchanges that pass `keep` counted in a fresh Aggregator (the others only lend their topic
    names); the FoldedBatches task of `stats --jobs`. Aggregators merge exactly (kwire spark relies on it).
    `metered`: Aggregators that also keep the metrics' counts (kwire.live.metrics_state)."""

    def __init__(self, keep, metered: bool = False):
        self.keep = keep if getattr(keep, "active", True) else None  # None: a filter that turns nothing down
        self.metered = metered

    def __call__(self, exchanges, agg: Aggregator | None = None) -> Aggregator:
        agg = agg if agg is not None else new_aggregator(self.metered)
        keep = self.keep
        if keep is None:
            for ex in exchanges:
                agg.add_exchange(ex)
            return agg
        for ex in exchanges:
            if keep(ex):
                agg.add_exchange(ex)
            else:
                agg.learn_names(ex)
        return agg


def merged(agg: Aggregator, part: Aggregator) -> Aggregator:
    """The two merged: the one that counted fewer exchanges into the other (Aggregators merge exactly either
    way round, and a merge costs what the merged-in one holds: a worker's first state, into the few exchanges
    counted here, cost the main process as much again as unpickling it)."""
    if part.total.exchanges > agg.total.exchanges:
        return part.merge(agg)
    return agg.merge(part)


def new_aggregator(metered: bool) -> Aggregator:
    if metered:
        from kwire.live.metrics_state import MeteredAggregator

        return MeteredAggregator()
    return Aggregator()


def aggregate(reading: Reading, summary: RunSummary, keep, jobs: int, progress, metered: bool = False) -> Aggregator:
    """The Aggregator of the captures: exchanges the enricher needs are counted here, in order; the
    others, with workers, are decoded and counted there, each worker's into an Aggregator of its own,
    merged in when the worker hands it over (kwire.parallel.FoldedBatches)."""
    count = AggregateEach(keep, metered)
    agg = new_aggregator(metered)
    if not jobs:
        return count(reading.exchanges(summary, progress), agg)
    batches = FoldedBatches(count, jobs)

    def merge(wait: bool = False) -> None:
        nonlocal agg
        for part, _, errors in batches.done(wait):
            agg = merged(agg, part)
            summary.decode_errors += errors

    try:
        for item in reading.exchanges(summary, progress, offloadable):
            if type(item) is RawExchange:
                if batches.add(item):
                    merge()
            else:
                count((item,), agg)
        batches.finish()
        merge(wait=True)
    finally:
        batches.close()
    return agg
