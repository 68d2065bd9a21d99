"""`--keylog FILE`: an NSS key log (SSLKEYLOGFILE) file read into TLS secrets (a kwire.tls KeySource).

Shared by the command line (kwire.cli.keys, which also shows the warning) and the Spark data source
(kwire.spark.source). The file is secret material: its path may be named in a message, its content
never (kwire.tls counts the lines it could not read, it does not show them). With `follow`, lines
clients append later are read when a TLS handshake finds no entry yet (`kwire live`). The file is read
a chunk at a time with a size bound (kwire.capture.follow.read_lines): a device is refused, a pipe
nobody closes is not waited for, and memory holds the secrets, never the file.
"""

from __future__ import annotations

from kwire.capture.follow import FollowedFile, read_lines
from kwire.counts import count
from kwire.tls import FollowedKeyLog, KeyLog, KeySource


def read_key_file(path: str, *, follow: bool = False) -> tuple[KeySource, str | None]:
    """The secrets of the file at `path`, and a warning when it holds none (a wrong file given by
    mistake). An unreadable file raises kwire.errors.CaptureError (one line)."""
    keys = KeyLog()
    opened: list = []
    for chunk in read_lines(path, opened=opened):  # a chunk at a time, bounded (kwire.capture.follow)
        keys.add_text(chunk)
    warning = None
    if not len(keys):
        warning = (f"{path}: no TLS secrets in it ({count(keys.lines, 'line')}, "
                   f"{keys.bad_lines:,} not in the NSS key log format)")
    elif keys.dropped:
        warning = (f"{path}: {keys.dropped:,} secrets of client randoms past the first {keys.max_entries:,} "
                   "not kept (their connections are not decrypted)")
    if follow and opened and opened[0]:  # only a regular file can be followed
        return FollowedKeyLog(keys, FollowedFile(path, offset=opened[1]).read_new), warning
    return keys, warning
