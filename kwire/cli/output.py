"""Writing a command's output whole, or saying it could not be: never a silent cut.

`binary_writer(out)` gives `write(data)` for bytes: through the stream's file descriptor in pieces of
at most MAX_WRITE (one os.write can move at most 2 GiB - 4 KiB on Linux, and a short write must be
followed by the rest), else through the stream's own buffer. A failed or short write that cannot be
completed raises OutputError ("cannot write output: ..."), a one-line error with exit status 1
(kwire.cli.main); a closed pipe stays a quiet end (BrokenPipeError, `kwire inspect f | head`).
"""

from __future__ import annotations

import errno
import os

from kwire.errors import KwireError

MAX_WRITE = 1 << 30


class OutputError(KwireError):
    """The output could not be written whole (disk full, I/O error, a closed descriptor)."""


def binary_writer(out):
    """write(data: bytes) for the text stream `out` (stdout), writing every byte or raising."""
    out.flush()
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO): its own buffer
        binary = getattr(out, "buffer", None)
        if binary is not None:
            return binary.write
        return lambda data: out.write(data.decode())
    return lambda data: write_all(fd, data)


def write_all(fd: int, data) -> None:
    view = memoryview(data)
    pos, end = 0, len(view)
    while pos < end:
        try:
            n = os.write(fd, view[pos:pos + MAX_WRITE])
        except BrokenPipeError:
            raise
        except InterruptedError:
            continue
        except OSError as exc:
            raise OutputError(f"cannot write output: {os.strerror(exc.errno) if exc.errno else exc}") from None
        if n <= 0:
            raise OutputError(f"cannot write output: {errno.errorcode.get(errno.EIO, 'EIO')} after {pos} bytes")
        pos += n
