"""`--keylog FILE`: where a command gets TLS secrets, an NSS key log (SSLKEYLOGFILE) file.

The file is secret material: its path may be named in a message, its content never (kwire.tls counts
the lines it could not read, it does not show them). `load_keys` reads it once (`kwire inspect`,
`kwire stats`); with `follow`, the lines clients append later are read when a TLS handshake finds no
entry yet (`kwire live`). An unreadable file is a one-line error; a file with no TLS secret at all
is a one-line warning (a wrong file given by mistake).
"""

from __future__ import annotations

import click

from kwire.keyfile import read_key_file
from kwire.safe_text import term_safe
from kwire.tls import KeySource


def keylog_option(*, follow: bool = False):
    more = " Lines appended while kwire runs are read too." if follow else ""
    return click.option("--keylog", "keylog", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                        help="Decrypt TLS with this NSS key log (SSLKEYLOGFILE format; pcapng decryption "
                             "secrets blocks are read without it)." + more)


def load_keys(path: str | None, *, follow: bool = False) -> KeySource | None:
    if path is None:
        return None
    keys, warning = read_key_file(path, follow=follow)
    if warning:
        click.echo(f"kwire: warning: {term_safe(warning)}", err=True)
    return keys


class Reading:
    """What a command reads, and how: capture paths, broker port hints, TLS keys. `exchanges()` runs the
    pipeline over them (kwire.pipeline.analyze_files)."""

    def __init__(self, paths: list[str], ports=(), keys: KeySource | None = None, track_spans: bool = False):
        self.paths = paths
        self.ports = tuple(ports)
        self.keys = keys
        self.track_spans = track_spans  # exchanges say where their frames lie (kwire inspect -w)

    def exchanges(self, summary, progress=None, offload=None):
        from kwire.pipeline import analyze_files

        return analyze_files(self.paths, port_hints=self.ports, summary=summary, progress=progress,
                             offload=offload, keys=self.keys, track_spans=self.track_spans)

    def windows(self, summary, progress=None, offload=None, on_pipeline=None):
        """exchanges(), in the lists each window of records completed (kwire.pipeline.analyze_files)."""
        from kwire.pipeline import analyze_files

        return analyze_files(self.paths, port_hints=self.ports, summary=summary, progress=progress,
                             offload=offload, keys=self.keys, track_spans=self.track_spans,
                             on_pipeline=on_pipeline, windows=True)
