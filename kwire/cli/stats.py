"""`kwire stats CAPTURE...`: latency, error, lag and share-group figures of captures, in process.

Runs the pipeline over the captures, feeds every exchange (after the same filters as `inspect`) to
one kwire.analytics.Aggregator, and prints its document: rich tables (default), one JSON document
with sorted keys (`--json`, the format docs/stats-document.md documents and `kwire spark --json` also prints), or
a self-contained HTML report (`--html FILE`, can be combined with either). Everything it writes is made
before anything is written; a capture kwire fails on (a fault, kwire.errors.is_fault) is left out and
named, the other captures' figures kept (kwire.cli.faults).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import click

from kwire.analytics import Aggregator, summary_json
from kwire.cli.inspect import report_run
from kwire.cli.progress import read_progress
from kwire.cli.outpaths import refuse_overwrite, refuse_stdin_twice
from kwire.cli.keys import Reading, keylog_option, load_keys
from kwire.cli.options import capture_paths, filter_options, stdin_once
from kwire.capture.files import FORMATS_READ
from kwire.capture.source import STDIN
from kwire.cli.faults import without_faulty
from kwire.errors import KwireError, fault_line, is_fault
from kwire.counts import count as counted
from kwire.native.kafka_pairing import RawExchange
from kwire.native.exchange_sink import offloadable_to_fold
from kwire.parallel import FoldedBatches, default_jobs, produce_shard
from kwire.pipeline import RunSummary
from kwire.render.units import human_bytes
from kwire.safe_text import term_safe


@dataclass
class Outputs:
    """What a summary command prints and writes, all made before anything is written (so that a fault
    while making them leaves no half output): the JSON text or the tables, the HTML page, the metrics."""

    document: dict
    text: str | None = None      # --json
    view: object = None          # the tables (a rich renderable)
    html: str | None = None      # where the page goes
    page: str | None = None
    metrics: str | None = None   # where the metrics go
    metrics_text: bytes | None = None

    def write(self, out=None) -> None:
        out = out or sys.stdout
        if self.page is not None:
            try:
                with open(self.html, "w", encoding="utf-8") as f:
                    f.write(self.page)
            except OSError as exc:
                raise KwireError(f"cannot write {self.html}: {exc.strerror or exc}") from None
            click.echo(f"kwire: wrote the HTML report to {term_safe(self.html)} ({human_bytes(os.path.getsize(self.html))})",
                       err=True)
        if self.metrics_text is not None:
            from kwire.cli.metrics_file import write_text

            write_text(self.metrics, self.metrics_text)
            families = self.metrics_text.count(b"\n# TYPE ") + self.metrics_text.startswith(b"# TYPE ")
            click.echo(f"kwire: wrote {counted(families, 'metric family')} to {term_safe(self.metrics)} "
                       f"({human_bytes(len(self.metrics_text))})", err=True)
        if self.text is not None:
            out.write(self.text)
            out.write("\n")
        else:
            from rich.console import Console

            console = Console(file=out, highlight=False)
            if not console.is_terminal:
                console.width = max(console.width, 150)  # files and pipes: room for every column
            console.print(self.view)
        out.flush()


def prepare_outputs(document: dict, *, as_json: bool, html: str | None, sources=(), filters: str = "") -> Outputs:
    """The document as JSON or tables, and the HTML report (which names the `sources`, capture files, and
    the `filters`, as options); shared with `kwire spark`."""
    made = Outputs(document, html=html)
    if html:
        from kwire.render.html_report import html_report

        made.page = html_report(document, sources=sources, filters=filters)
    if as_json:
        made.text = summary_json(document)
    else:
        from kwire.render.stats_view import stats_view

        made.view = stats_view(document)
    return made


def write_outputs(document: dict, *, as_json: bool, html: str | None, out=None, sources=(), filters: str = "") -> None:
    prepare_outputs(document, as_json=as_json, html=html, sources=sources, filters=filters).write(out)


@click.command("stats", help=f"Latency, errors, lag and share-group figures of capture files ({FORMATS_READ}).")
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
    # (its help is the command's, above: it names the formats kwire reads)
    caps = _caps(metrics, metrics_timestamps, metric_caps)
    paths = capture_paths(captures)
    refuse_overwrite(html, [*paths, keylog], "--html")
    refuse_stdin_twice(keylog, paths)
    paths = stdin_once(paths, selection.needs_prepass, selection.describe())
    keys = load_keys(keylog)
    jobs = default_jobs() if jobs is None else jobs

    def run(chosen: list[str], update=None) -> tuple[RunSummary, Outputs]:
        summary = RunSummary()
        keep = selection.exchange_filter(chosen)  # (--group learns its members from the files it is given)
        agg = aggregate(Reading(chosen, ports, keys), summary, keep, jobs, update, metered=metrics is not None)
        agg.tls.merge(summary.tls)
        made = prepare_outputs(agg.document(), as_json=as_json, html=html, sources=chosen,
                               filters=selection.describe())
        if metrics is not None:
            from kwire.cli.metrics_file import metrics_text

            made.metrics, made.metrics_text = metrics, metrics_text(agg, summary, caps, metrics_timestamps)
        return summary, made

    summary, made = _run_leaving_out_faults(run, paths)
    made.write()
    report_run(summary, no_summary, matched=made.document["totals"]["exchanges"], selection=selection)


def _run_leaving_out_faults(run, paths: list[str]):
    """run(paths), or when it meets a fault, run over the files it does not fail on (kwire.cli.faults)."""
    progress = read_progress(paths)
    try:
        try:
            return run(paths, progress.update)
        finally:
            progress.close()
    except Exception as exc:  # noqa: BLE001 - a fault (kwire.errors.is_fault) is one file's, the rest is raised
        if not is_fault(exc):
            raise
        if STDIN in paths and len(paths) > 1:  # standard input cannot be read again
            raise KwireError(f"kwire failed ({fault_line(exc)})") from None
        (summary, made), lines = without_faulty(paths, run, exc)
    summary.capture_errors[:0] = lines
    return summary, made


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

    def successor(self, agg: Aggregator) -> Aggregator:
        """The Aggregator a worker goes on with once it has handed `agg` over (kwire.parallel.FoldedBatches):
        fresh, but reading Produce batches for resends as `agg` would have."""
        return agg.successor()

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
    merged in when the worker hands it over (kwire.parallel.FoldedBatches). A producer's Produce exchanges
    all go to one worker, in order (`produce_shard`): which of their batches are read for resends depends on
    the batches before them. What is counted here is counted apart from what the workers hand over (its
    reads for resends are this process's own, whenever the workers' states come), and the two are merged
    at the end."""
    count = AggregateEach(keep, metered)
    local = new_aggregator(metered)
    if not jobs:
        return count(reading.exchanges(summary, progress), local)
    batches = FoldedBatches(count, jobs, route=produce_shard)
    parts = None

    def merge(wait: bool = False) -> None:
        nonlocal parts
        for part, _, errors in batches.done(wait):
            parts = part if parts is None else merged(parts, part)
            summary.decode_errors += errors

    try:
        for item in reading.exchanges(summary, progress, offloadable_to_fold):
            if type(item) is RawExchange:
                if batches.add(item):
                    merge()
            else:
                count((item,), local)
        batches.finish()
        merge(wait=True)
    finally:
        batches.close()
    return local if parts is None else merged(local, parts)
