"""`kwire inspect CAPTURE...`: paired, decoded exchanges as lines, trees (-V) or JSON Lines.

The default view is one line per exchange (kwire.render.line_view); `-V` adds the decoded bodies as
trees (kwire.render.rich_view); `--json` writes JSON Lines (kwire.render.jsonl), on worker
processes when there are several CPUs. Exchanges are written in the order of their requests (kwire.time_order:
what is held while earlier requests may still come is a line, rendered, not the exchange), or as they
complete with `--sort completion`. The readable views are printed as laid out, never wrapped by
rich: a pipe or a file gets whole lines, a terminal wraps them itself. `-c N` stops reading after
the N-th exchange shown. The closing summary (stderr) says how many exchanges the filters matched.
"""

from __future__ import annotations

import sys

import click

from kwire.cli.outpaths import refuse_overwrite, refuse_stdin_twice
from kwire.cli.keys import Reading, keylog_option, load_keys
from kwire.cli.options import capture_paths, filter_options, stdin_once
from kwire.capture.files import FORMATS_READ
from kwire.capture.source import STDIN
from kwire.cli.output import binary_writer
from kwire.cli.progress import read_progress
from kwire.counts import count
from kwire.native.kafka_pairing import RawExchange
from kwire.native.exchange_sink import offloadable, offloadable_with_records
from kwire.parallel import OrderedRenderer, default_jobs
from kwire.pipeline import RunSummary
from kwire.render.jsonl import JsonLines
from kwire.render.records_run import RecordsRun
from kwire.safe_text import term_safe
from kwire.time_order import MAX_HELD, WINDOW_NS, TimeOrder, in_time_order


MAX_WINDOW_S = 1e9  # about 31 years of capture time: past it, a window holds everything (and fits 64 bits in ns)


def _a_number(ctx, param, value: float) -> float:
    """--window's value, refused when it is not a number (click's range lets NaN through)."""
    if value != value:
        raise click.BadParameter("not a number", ctx=ctx, param=param)
    return value


@click.command("inspect", help=f"""Decode the Kafka exchanges in capture files ({FORMATS_READ}).

    One line per exchange, in the order of the requests: time (UTC), client -> broker, api and version, correlation id, client id,
    latency, what went wrong, and what it carried (topics[partitions], records, group, an EndTxn's commit or
    abort). -V adds the decoded bodies; --json writes JSON Lines.""")
