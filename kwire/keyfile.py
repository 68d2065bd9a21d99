"""`--keylog FILE`: an NSS key log (SSLKEYLOGFILE) file read into TLS secrets (a kwire.tls KeySource).

Shared by the command line (kwire.cli.keys, which also shows the warning) and the Spark data source
(kwire.spark.source). The file is secret material: its path may be named in a message, its content
never (kwire.tls counts the lines it could not read, it does not show them). With `follow`, lines
clients append later are read when a TLS handshake finds no entry yet (`kwire live`).
"""

from __future__ import annotations

from kwire.capture.follow import FollowedFile
from kwire.tls import FollowedKeyLog, KeyLog, KeySource


def read_key_file(path: str, *, follow: bool = False) -> tuple[KeySource, str | None]:
    """The secrets of the file at `path`, and a warning when it holds none (a wrong file given by
    mistake). An unreadable file raises kwire.errors.CaptureError (one line)."""
    file = FollowedFile(path)
    keys = KeyLog()
    keys.add_text(file.read_new(force=True))
    warning = None
    if not len(keys):
        warning = (f"{path}: no TLS secrets in it ({keys.lines} lines, "
                   f"{keys.bad_lines} not in the NSS key log format)")
    return (FollowedKeyLog(keys, file.read_new) if follow else keys), warning
