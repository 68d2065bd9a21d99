"""Classic pcap files written by kwire: what `kwire inspect -w` cuts out of a capture.

`PcapWriter(path, linktype)` writes a nanosecond-resolution pcap (magic 0xa1b23c4d, the byte order of
this machine), one record per `write(ts_ns, data)`; `close()` flushes it. Wireshark, tcpdump and
kwire read it. A write that fails is a CaptureError naming the file (one line, exit 1).
"""

from __future__ import annotations

import struct

from kwire.errors import CaptureError

SNAPLEN = 262144


class PcapWriter:
    def __init__(self, path: str, linktype: int):
        self.path = path
        self.records = 0
        try:
            self._file = open(path, "wb")
            self._file.write(struct.pack("=IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, SNAPLEN, linktype))
        except OSError as exc:
            raise CaptureError(f"{path}: cannot write: {exc.strerror or exc}") from None

    def write(self, ts_ns: int, data: bytes) -> None:
        sec, frac = divmod(ts_ns, 1_000_000_000)
        try:
            self._file.write(struct.pack("=IIII", sec & 0xFFFFFFFF, frac, len(data), len(data)) + data)
        except OSError as exc:
            raise CaptureError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
        self.records += 1

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as exc:
            raise CaptureError(f"{self.path}: cannot write: {exc.strerror or exc}") from None

    def __enter__(self) -> PcapWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