@click.argument("captures", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per exchange.")
@click.option("-V", "--verbose", is_flag=True, help="Show the decoded request and response of each exchange as trees.")
@click.option("--records", is_flag=True,
              help="Decode every record (key, value, headers), not only batch summaries (implies -V without --json).")
@click.option("-c", "--count", "limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="Stop after N exchanges (of those the filters keep), and stop reading.")
@filter_options()
@keylog_option()
@click.option("-w", "--write", "write_path", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE", help="Also write the packets of the exchanges shown to FILE (a pcap: their "
                                   "connections' handshakes and the segments carrying them, cut out).")
@click.option("--changes", "changes_only", is_flag=True,
              help="Only the exchanges that create, alter or delete something in the cluster (the `changes` of "
                   "kwire stats: topics, configs, ACLs, credentials, offsets set by a tool, ...).")
@click.option("--show-secrets", is_flag=True,
              help="Show secrets instead of redacting them: SASL credentials, token HMACs, SCRAM salts, "
                   "sensitive configuration values.")
@click.option("--sort", "sort", type=click.Choice(["time", "completion"]), default="time", show_default=True,
              help="time: exchanges in the order of their requests, through a reordering window (--window); "
                   "completion: each as soon as it is complete (answered or given up), as the capture completes them.")
@click.option("--window", "window", type=click.FloatRange(min=0, max=MAX_WINDOW_S, min_open=True),
              default=WINDOW_NS / 1e9, show_default=True, metavar="SECONDS", callback=_a_number,
              help="--sort time: how long, in capture time, an exchange waits for earlier requests still unanswered "
                   f"(a note says how many came later than that; at most {MAX_HELD:,} exchanges wait).")
@click.option("--no-summary", is_flag=True, help="Leave out the closing summary line (on stderr).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None,
              help="Worker processes decoding and rendering --json output (0: none; default: one per CPU "
                   "when there are several). The output is the same either way.")
def inspect_command(captures, as_json, verbose, records, limit, selection, ports, keylog, write_path, changes_only,
                    show_secrets, sort, window, no_summary, jobs):
    # (its help is the command's, above: it names the formats kwire reads)
    paths = capture_paths(captures)
    refuse_overwrite(write_path, [*paths, keylog], "-w")
    refuse_stdin_twice(keylog, paths)
    paths = stdin_once(paths, selection.needs_prepass or write_path is not None,
                       " ".join(filter(None, [selection.describe() if selection.needs_prepass else "",
                                              "-w" if write_path is not None else ""])))
    selection.changes_only = changes_only
    keep = selection.exchange_filter(paths)
    reading = Reading(paths, ports, load_keys(keylog), track_spans=write_path is not None)
    kept: list | None = None  # -w: the exchanges shown, in order
    if write_path is not None:
        kept = []
        jobs = 0  # which exchanges are kept is known here, not in worker processes
    summary = RunSummary()
    records_mode = "full" if records else "summary"
    run = RecordsRun()  # the record budgets: one per exchange, and what --records decompresses in all
    out = sys.stdout
    progress = read_progress(paths)
    # A capture on standard input is shown as it comes: each exchange when it completes (no worker
    # batches, no lines waiting to be laid out together).
    streaming = STDIN in paths
    order = TimeOrder(round(window * 1e9)) if sort == "time" else None
    try:
        if as_json:
            shown = write_json_lines(reading, summary, progress, JsonLines(records_mode, show_secrets, keep, run),
                                     0 if streaming else default_jobs() if jobs is None else jobs, out, limit,
                                     offloadable_with_records if records else offloadable, streaming, order, kept)
        else:
            shown = write_readable(reading, summary, progress, keep, out, limit, streaming=streaming,
                                   verbose=verbose or records, records=records_mode, show_secrets=show_secrets,
                                   run=run, order=order, kept=kept)
    finally:
        progress.close()
    out.flush()
    if write_path is not None:
        write_excerpt(reading, kept, write_path)
    if run.note():
        click.echo(f"kwire: {run.note()}", err=True)
    if order is not None and order.note():
        click.echo(f"kwire: {order.note()}", err=True)
    report_run(summary, no_summary, matched=shown, selection=selection, limit=limit)


def write_excerpt(reading: Reading, kept: list, path: str) -> None:
    """-w: the packets of the exchanges shown, cut out of the captures (kwire.excerpt)."""
    from kwire.excerpt import Excerpt

    excerpt = Excerpt()
    for ex in kept:
        excerpt.add(ex)
    packets = excerpt.write(reading.paths, path)
    notes = [f"wrote {count(packets, 'packet')} of {count(len(kept) - excerpt.uncut, 'exchange')} to {path}"]
    if excerpt.uncut:
        notes.append(f"{count(excerpt.uncut, 'exchange')} not written (their place in the stream is not known: "
                     "a capture that began in the middle of them)")
    for note in notes + excerpt.skipped:
        click.echo(f"kwire: {note}", err=True)


BATCH_LINES = 64  # one-line view: lines laid out per print


def write_readable(reading: Reading, summary: RunSummary, progress, keep, out, limit: int | None, *,
                   verbose: bool, records: str, show_secrets: bool, streaming: bool = False,
                   run: RecordsRun | None = None, order: TimeOrder | None = None, kept: list | None = None) -> int:
    """The line view, or the trees with -V (in time order through `order`, else as they complete); returns
    how many exchanges were shown, and notes them in `kept` when given (-w)."""
    from rich.console import Console

    from kwire.render.line_view import Lines, line_parts
    from kwire.render.rich_view import exchange_view

    def make(ex):
        """What is held for an exchange shown (the line's parts: a decoded exchange holds far more)."""
        if not keep(ex):
            return None
        if verbose:
            return ex, None
        return (ex if kept is not None else None), line_parts(ex)

    console = Console(file=out, highlight=False, markup=False, emoji=False, soft_wrap=True)
    shown = 0
    batch: list = []
    items = _ordered(reading, summary, progress.update if progress else None, None, order, make)
    try:
        for ex, parts in items:
            if verbose:
                console.print(exchange_view(ex, records=records, show_secrets=show_secrets, run=run))
            else:
                batch.append(parts)
                if len(batch) >= (1 if streaming else BATCH_LINES):
                    console.print(Lines(batch))
                    batch = []
            if streaming:
                out.flush()
            if kept is not None:
                kept.append(ex)
            shown += 1
            if shown == limit:
                break
    finally:
        items.close()
        if batch:
            console.print(Lines(batch))
    return shown


def write_json_lines(reading: Reading, summary: RunSummary, progress, render: JsonLines, jobs: int, out,
                     limit: int | None = None, offload=offloadable, streaming: bool = False,
                     order: TimeOrder | None = None, kept: list | None = None) -> int:
    """inspect --json: decoding and rendering on `jobs` worker processes (kwire.parallel) or here, in time
    order through `order` (else as the exchanges complete); returns how many lines were written (at most
    `limit`), and notes the exchanges written in `kept` when given (-w: no workers). `offload` picks the
    exchanges workers may take (with --records: offloadable_with_records). `streaming` (a capture on
    standard input): each line is written as soon as it is made."""
    write = binary_writer(out)  # whole lines or an error, never a silent cut (kwire.cli.output)
    update = progress.update if progress else None
    shown = 0

    def emit(text: bytes, lines: int) -> bool:
        """Write `text` (`lines` whole lines), cut at the limit; False once the limit is reached."""
        nonlocal shown
        if limit is not None and shown + lines >= limit:
            cut = 0
            for _ in range(limit - shown):
                cut = text.index(b"\n", cut) + 1
            write(text[:cut])
            shown = limit
            return False
        write(text)
        shown += lines
        return True

    if kept is not None:
        def rendered(ex):
            text = render(ex)
            return (text, ex) if text else None

        def noted(made) -> bytes:
            kept.append(made[1])
            return made[0]

        return _write_here(_ordered(reading, summary, update, None, order, rendered), noted, write, limit, streaming)
    if not jobs:
        if order is None:
            return _write_here(reading.exchanges(summary, update), render, write, limit, streaming)
        return _write_here(_ordered(reading, summary, update, None, order, render), _same, write, limit, streaming)

    def count_errors(n: int) -> None:
        summary.decode_errors += n

    renderer = OrderedRenderer(render, jobs, count_errors)
    # in time order, what is rendered here is rendered now, and its line waits (not the exchange)
    items = _ordered(reading, summary, update, offload, order, None if order is None else render, RawExchange)
    try:
        for item in items:
            for text, lines in renderer.feed(item):
                if not emit(text, lines):
                    return shown
        for text, lines in renderer.finish():
            if not emit(text, lines):
                return shown
    finally:
        items.close()
        renderer.close()
    return shown


def _same(text: bytes) -> bytes:
    return text


def _ordered(reading: Reading, summary: RunSummary, update, offload, order: TimeOrder | None, make,
             passes: type | None = None):
    """What `make` makes of the pipeline's exchanges (each as it is without it, and those of type `passes`;
    those it makes None of left out): in time order through `order` (kwire.time_order, asking the pipeline
    what is settled), or as they come."""
    if order is not None:
        return in_time_order(reading.windows(summary, update, offload, lambda pipeline: order.watch(pipeline.settled)),
                             order, make, passes)
    exchanges = reading.exchanges(summary, update, offload)
    return exchanges if make is None else _made(exchanges, make)


def _made(exchanges, make):
    try:
        for ex in exchanges:
            made = make(ex)
            if made is not None:
                yield made
    finally:
        exchanges.close()


WRITE_BYTES = 1 << 16  # lines rendered here are written in pieces of about this size


def _write_here(exchanges, render, write, limit: int | None, streaming: bool) -> int:
    """write_json_lines without workers: each exchange's line (one each, or None), written about
    WRITE_BYTES at a time (each as it comes when `streaming`), and everything rendered written before
    an error leaves; returns how many lines were written."""
    shown = 0
    pending: list[bytes] = []
    size = 0
    flush_at = 0 if streaming else WRITE_BYTES
    try:
        for ex in exchanges:
            text = render(ex)
            if not text:
                continue
            shown += 1
            if len(text) < WRITE_BYTES:
                pending.append(text)
                size += len(text)
            elif pending:  # a big one (a --records exchange) is written on its own: joining would copy it
                lines, pending, size = pending, [text], len(text)
                write(b"".join(lines))
            else:
                pending, size = [text], len(text)
            if shown == limit:
                break
            if size >= flush_at:
                lines, pending, size = pending, [], 0
                write(lines[0] if len(lines) == 1 else b"".join(lines))
    finally:
        exchanges.close()
        if pending:
            write(b"".join(pending))
    return shown


def report_run(summary: RunSummary, quiet: bool, *, matched: int | None = None, selection=None,
               limit: int | None = None) -> None:
    """The closing summary line, warnings and capture errors, on stderr; exit 1 if a capture could not
    be read. With filters (or -c), the line starts with how many exchanges matched of how many read; a
    filter that matched nothing says so even with --no-summary."""
    for linktype, names in summary.unknown_linktypes.items():
        click.echo(f"kwire: error: {', '.join(names)}: unknown link type {linktype}, its packets were skipped",
                   err=True)
    for message in summary.capture_errors:
        click.echo(f"kwire: error: {term_safe(message)}", err=True)
    filtered = selection is not None and selection.active
    if matched is not None and not matched and filtered and summary.exchanges:
        click.echo(f"kwire: no exchange matched {selection.describe()} (of {summary.exchanges:,})", err=True)
    if not quiet:
        head = []
        if matched is not None and (filtered or limit):
            head.append(f"{matched:,} of {count(summary.exchanges, 'exchange')} matched")
            if limit and matched >= limit:
                head.append(f"stopped after -c {limit:,}")
        click.echo(f"kwire: {'; '.join(head + [summary.line()])}", err=True)
        for line in tls_notes(summary):
            click.echo(f"kwire: {line}", err=True)
    if summary.capture_errors or summary.unknown_linktypes:
        sys.exit(1)


SHOWN_TLS = 10  # undecrypted TLS connections named one by one in the closing lines


def tls_notes(summary: RunSummary) -> list[str]:
    """What could not be seen: each TLS connection not decrypted (the first few), and how to see it."""
    notes = summary.tls
    hidden = [row for row in notes.rows if not row["decrypted"]]
    lines = [f"TLS {tls_label(row)} not decrypted: {row['reason']}" for row in hidden[:SHOWN_TLS]]
    more = notes.connections - notes.decrypted - len(lines)
    if more > 0:
        lines.append(f"... and {count(more, 'more TLS connection')} not decrypted (kwire stats lists them)")
    if notes.connections > notes.decrypted and not summary.keylog_given:
        lines.append("TLS traffic is encrypted: give the clients' key log with --keylog FILE to decrypt it "
                     "(docs/tls.md)")
    return lines


def tls_label(row: dict) -> str:
    """client -> server (server name, version, cipher suite, bytes each way) of a kwire.tls.info row."""
    facts = [term_safe(f) for f in (row["server_name"], row["version"], row["cipher_suite"]) if f]
    facts.append(f"{row['to_server_bytes']:,} B out, {row['to_client_bytes']:,} B back")
    return f"{row['client']} -> {row['server']} ({', '.join(facts)})"
