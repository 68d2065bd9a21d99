"""Messages between kwire's own processes: pickled values in length-prefixed frames over a pipe.

`channel()` makes a pipe (as large as the kernel allows, up to 8 MiB) and returns its two ends:
- `Sender.send(value)` never blocks: what the pipe cannot take yet waits in memory and goes out with
  later sends (`flush()`); when more than `backlog` bytes wait, the value is refused (False) and the
  caller decides what that costs (`force=True`: queued anyway, for small values that must arrive). `close(timeout)` writes what is left (waiting at most `timeout`)
  and closes its end; a receiver that has gone away makes send() raise BrokenPipeError.
- `Receiver.receive(timeout)` returns the next value, None when none came within `timeout`, and
  raises EOFError once the sender has closed its end and every value was read.
Only kwire's own processes write to these pipes (the capture process its batches, the dashboard
reads them), so unpickling them trusts no outside input.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import select
import struct
from collections import deque

F_SETPIPE_SZ = 1031
PIPE_BYTES = 8 << 20
BACKLOG = 64 << 20  # bytes a sender keeps waiting before it refuses values
_LENGTH = struct.Struct("<Q")
_READ = 1 << 20


def channel(backlog: int = BACKLOG) -> tuple[Receiver, Sender]:
    read_fd, write_fd = os.pipe()
    size = PIPE_BYTES
    while size >= 1 << 16:  # an unprivileged process may not go past /proc/sys/fs/pipe-max-size
        try:
            fcntl.fcntl(write_fd, F_SETPIPE_SZ, size)
            break
        except OSError:
            size >>= 1
    return Receiver(read_fd), Sender(write_fd, backlog)


class Sender:
    def __init__(self, fd: int, backlog: int = BACKLOG):
        self.fd = fd
        self.backlog = backlog
        self.pending: deque[memoryview] = deque()
        self.pending_bytes = 0
        os.set_blocking(fd, False)

    def send(self, value, force: bool = False) -> bool:
        """Queue `value` and write what the pipe takes; False (nothing queued) when the backlog is
        full, unless `force` (small values that must arrive)."""
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        self.flush()
        if not force and self.pending_bytes + len(data) > self.backlog:
            return False
        frame = memoryview(_LENGTH.pack(len(data)) + data)
        self.pending.append(frame)
        self.pending_bytes += len(frame)
        self.flush()
        return True

    def flush(self) -> None:
        """Write what the pipe takes now."""
        pending = self.pending
        while pending:
            head = pending[0]
            try:
                n = os.write(self.fd, head)
            except BlockingIOError:
                return
            self.pending_bytes -= n
            if n == len(head):
                pending.popleft()
            else:
                pending[0] = head[n:]

    def close_here(self) -> None:
        """Close this process's copy of the end (after a fork: the other process sends)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def close(self, timeout: float = 5.0) -> None:
        """Write what is left (at most `timeout` seconds of waiting), then close."""
        if self.fd < 0:
            return
        try:
            while self.pending:
                self.flush()
                if self.pending and not select.select([], [self.fd], [], timeout)[1]:
                    break
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.fd = -1


class Receiver:
    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()
        self.pos = 0  # where the next frame starts in buf
        self.closed = False

    def receive(self, timeout: float | None = None):
        """The next value; None when none came within `timeout`; EOFError after the last one."""
        while True:
            value = self._next()
            if value is not _NOTHING:
                return value
            if self.closed:
                raise EOFError("the sender closed its end")
            if not select.select([self.fd], [], [], timeout)[0]:
                return None
            if self.pos:
                del self.buf[:self.pos]
                self.pos = 0
            chunk = os.read(self.fd, _READ)
            if chunk:
                self.buf += chunk
            else:
                self.closed = True

    def _next(self):
        buf, pos = self.buf, self.pos
        if len(buf) - pos < _LENGTH.size:
            return _NOTHING
        (size,) = _LENGTH.unpack_from(buf, pos)
        start = pos + _LENGTH.size
        if len(buf) < start + size:
            return _NOTHING
        with memoryview(buf) as view:
            value = pickle.loads(view[start:start + size])
        self.pos = start + size
        return value

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_NOTHING = object()
