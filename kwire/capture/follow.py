"""A text file another program keeps appending to (a TLS key log being written by clients).

`FollowedFile(path)` hands out the complete lines appended since it last read (`read_new()`), at
most once every `min_interval_s` of the injected `clock` unless forced; a partial last line waits
for its newline, a file that shrinks (rotated or truncated) is read again from its start, and a
line longer than MAX_LINE is dropped (counted in `dropped_lines`) rather than buffered. The TLS layer
never opens the file: kwire.tls.keylog.FollowedKeyLog asks this for more text on a lookup miss.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from kwire.errors import CaptureError

READ_CHUNK = 1 << 20
MAX_LINE = 4096


class FollowedFile:
    def __init__(self, path: str | os.PathLike, *, min_interval_s: float = 0.1,
                 clock: Callable[[], float] = time.monotonic):
        self.path = os.fspath(path)
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.reads = 0
        self.dropped_lines = 0
        self._offset = 0
        self._partial = b""
        self._last_read: float | None = None

    def __repr__(self) -> str:
        return f"<FollowedFile {self.path!r} at byte {self._offset}>"

    def read_new(self, force: bool = False) -> bytes:
        """The complete lines appended since the last read (b"" when it is too soon to look again)."""
        now = self.clock()
        if not force and self._last_read is not None and now - self._last_read < self.min_interval_s:
            return b""
        self._last_read = now
        self.reads += 1
        try:
            with open(self.path, "rb") as f:
                if os.fstat(f.fileno()).st_size < self._offset:  # truncated or replaced: start over
                    self._offset = 0
                    self._partial = b""
                f.seek(self._offset)
                lines = []
                while chunk := f.read(READ_CHUNK):
                    self._offset += len(chunk)
                    lines.append(self._complete_lines(chunk))
        except OSError as exc:
            raise CaptureError(f"{self.path}: {exc.strerror or exc}") from None
        return b"".join(lines)

    def _complete_lines(self, chunk: bytes) -> bytes:
        data = self._partial + chunk
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:]
        if len(self._partial) > MAX_LINE:  # no newline in sight: a bad line, not a growing buffer
            self.dropped_lines += 1
            self._partial = b""
        return data[:cut]
