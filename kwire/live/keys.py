"""Single key presses from the terminal, for the dashboard's `q`.

`KeyReader(on_key)` puts a terminal stdin in cbreak mode (keys arrive one at a time, unechoed;
Ctrl-C still raises KeyboardInterrupt in the main thread) and calls `on_key(char)` from a daemon
thread for every key pressed. `close()` (or leaving the `with` block) restores the terminal
settings exactly as they were, whatever happened. When stdin is not a terminal (a pipe, a test
without a tty), nothing is read and nothing is changed.
"""

from __future__ import annotations

import os
import select
import sys
import threading
from typing import Callable

POLL_S = 0.1


class KeyReader:
    def __init__(self, on_key: Callable[[str], None], stream=None):
        self.on_key = on_key
        self.stream = stream if stream is not None else sys.stdin
        self._saved = None
        self._fd: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def active(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        try:
            import termios
            import tty
        except ImportError:  # not a POSIX terminal
            return
        try:
            fd = self.stream.fileno()
        except (AttributeError, ValueError, OSError):
            return
        if not os.isatty(fd):
            return
        try:
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd, termios.TCSANOW)
        except termios.error:
            self._saved = None
            return
        self._fd = fd
        self._thread = threading.Thread(target=self._run, name="kwire-keys", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd = self._fd
        assert fd is not None
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([fd], [], [], POLL_S)
                if not ready:
                    continue
                data = os.read(fd, 32)
            except (OSError, ValueError):
                return
            if not data:
                return
            for ch in data.decode("utf-8", "replace"):
                self.on_key(ch)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2 * POLL_S + 0.5)
            self._thread = None
        if self._saved is not None and self._fd is not None:
            import termios

            try:
                termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)
            except termios.error:
                pass
            self._saved = None

    def __enter__(self) -> KeyReader:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()
