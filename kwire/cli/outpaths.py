"""Files a command writes must never be files it reads: `-w FILE` (inspect), `--html FILE` (stats,
spark) are refused, as a usage error and before anything is opened, when FILE is one of the inputs
(a capture, the key log), by name or as the same file through another name (a link, `./`).

`refuse_overwrite(out, inputs, option)` raises click.UsageError; "-" (standard input) and inputs
that do not exist are no file to protect. `refuse_stdin_twice(keylog, paths)`: a key log that is the
standard input (`/dev/stdin`) while a capture is read from `-` would swallow the capture first.
"""

from __future__ import annotations

import os

import click


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_overwrite(out: str | None, inputs, option: str) -> None:
    if out is None or out == "-":
        return
    for path in inputs:
        if path and path != "-" and _same(out, path):
            raise click.UsageError(f"{option} {out}: that is an input of this command; it would be "
                                   "overwritten before it is read (give another file)")


def refuse_stdin_twice(keylog: str | None, paths) -> None:
    if keylog is None or "-" not in paths:
        return
    try:
        same = os.path.samestat(os.stat(keylog), os.fstat(0))
    except OSError:
        return
    if same:
        raise click.UsageError(f"--keylog {keylog} is standard input, which the capture `-` is read from")
