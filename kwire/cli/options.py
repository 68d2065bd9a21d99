"""Option handling shared by the commands: capture paths and the exchange filter options."""

from __future__ import annotations

import functools
import math

import click

from kwire.capture.files import find_captures
from kwire.capture.source import STDIN
from kwire.capture.spool import spool_stdin
from kwire.errors import CaptureError
from kwire.selection import Selection, parse_when


def capture_paths(args) -> list[str]:
    """Paths as given, globs expanded (for shells that did not), directories walked for captures
    (kwire.capture.files.find_captures); none found is a usage error."""
    try:
        return find_captures(args)
    except CaptureError as exc:
        raise click.BadParameter(str(exc), param_hint="CAPTURES") from None


def stdin_once(paths: list[str], twice: bool, why: str) -> list[str]:
    """`paths` with `-` replaced by a temporary copy of standard input when the command reads its
    captures twice (`twice`; kwire.capture.spool): stdin is never read twice. Says so on stderr."""
    if not twice or STDIN not in paths:
        return paths
    try:
        copy = spool_stdin()
    except CaptureError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(f"kwire: standard input copied to a temporary file ({why} reads the capture twice)", err=True)
    return [copy if path == STDIN else path for path in paths]


def _when(ctx, param, value):
    if value is None:
        return None
    try:
        return parse_when(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _vxlan_ports(ctx, param, value):
    """--vxlan-port: the net layer opens these ports as VXLAN from now on (kwire.net.tables)."""
    if value:
        from kwire.net.tables import add_vxlan_ports

        add_vxlan_ports(value)


def _finite(ctx, param, value):
    """--min-latency: a finite number of milliseconds (nan or inf would keep or drop everything silently)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value!r} is not a finite number of milliseconds")
    return value


def _group_name(ctx, param, value):
    """--group: a group id; an empty one is a usage error (it would keep everything silently)."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty group id")
    return value


def filter_options(*, topic: bool = True, times: bool = True, port: bool = True):
    """The exchange filters the commands share, as one decorator: the command receives them as one
    `selection` (kwire.selection.Selection), and the --port hint as `ports` (`port`: live has
    its own --port). `times`: --since and --until (not for live, which watches the present)."""
    options = [
        click.option("--api", "apis", multiple=True, metavar="NAME_OR_KEY",
                     help="Only this api (name or key; repeatable, or comma-separated)."),
        click.option("--client-id", "client_ids", multiple=True, metavar="ID", help="Only this client id; repeatable."),
    ]
    if topic:
        options.append(click.option("--topic", "topics", multiple=True, metavar="NAME_OR_ID",
                                    help="Only exchanges naming this topic (name or id); repeatable."))
    options += [
        click.option("--group", "group", default=None, metavar="GROUP", callback=_group_name,
                     help="Only this consumer group's exchanges: its coordinator traffic, and the fetches and "
                          "commits of its members."),
        click.option("--partition", "partition", multiple=True, type=click.IntRange(min=0), metavar="N",
                     help="Only exchanges touching partition N (of the --topic topics, when given); repeatable."),
        click.option("--host", "hosts", multiple=True, metavar="ADDR",
                     help="Only exchanges whose client or broker is ADDR (an IP address, ADDR:PORT, [v6]:PORT "
                          "or a network such as 10.0.0.0/8); repeatable."),
    ]
    if times:
        options += [
            click.option("--since", callback=_when, default=None, metavar="TIME",
                         help="Only exchanges at or after TIME: a duration into the capture (10s, 250ms, 2m), a "
                              "time of day (10:00:05, UTC, the capture's first day), a date and time "
                              "(2026-11-20T10:00:05, UTC unless an offset is given) or epoch seconds (@1795305691.5)."),
            click.option("--until", callback=_when, default=None, metavar="TIME",
                         help="Only exchanges before TIME (forms as --since)."),
        ]
    options += [
        click.option("--errors", "errors_only", is_flag=True,
                     help="Only exchanges with an error code, a decode error, or no partner."),
        click.option("--min-latency", type=float, default=None, metavar="MS", callback=_finite, help="Only exchanges at least this slow."),
    ]
    if port:
        options.append(click.option("--port", "ports", multiple=True, type=click.IntRange(1, 65535),
                                    help="Hint: a broker port (Kafka is found on any port without it); repeatable."))
    options.append(click.option("--vxlan-port", multiple=True, type=click.IntRange(1, 65535), expose_value=False,
                                callback=_vxlan_ports, metavar="PORT",
                                help="Open UDP to PORT as VXLAN too (4789 and 8472 always are); repeatable."))
    # click's parameter name -> Selection's field (spark has a --partitions option of its own)
    names = {"apis": "apis", "client_ids": "client_ids", "topics": "topics", "partition": "partitions",
             "hosts": "hosts", "since": "since", "until": "until", "errors_only": "errors_only",
             "min_latency": "min_latency", "group": "group"}

    def decorate(command):
        @functools.wraps(command)
        def run(*args, **kwargs):
            # --group on spark: the Spark job reads the group's members (kwire.spark.group_members)
            kwargs["selection"] = Selection(**{field: kwargs.pop(name) for name, field in names.items()
                                               if name in kwargs}, group_members_later="archives" in kwargs)
            return command(*args, **kwargs)

        for option in reversed(options):
            run = option(run)
        return run

    return decorate
