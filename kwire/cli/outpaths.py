"""Files a command writes must never be files it reads: `-w FILE` (inspect), `--html FILE` (stats,
spark) are refused, as a usage error and before anything is opened, when FILE is one of the inputs
(a capture, the key log), by name or as the same file through another name (a link, `./`).

`refuse_overwrite(out, inputs, option)` raises click.UsageError; "-" (standard input) and inputs
that do not exist are no file to protect.
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
