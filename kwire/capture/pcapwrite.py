"""Classic pcap files written by kwire: from a live capture (rotating as tcpdump -C does), and what
`kwire inspect -w` cuts out of a capture.

`PcapWriter(path, linktype, file_size=None)` opens `path` at once (CaptureError when it cannot be
created) and writes a nanosecond classic pcap file in this machine's byte order (what libpcap and
tshark read, and kwire) with snap length kwire.capture.bpf.SNAPLEN. `write(pieces)` appends records
given as alternating (16-byte record header, packet bytes) pieces, as kwire.capture.ring hands a
block over. With `file_size` (bytes; tcpdump's -C counts millions of bytes), before each record the
current file is checked: once it is larger than `file_size` it is closed and the next one opened,
named as tcpdump names them: FILE, FILE1, FILE2, ... So a file ends with the first record that took
it past the size, never inside a record. `write_packet(ts_ns, data)` appends one whole packet.
`files` lists the files written; `close()` flushes.
A write that fails (disk full) raises CaptureError naming the file.
"""

from __future__ import annotations

import struct

from kwire.capture.bpf import SNAPLEN
from kwire.errors import CaptureError

FILE_HEADER = struct.Struct("=IHHiIII")
RECORD_HEADER = struct.Struct("=IIII")
NANOSECOND_MAGIC = 0xA1B23C4D
BUFFERING = 1 << 20


class PcapWriter:
    def __init__(self, path: str, linktype: int, file_size: int | None = None):
        self.path = str(path)
        self.linktype = linktype
        self.file_size = file_size if file_size and file_size > 0 else None
        self.files: list[str] = []
        self.records = 0
        self._size = 0
        self._file = None
        self._open(self.path)

    def _open(self, name: str) -> None:
        try:
            self._file = open(name, "wb", buffering=BUFFERING)  # noqa: SIM115 - kept open until close()
            self._file.write(FILE_HEADER.pack(NANOSECOND_MAGIC, 2, 4, 0, 0, SNAPLEN, self.linktype))
        except OSError as exc:
            raise CaptureError(f"cannot write {name}: {exc.strerror or exc}") from None
        self.files.append(name)
        self._size = FILE_HEADER.size

    def _rotate(self) -> None:
        self._close_file()
        self._open(f"{self.path}{len(self.files)}")

    def write(self, pieces: list) -> None:
        """Append the records of `pieces` (header, packet, header, packet, ...)."""
        if not pieces:
            return
        limit = self.file_size
        size = sum(map(len, pieces))
        # Every record goes in this file when the file is not past the limit before the last one.
        if limit is None or self._size + size - len(pieces[-2]) - len(pieces[-1]) <= limit:
            self._put(pieces, size)
            return
        start = 0
        size = self._size
        for i in range(0, len(pieces), 2):
            if size > limit:  # the file is past the limit before this record: the next file
                self._put(pieces[start:i], None)
                self._rotate()
                size = self._size
                start = i
            size += len(pieces[i]) + len(pieces[i + 1])
        self._put(pieces[start:], None)

    def write_packet(self, ts_ns: int, data: bytes) -> None:
        """Append one packet, kept whole, captured at `ts_ns`."""
        sec, frac = divmod(ts_ns, 1_000_000_000)
        self.write([RECORD_HEADER.pack(sec & 0xFFFFFFFF, frac, len(data), len(data)), data])

    def _put(self, pieces: list, size: int | None) -> None:
        if not pieces:
            return
        try:
            self._file.write(b"".join(pieces))
        except OSError as exc:
            raise CaptureError(f"cannot write {self.files[-1]}: {exc.strerror or exc}") from None
        self._size += sum(map(len, pieces)) if size is None else size
        self.records += len(pieces) // 2

    def _close_file(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError as exc:
                raise CaptureError(f"cannot write {self.files[-1]}: {exc.strerror or exc}") from None
            finally:
                self._file = None

    def flush(self) -> None:
        """Write what is buffered (before a fork: the copy of the buffer is not written twice)."""
        try:
            self._file.flush()
        except OSError as exc:
            raise CaptureError(f"cannot write {self.files[-1]}: {exc.strerror or exc}") from None

    def close(self) -> None:
        self._close_file()

    def __enter__(self) -> PcapWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
