"""`kwire spark ARCHIVE...`: the `kwire stats` summary of many capture files, computed by Apache Spark.

Thin: expand the arguments (paths, globs, directories, .gz) and check that each is a readable file
that starts as a capture before the JVM starts (as `kwire stats` does: the others are left out and
reported, exit 1 at the end; none is one line), get a SparkSession (local[*] unless --master, or spark-submit's; the JVM's own
messages off the terminal unless --verbose), run kwire.spark.job, then print the document exactly as
`kwire stats` does (tables, `--json`, `--html`), write Parquet with `--out DIR`, and report files
damaged part way (their good packets used; exit status 1 at the end, as `kwire stats` does) and the
closing summary line. A job that fails on a fault (kwire.errors.is_fault) of some files alone runs again
over the others, those files named (kwire.spark.probe finds them, kwire.cli.faults words them); any other
failed job is one line `kwire: error: the Spark job failed: ...`; a cluster that has lost every executor
for --executor-timeout seconds ends the job with one line too.
"""

from __future__ import annotations

import os

import click

from kwire.cli.inspect import report_run
from kwire.cli.outpaths import refuse_overwrite
from kwire.cli.keys import keylog_option, load_keys
from kwire.counts import count
from kwire.cli.options import capture_paths, filter_options
from kwire.cli.faults import left_out
from kwire.cli.stats import prepare_outputs, write_outputs
from kwire.render.units import human_bytes
from kwire.errors import KwireError


def check_readable(paths: list[str]) -> None:
    """Before the JVM starts: every path must be a file this process can read (a typo fails in a
    moment, with one line). Files that are not captures are the job's to report, as damaged ones."""
    bad = []
    for path in paths:
        if not os.path.exists(path):
            bad.append(f"{path}: no such file")
        elif not os.path.isfile(path):
            bad.append(f"{path}: not a file")
        elif not os.access(path, os.R_OK):
            bad.append(f"{path}: permission denied")
    if bad:
        more = f" (and {len(bad) - 1:,} more)" if len(bad) > 1 else ""
        raise KwireError(bad[0] + more)


def check_captures(paths: list[str]) -> tuple[list[str], list[str]]:
    """Which files start as a capture (kwire.capture.files.FORMATS_READ), checked as `kwire stats` checks
    its files before it reads a packet: (the good paths, one message for each of the others). The
    others are left out and reported, as `kwire stats` does; none good is one error. Damage further
    in is the job's to report."""
    from kwire.capture.files import open_capture
    from kwire.errors import CaptureError

    good, bad = [], []
    for path in paths:
        try:
            open_capture(path).close()
            good.append(path)
        except CaptureError as exc:
            bad.append(str(exc))
    if not good:
        raise KwireError(bad[0] if len(bad) == 1 else "; ".join(bad))
    return good, bad


@click.command("spark")
@click.argument("archives", nargs=-1, type=click.Path(dir_okay=True, allow_dash=False))
@click.option("--master", default=None, metavar="URL",
              help="Spark master (default local[*]; ignored under spark-submit, which sets it).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON document (as `kwire stats --json`).")
@click.option("--html", type=click.Path(dir_okay=False, writable=True), default=None, metavar="FILE",
              help="Also write the self-contained HTML report.")
