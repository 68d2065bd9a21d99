"""Standard input read once: when a command must read its capture twice (a pre-pass for `--group`,
a `--since`/`--until` relative to the capture's start, `inspect -w`), the bytes of `-` are first
copied to a temporary file, and both passes read that file. Standard input is never read twice (the
second pass would find it empty and say nothing or something wrong).

`spool_stdin(max_bytes)` copies it a chunk at a time into a file deleted at exit and returns the
file's path; past `max_bytes` (KWIRE_MAX_SPOOL_BYTES, default 4 GiB) it stops with a one-line
CaptureError that says to give a file. Compressed input is copied as it comes (the reader detects
compression by magic, as for `-`).
"""

from __future__ import annotations

import atexit
import os
import tempfile

from kwire.errors import CaptureError

DEFAULT_MAX_SPOOL = 4 << 30
CHUNK = 1 << 20


def max_spool_bytes() -> int:
    value = os.environ.get("KWIRE_MAX_SPOOL_BYTES", "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_SPOOL


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def spool_stdin(max_bytes: int | None = None, fd: int = 0) -> str:
    limit = max_spool_bytes() if max_bytes is None else max_bytes
    handle, path = tempfile.mkstemp(prefix="kwire-stdin-", suffix=".capture")
    atexit.register(_remove, path)
    total = 0
    with os.fdopen(handle, "wb") as out:
        while chunk := os.read(fd, CHUNK):
            total += len(chunk)
            if total > limit:
                raise CaptureError(f"stdin: more than {limit:,} bytes to hold for a second pass "
                                   "(KWIRE_MAX_SPOOL_BYTES): give the capture as a file")
            out.write(chunk)
    return path
