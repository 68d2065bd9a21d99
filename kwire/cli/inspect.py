"""`kwire inspect CAPTURE...`: paired, decoded exchanges as a readable view or JSON Lines."""

from __future__ import annotations

import sys

import click

from kwire.cli.keys import keylog_option, load_keys
from kwire.cli.options import capture_paths, exchange_filter, filter_options
from kwire.cli.progress import progress_bar
from kwire.parallel import OrderedRenderer, default_jobs, offloadable
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import JsonLines


@click.command("inspect")
@click.argument("captures", nargs=-1, required=True, type=click.Path(allow_dash=False))
@click.option("--json", "as_json", is_flag=True, help="JSON Lines: one object per exchange.")
@click.option("--records", is_flag=True, help="Decode every record (key, value, headers), not only batch summaries.")
@filter_options()
@keylog_option()
@click.option("--show-secrets", is_flag=True, help="Show SASL credentials instead of redacting them.")
@click.option("--no-summary", is_flag=True, help="Leave out the closing summary line (on stderr).")
@click.option("--jobs", "-j", type=click.IntRange(min=0), default=None,
              help="Worker processes decoding and rendering --json output (0: none; default: one per CPU "
                   "when there are several). The output is the same either way.")
def inspect_command(captures, as_json, records, apis, client_ids, topics, errors_only, min_latency, ports,
                    keylog, show_secrets, no_summary, jobs):
    """Decode the Kafka exchanges in capture files (pcap, pcapng, gzip of either)."""
    paths = capture_paths(captures)
    keep = exchange_filter(apis, client_ids, topics, errors_only, min_latency)
    keys = load_keys(keylog)
    summary = RunSummary()
    records_mode = "full" if records else "summary"
    out = sys.stdout
    progress = progress_bar(paths)
    try:
        if as_json:
            write_json_lines(paths, ports, summary, progress, JsonLines(records_mode, show_secrets, keep),
                             default_jobs() if jobs is None else jobs, out, keys)
        else:
            exchanges = analyze_files(paths, port_hints=ports, summary=summary,
                                      progress=progress.update if progress else None, keys=keys)
            from rich.console import Console

            from kwire.render.rich_view import exchange_view

            console = Console(file=out, highlight=False, soft_wrap=False)
            for ex in exchanges:
                if keep(ex):
                    console.print(exchange_view(ex, records=records_mode, show_secrets=show_secrets))
    finally:
        if progress:
            progress.close()
    out.flush()
    report_run(summary, no_summary)


def write_json_lines(paths, ports, summary: RunSummary, progress, render: JsonLines, jobs: int, out,
                     keys=None) -> None:
    """inspect --json: decoding and rendering on `jobs` worker processes (kwire.parallel) or here."""
    out.flush()
    binary = getattr(out, "buffer", None)
    write = binary.write if binary is not None else (lambda text: out.write(text.decode()))
    update = progress.update if progress else None
    if not jobs:
        for ex in analyze_files(paths, port_hints=ports, summary=summary, progress=update, keys=keys):
            text = render(ex)
            if text:
                write(text)
        return

    def count_errors(n: int) -> None:
        summary.decode_errors += n

    renderer = OrderedRenderer(render, jobs, count_errors)
    try:
        for item in analyze_files(paths, port_hints=ports, summary=summary, progress=update,
                                  offload=offloadable, keys=keys):
            for text in renderer.feed(item):
                write(text)
        for text in renderer.finish():
            write(text)
    finally:
        renderer.close()


def report_run(summary: RunSummary, quiet: bool) -> None:
    """The closing summary line, warnings and capture errors, on stderr; exit 1 if nothing was read."""
    for linktype, names in summary.unknown_linktypes.items():
        click.echo(f"kwire: error: {', '.join(names)}: unknown link type {linktype}, its packets were skipped",
                   err=True)
    for message in summary.capture_errors:
        click.echo(f"kwire: error: {message}", err=True)
    if not quiet:
        click.echo(f"kwire: {summary.line()}", err=True)
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
        lines.append(f"... and {more} more TLS connections not decrypted (kwire stats lists them)")
    if notes.connections > notes.decrypted and not summary.keylog_given:
        lines.append("TLS traffic is encrypted: give the clients' key log with --keylog FILE to decrypt it "
                     "(README: Kafka over TLS)")
    return lines


def tls_label(row: dict) -> str:
    """client -> server (server name, version, cipher suite, bytes each way) of a kwire.tls.info row."""
    facts = [f for f in (row["server_name"], row["version"], row["cipher_suite"]) if f]
    facts.append(f"{row['bytes_to_server']:,} B out, {row['bytes_to_client']:,} B back")
    return f"{row['client']} -> {row['server']} ({', '.join(facts)})"