@click.option("--out", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write Parquet tables DIR/exchanges and DIR/partitions (replaced if present).")
@click.option("--partitions", type=click.IntRange(1, 100000), default=None, metavar="N",
              help="Reduce tasks, which pair each connection's exchanges "
                   "(default: 8 x Spark's default parallelism, at least 8).")
@click.option("--follow", "follow_dir", type=click.Path(file_okay=False, exists=True), default=None, metavar="DIR",
              help="Follow DIR as tcpdump -G/-C rotates captures into it (Spark Structured Streaming): each new "
                   "file's exchanges are appended to --out DIR/exchanges, the summary rewritten in --out "
                   "DIR/summary.json per micro-batch. Runs until interrupted, or see --follow-idle.")
@click.option("--settle", type=click.FloatRange(min=0), default=10.0, show_default=True, metavar="SECONDS",
              help="--follow: the newest file is complete once it has not changed for this long.")
@click.option("--follow-idle", type=click.FloatRange(min=0), default=0.0, metavar="SECONDS",
              help="--follow: stop when no new file has come for this long; the capture has then ended "
                   "(connections still open are ended as at the end of a capture) and the summary is printed.")
@filter_options()
@keylog_option()
@click.option("--executor-timeout", type=click.FloatRange(min=0), default=60.0, show_default=True, metavar="SECONDS",
              help="On a cluster: end the job with an error when no executor has been left for this long "
                   "(0: wait forever, as Spark does).")
@click.option("--no-summary", is_flag=True, help="Leave out the closing summary line (on stderr).")
@click.option("-v", "--verbose", is_flag=True,
              help="Show Spark's and the JVM's own messages on stderr (otherwise they go to "
                   "$TMPDIR/kwire-spark-UID.log).")
def spark_command(archives, master, as_json, html, out, partitions, follow_dir, settle, follow_idle, selection, ports,
                  keylog, executor_timeout, no_summary, verbose):
    """Summarise many capture files with Apache Spark (connections split across rotated files are stitched)."""
    if follow_dir is not None:
        if archives:
            raise click.UsageError("--follow DIR reads DIR: give no ARCHIVES with it")
        if out is None:
            raise click.UsageError("--follow needs --out DIR (where the exchanges and the summary go)")
        paths, not_captures = [], []
    else:
        if not archives:
            raise click.UsageError("missing ARCHIVES (or --follow DIR)")
        paths = [os.path.abspath(p) for p in capture_paths(archives)]
        check_readable(paths)
        paths, not_captures = check_captures(paths)
    refuse_overwrite(html, [*paths, keylog], "--html")
    keep = selection.exchange_filter(paths)
    keys = load_keys(keylog)  # read here: executors get the secrets in the job, never a path to open
    try:
        from kwire.spark.job import run_job
        from kwire.spark.progress import JobProgress
        from kwire.spark.results import DecodeOptions
        from kwire.spark.session import ExecutorWatch, get_session
    except ImportError as exc:
        raise click.ClickException(f"kwire spark needs pyspark ({exc}); pip install 'kwire[spark]'") from None
    spark = get_session(master, verbose=verbose)
    from kwire.net.tables import vxlan_ports

    options = DecodeOptions(port_hints=tuple(ports), keep=keep, keylog=keys, vxlan_ports=tuple(vxlan_ports()))
    if follow_dir is not None:
        return _follow(spark, follow_dir, out, options, settle, follow_idle, partitions, as_json, html, selection,
                       no_summary)
    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p)
        except OSError:
            pass
    progress = JobProgress(spark, len(paths), total)
    watch = ExecutorWatch(spark, executor_timeout)

    def attempt(chosen: list[str]):
        result = run_job(spark, chosen, options, out=out, partitions=partitions)
        return result, prepare_outputs(result.document, as_json=as_json, html=html, sources=chosen,
                                       filters=selection.describe())

    try:
        (result, made), left = _leaving_out_faults(spark, attempt, paths, options, watch, executor_timeout)
    finally:
        watch.close()
        progress.close()
    result.summary.keylog_given = keys is not None
    result.summary.capture_errors[:0] = not_captures + left
    made.write()
    if out is not None:
        click.echo(f"kwire: wrote {count(result.document['totals']['exchanges'], 'exchange')} and their partitions as "
                   f"Parquet to {os.path.join(out, 'exchanges')} and {os.path.join(out, 'partitions')} "
                   f"({human_bytes(_tree_bytes(out))})", err=True)
    report_run(result.summary, no_summary, matched=result.document["totals"]["exchanges"], selection=selection)


def _tree_bytes(folder: str) -> int:
    """The bytes of the files under `folder` (what --out wrote)."""
    total = 0
    for parent, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(parent, name))
            except OSError:
                pass
    return total


def _leaving_out_faults(spark, attempt, paths: list[str], options, watch, executor_timeout: float):
    """(attempt(paths), []), or when the job fails on a fault of some files alone (kwire.spark.probe),
    (attempt(the others), a line for each file left out). Any other failure is one line."""
    from kwire.spark.session import job_error

    try:
        return attempt(paths), []
    except KwireError:
        raise
    except Exception as exc:  # noqa: BLE001 - Py4JJavaError, PythonException, ...: one line, not a traceback
        if watch.lost:
            raise KwireError(f"no Spark executor left for {executor_timeout:g} s (every worker lost?); "
                             "the job was cancelled") from None
        failed = f"the Spark job failed: {job_error(exc)}"
    faulty = {}
    if len(paths) > 1:
        from kwire.spark.probe import faulty_files

        try:
            faulty = faulty_files(spark, paths, options)
        except Exception:  # noqa: BLE001 - the probe failing too: the job's own error says it
            faulty = {}
    good = [path for path in paths if path not in faulty]
    if not faulty:
        raise KwireError(failed)
    if not good:
        raise KwireError("; ".join(left_out(path, line) for path, line in faulty.items()))
    try:
        made = attempt(good)
    except KwireError:
        raise
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback
        raise KwireError(f"the Spark job failed: {job_error(exc)}") from None
    return made, [left_out(path, line) for path, line in faulty.items()]


def _follow(spark, folder, out, options, settle, idle, partitions, as_json, html, selection, no_summary) -> None:
    """`--follow DIR`: the streaming query until interrupted or idle (kwire.spark.follow)."""
    from kwire.spark.follow import follow
    from kwire.spark.job import run_summary
    from kwire.spark.session import job_error

    def on_batch(result, batch_id):
        if not no_summary:
            click.echo(f"kwire: micro-batch {batch_id if batch_id >= 0 else 'end'}: "
                       f"{count(result.exchanges, 'exchange')} so far; summary in {os.path.join(out, 'summary.json')}",
                       err=True)

    os.makedirs(out, exist_ok=True)
    try:
        result = follow(spark, os.path.abspath(folder), os.path.abspath(out), options, settle=settle, idle_stop=idle,
                        partitions=partitions or max(4, spark.sparkContext.defaultParallelism * 4),
                        on_batch=on_batch)
    except KeyboardInterrupt:
        click.echo("kwire: stopped; the next --follow with the same --out goes on from here", err=True)
        return
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback
        raise KwireError(f"the Spark query failed: {job_error(exc)}") from None
    if idle:
        document = result.aggregator.document()
        write_outputs(document, as_json=as_json, html=html, sources=[folder], filters=selection.describe())
        report_run(run_summary(result), no_summary, matched=document["totals"]["exchanges"], selection=selection)
