"""kwire.live.keys.KeyReader: keys one at a time from a terminal, and the terminal restored."""

from __future__ import annotations

import io
import os
import queue
import termios

from kwire.live.keys import KeyReader


class _Tty:
    """The slave side of a pseudo-terminal, as a file object with fileno()."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()

    def fileno(self) -> int:
        return self.slave

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)


def test_keys_arrive_one_by_one_and_the_terminal_is_restored():
    tty = _Tty()
    try:
        before = termios.tcgetattr(tty.slave)
        assert before[3] & termios.ICANON
        keys: queue.Queue[str] = queue.Queue()
        with KeyReader(keys.put, tty) as reader:
            assert reader.active
            during = termios.tcgetattr(tty.slave)
            assert not during[3] & termios.ICANON and not during[3] & termios.ECHO
            assert during[3] & termios.ISIG  # Ctrl-C still interrupts
            os.write(tty.master, b"xq")  # no newline: cbreak hands keys over at once
            assert keys.get(timeout=5) == "x"
            assert keys.get(timeout=5) == "q"
        assert termios.tcgetattr(tty.slave) == before
    finally:
        tty.close()


def test_not_a_terminal_changes_nothing():
    reader = KeyReader(lambda ch: None, io.StringIO())
    reader.start()
    assert not reader.active
    reader.close()
    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb", closefd=False) as pipe:
            reader = KeyReader(lambda ch: None, pipe)
            reader.start()
            assert not reader.active
            reader.close()
    finally:
        os.close(r)
        os.close(w)
