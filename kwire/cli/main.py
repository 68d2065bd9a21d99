"""The `kwire` command group and its error handling.

Every KwireError (a capture that cannot be read, a bad option value) ends as one line on stderr,
`kwire: error: ...`, with exit status 1; wrong usage exits 2 (click's rule); a closed pipe
(`kwire inspect f.pcap | head`) ends quietly. No traceback reaches the user.
"""

from __future__ import annotations

import os
import sys

import click

from kwire import __version__
from kwire.errors import KwireError


class KwireGroup(click.Group):
    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KwireError as exc:
            click.echo(f"kwire: error: {exc}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            # Python flushes stdout at exit; point it at devnull so that flush cannot fail again.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(0)
        except KeyboardInterrupt:
            click.echo("kwire: interrupted", err=True)
            ctx.exit(130)


@click.group(cls=KwireGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kwire")
def cli() -> None:
    """See what Apache Kafka clients and brokers say to each other on the wire."""


def _register() -> None:
    from kwire.cli.inspect import inspect_command

    cli.add_command(inspect_command)
    for module, name in (("kwire.cli.stats", "stats_command"), ("kwire.cli.spark", "spark_command"),
                         ("kwire.cli.live", "live_command")):
        try:
            mod = __import__(module, fromlist=[name])
        except ModuleNotFoundError as exc:
            if exc.name == module:
                continue
            raise
        cli.add_command(getattr(mod, name))


_register()


def main() -> None:
    cli(prog_name="kwire")
