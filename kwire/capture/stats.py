"""Counters the capture readers keep while they read: packets, bytes, snap-length cuts, link types.

A reader is handed an optional CaptureStats and adds to it; one object may be shared by several
readers (read_captures does so) to get totals. Readers add their per-packet counts in batches (at
every chunk refill and when they stop), so the figures are current to within one chunk (1 MiB)
while reading and exact once a reader is exhausted or closed.

`read` holds, for every file a reader opened, [its name, the uncompressed bytes read from it, the file bytes
those came from] (the same number for a file not compressed), brought up to date at every chunk a reader reads:
how far a compressed file expands, and how much of the files a run has read.

`linktypes` maps every link type a file declared (pcap header, pcapng interface block) to the
names of the files that declared it, before any packet of it is yielded: the pipeline checks it
against kwire.native.net_decode.SUPPORTED_LINKTYPES to report "unknown link type N in FILE".
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class CaptureStats:
    files: int = 0            # capture files opened
    packets: int = 0          # packets yielded
    captured_bytes: int = 0   # bytes of packet data captured
    wire_bytes: int = 0       # bytes the packets had on the wire
    truncated: int = 0        # packets cut short by the snap length (captured < wire length)
    linktypes: dict[int, set[str]] = field(default_factory=dict)
    read: list[list] = field(default_factory=list)  # [file name, bytes read (uncompressed), file bytes] a file
    read_bytes: int = 0       # bytes the readers have read, uncompressed (the sum over `read`)
    file_bytes: int = 0       # file bytes those came from (compressed bytes, for a compressed file)

    def reading(self, name: str) -> list:
        """The entry of `read` for a reader of the file `name` (to give to note_read)."""
        entry = [name, 0, 0]
        self.read.append(entry)
        return entry

    def note_read(self, entry: list, uncompressed: int, compressed: int) -> None:
        """A reader has read `uncompressed` bytes of its file so far, from `compressed` bytes of it."""
        self.read_bytes += uncompressed - entry[1]
        self.file_bytes += compressed - entry[2]
        entry[1], entry[2] = uncompressed, compressed

    def note_linktype(self, linktype: int, name: str) -> None:
        self.linktypes.setdefault(linktype, set()).add(name)

    def add(self, packets: int, captured: int, wire: int, truncated: int) -> None:
        self.packets += packets
        self.captured_bytes += captured
        self.wire_bytes += wire
        self.truncated += truncated
