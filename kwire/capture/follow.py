"""A text file another program keeps appending to (a TLS key log being written by clients).

`read_lines(path)` reads a key log once, chunk by chunk, with a size bound and no hang on a pipe
or device. `FollowedFile(path)` hands out the complete lines appended since it last read (`read_new()`), at
most once every `min_interval_s` of the injected `clock` unless forced; a partial last line waits
for its newline, a file that shrinks (rotated or truncated) is read again from its start, and a
line longer than MAX_LINE is dropped (counted in `dropped_lines`) rather than buffered. The TLS layer
never opens the file: kwire.tls.keylog.FollowedKeyLog asks this for more text on a lookup miss.
"""

from __future__ import annotations

import os
import select
import stat
import time
from typing import Callable, Iterator

from kwire.errors import CaptureError

READ_CHUNK = 1 << 20
MAX_LINE = 4096
MAX_KEY_FILE = 256 << 20  # a key log line is ~180 bytes: 1.4 million of them; /dev/zero is not one
IDLE_S = 10.0  # a pipe that gives nothing for this long and is not closed is not waited for


def read_lines(path: str | os.PathLike, *, max_bytes: int = MAX_KEY_FILE, idle_s: float = IDLE_S,
               opened: list | None = None) -> Iterator[bytes]:
    """The complete lines of a file (a last line without newline too), at most READ_CHUNK bytes at a
    time, never the whole file at once: a regular file, or a pipe (`<(cat keys)`, a FIFO) read until
    its writer closes it. Bounded: past `max_bytes` read, or `idle_s` of a pipe giving nothing without
    closing, a CaptureError (one line), never a hang; a device (/dev/zero, a terminal) is refused
    before it is read. A line longer than MAX_LINE is dropped (cut to an empty line). `opened`, when
    given, gets [is a regular file, bytes read] at the end (FollowedFile goes on from there)."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # O_NONBLOCK: a FIFO nobody writes does not block open
    except OSError as exc:
        raise CaptureError(f"{path}: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        regular = stat.S_ISREG(mode)
        if not (regular or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            raise CaptureError(f"{path}: not a regular file or a pipe (a device is never read to its end)")
        os.set_blocking(fd, regular)
        total, partial = 0, b""
        while True:
            if not regular and not select.select([fd], [], [], idle_s)[0]:
                raise CaptureError(f"{path}: nothing read for {idle_s:g} s and not closed: a pipe nobody "
                                   "writes to or closes")
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise CaptureError(f"{path}: {exc.strerror or exc}") from None
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise CaptureError(f"{path}: more than {max_bytes >> 20} MiB: not a key log")
            data = partial + chunk
            cut = data.rfind(b"\n") + 1
            partial = data[cut:] if len(data) - cut <= MAX_LINE else b""
            if cut:
                yield data[:cut]
        if partial:
            yield partial
        if opened is not None:
            opened[:] = [regular, total]
    finally:
        os.close(fd)


class FollowedFile:
    def __init__(self, path: str | os.PathLike, *, min_interval_s: float = 0.1,
                 clock: Callable[[], float] = time.monotonic, offset: int = 0):
        self.path = os.fspath(path)
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.reads = 0
        self.dropped_lines = 0
        self._offset = offset  # bytes already read (by read_lines)
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
