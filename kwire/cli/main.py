"""The `kwire` command group and its error handling.

Every KwireError (a capture that cannot be read, a bad option value) ends as one line on stderr,
`kwire: error: ...` (what it quotes escaped as kwire.safe_text.term_safe escapes wire text: a message
may quote a client's bytes), with exit status 1; wrong usage exits 2 (click's rule); a closed pipe
(`kwire inspect f.pcap | head`) ends quietly. No traceback reaches the user.
"""

from __future__ import annotations

import errno
import os
import sys

import click

from kwire import __version__
from kwire.codec.aot import report as decoders_report
from kwire.compiled import report as compiled_report
from kwire.errors import KwireError
from kwire.gc_policy import settle_gc
from kwire.safe_text import term_safe


# What writing the output can fail with (reading captures maps its own errors to CaptureError).
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EFBIG, errno.EROFS, errno.EBADF})


def _stdout_to_devnull() -> None:
    """Python flushes stdout at exit: point it at devnull so that flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class KwireGroup(click.Group):
    def invoke(self, ctx):
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a write that fails fails here, with a message, not at exit
            return result
        except KwireError as exc:
            click.echo(f"kwire: error: {term_safe(str(exc))}", err=True)
            ctx.exit(1)
        except BrokenPipeError:
            _stdout_to_devnull()
            ctx.exit(0)
        except OSError as exc:
            if exc.errno not in WRITE_ERRNOS:
                raise
            click.echo(f"kwire: error: cannot write output: {os.strerror(exc.errno)}", err=True)
            _stdout_to_devnull()
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("kwire: interrupted", err=True)
            ctx.exit(130)
        except MemoryError:  # a memory limit (ulimit -v, a container) below what the run needs
            _out_of_memory(ctx)
        except ImportError as exc:  # a module loaded late, under such a limit: the loader could not map it
            if not _unmapped(exc):
                raise
            _out_of_memory(ctx)


def _unmapped(exc: ImportError) -> bool:
    """An ImportError that is the kernel refusing memory to the loader (a built module under `ulimit -v`)."""
    text = str(exc)
    return "failed to map segment" in text or "annot allocate memory" in text


def _out_of_memory(ctx: click.Context) -> None:
    click.echo("kwire: error: out of memory (docs/bounds.md says what kwire needs and how to lower it)", err=True)
    ctx.exit(1)


def _show_version(ctx: click.Context, _param, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"kwire, version {__version__}\n{compiled_report()}\n{decoders_report()}")
        ctx.exit()


@click.group(cls=KwireGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_show_version,
              help="Show the version, and what of kwire runs compiled, and exit.")
def cli() -> None:
    """See what Apache Kafka clients and brokers say to each other on the wire."""


# Commands are imported when used (kwire inspect does not pay for stats' analytics, Spark or rich's live
# display): name -> (module, attribute). A module that is not there (an optional part) is left out.
COMMANDS = {
    "inspect": ("kwire.cli.inspect", "inspect_command"),
    "stats": ("kwire.cli.stats", "stats_command"),
    "spark": ("kwire.cli.spark", "spark_command"),
    "live": ("kwire.cli.live", "live_command"),
}


def _load(name: str):
    module, attr = COMMANDS[name]
    try:
        mod = __import__(module, fromlist=[attr])
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None
        raise
    return getattr(mod, attr)


def _list_commands(self, ctx) -> list[str]:
    return [name for name in COMMANDS if name in self.commands or _load(name) is not None]


def _get_command(self, ctx, name: str):
    command = self.commands.get(name)
    if command is None and name in COMMANDS:
        command = _load(name)
        if command is not None:
            self.add_command(command, name)
            settle_gc()
    return command


KwireGroup.list_commands = _list_commands
KwireGroup.get_command = _get_command


# glibc's malloc hands every freed block above its (adaptive) thresholds back to the kernel, and a
# big transfer allocates a fresh frame of 100 KB - 100 MB per Kafka frame: on a 223 MB capture that
# was 55,000 page faults and a fifth of the run's CPU time in the kernel. Keep up to 64 MiB of freed
# memory for reuse and serve blocks below 32 MiB from the heap. (Peak memory is unchanged: a
# process's freed memory is reused instead of returned.)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def tune_malloc() -> None:
    """Apply the settings above where the C library is glibc; anywhere else, do nothing."""
    if not sys.platform.startswith("linux") or os.environ.get("KWIRE_NO_MALLOC_TUNING"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt  # AttributeError on C libraries without it (musl)
        mallopt(_M_TRIM_THRESHOLD, 64 << 20)
        mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    except (OSError, AttributeError, ImportError):  # pragma: no cover - not glibc
        pass


def main() -> None:
    tune_malloc()
    cli(prog_name="kwire")
