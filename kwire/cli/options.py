"""Option handling shared by the commands: capture paths and exchange filters."""

from __future__ import annotations

import functools
import glob
import os
import re

import click

from kwire.query import ExchangeFilter, parse_api

GROUP_META = "kwire.group_filter"  # where filter_options leaves the --group filter for exchange_filter


# capture.pcap, .pcapng, .cap, rotated parts (tcpdump -C: capture.pcap1, -G: any name with a
# pcap suffix), each optionally gzipped.
CAPTURE_NAME = re.compile(r"\.(pcap|pcapng|cap)\d*(\.gz)?$")


def capture_paths(args) -> list[str]:
    """Paths as given, globs expanded (for shells that did not), directories walked for captures."""
    paths: list[str] = []
    for arg in args:
        if os.path.isdir(arg):
            for root, _, files in sorted(os.walk(arg)):
                paths += [os.path.join(root, f) for f in sorted(files) if CAPTURE_NAME.search(f)]
        elif any(ch in arg for ch in "*?[") and not os.path.exists(arg):
            found = sorted(glob.glob(arg))
            if not found:
                raise click.BadParameter(f"no file matches {arg}", param_hint="CAPTURES")
            paths += found
        else:
            paths.append(arg)
    if not paths:
        raise click.BadParameter("no capture files", param_hint="CAPTURES")
    return paths


def exchange_filter(apis, client_ids, topics, errors_only, min_latency) -> ExchangeFilter:
    keys = set()
    for api in apis:
        for part in api.split(","):
            try:
                keys.add(parse_api(part.strip()))
            except ValueError as exc:
                raise click.BadParameter(str(exc), param_hint="--api") from None
    keep = ExchangeFilter(api_keys=frozenset(keys), client_ids=frozenset(client_ids), topics=frozenset(topics),
                          errors_only=errors_only, min_latency_ms=min_latency)
    ctx = click.get_current_context(silent=True)
    group = ctx.meta.get(GROUP_META) if ctx is not None else None
    if group is None:
        return keep
    from kwire.group_filter import AllOf

    return AllOf(keep, group)


def group_filter(group: str | None, captures=None, archives=None, ports=()):
    """The --group filter: members read from the captures first (kwire.group_filter), left to the
    Spark job for archives, learnt as traffic comes otherwise (kwire live)."""
    if not group:
        return None
    from kwire.group_filter import GroupFilter, group_members

    if captures:
        return group_members(capture_paths(captures), group, ports)
    if archives:
        return GroupFilter(group, resolved=False)
    return GroupFilter(group, learn=True)


def group_option():
    return click.option("--group", default=None, metavar="GROUP",
                        help="Only this consumer group's exchanges: its coordinator traffic, and the fetches and "
                             "commits of its members.")


def filter_options(*, topic: bool = True):
    """The exchange filters every command shares (--api, --client-id, --topic, --group, --errors,
    --min-latency) and the --port hint, as one decorator. --group reaches exchange_filter through the
    click context, so a command gets it with the others."""
    options = [
        click.option("--api", "apis", multiple=True, help="Only this api (name or key); repeatable."),
        click.option("--client-id", "client_ids", multiple=True, help="Only this client id; repeatable."),
    ]
    if topic:
        options.append(click.option("--topic", "topics", multiple=True,
                                    help="Only exchanges naming this topic (name or id); repeatable."))
    options += [
        group_option(),
        click.option("--errors", "errors_only", is_flag=True,
                     help="Only exchanges with an error code, a decode error, or no partner."),
        click.option("--min-latency", type=float, default=None, metavar="MS", help="Only exchanges at least this slow."),
        click.option("--port", "ports", multiple=True, type=click.IntRange(1, 65535),
                     help="Hint: a broker port (Kafka is found on any port without it); repeatable."),
    ]

    def decorate(command):
        @functools.wraps(command)
        def run(*args, group=None, **kwargs):
            # --group goes to exchange_filter through the context: the commands' signatures stay
            ctx = click.get_current_context()
            ctx.meta[GROUP_META] = group_filter(group, kwargs.get("captures"), kwargs.get("archives"),
                                                kwargs.get("ports", ()))
            return command(*args, **kwargs)

        for option in reversed(options):
            run = option(run)
        return run

    return decorate
