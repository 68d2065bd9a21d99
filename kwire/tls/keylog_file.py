"""The one part of kwire.tls that reads a file: a key log that clients may still be appending to.

`KeyLogFile(path)` reads the file once at construction and is a KeySource: `lookup(client_random)`
answers from memory, and on a miss reads the bytes appended since (at most once every
`min_interval_s`, by the injected `clock`), so `kwire live` finds the secrets of handshakes that
happen while it runs. A partial last line waits for its newline. A file that shrinks (rotated or
truncated) is read again from its start. The sans-IO core (kwire.tls.stream) never imports this
module: the command that owns the file makes it and passes it in.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from kwire.tls.keylog import MAX_LINE, ClientSecrets, KeyLog

READ_CHUNK = 1 << 20


class KeyLogFile:
    def __init__(self, path: str | os.PathLike, *, keylog: KeyLog | None = None, follow: bool = True,
                 min_interval_s: float = 0.1, clock: Callable[[], float] = time.monotonic):
        self.path = os.fspath(path)
        self.keylog = keylog if keylog is not None else KeyLog()
        self.follow = follow
        self.min_interval_s = min_interval_s
        self.clock = clock
        self._offset = 0
        self._partial = b""
        self._last_read = None
        self.reads = 0
        self.refresh()

    def __repr__(self) -> str:
        return f"<KeyLogFile {self.path!r}: {len(self.keylog)} client randoms>"

    def lookup(self, client_random: bytes) -> ClientSecrets | None:
        found = self.keylog.lookup(client_random)
        if found is None and self.follow:
            now = self.clock()
            if self._last_read is None or now - self._last_read >= self.min_interval_s:
                self.refresh()
                found = self.keylog.lookup(client_random)
        return found

    def refresh(self) -> int:
        """Read what was appended since the last read; returns the secret lines stored."""
        self._last_read = self.clock()
        self.reads += 1
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < self._offset:  # truncated or replaced: start over
                self._offset = 0
                self._partial = b""
            f.seek(self._offset)
            stored = 0
            while True:
                chunk = f.read(READ_CHUNK)
                if not chunk:
                    break
                self._offset += len(chunk)
                stored += self._take(chunk)
        return stored

    def _take(self, chunk: bytes) -> int:
        data = self._partial + chunk
        cut = data.rfind(b"\n") + 1
        self._partial = data[cut:]
        if len(self._partial) > MAX_LINE:  # no newline in sight: a bad line, not a growing buffer
            self.keylog.bad_lines += 1
            self._partial = b""
        return self.keylog.add_text(data[:cut]) if cut else 0
