"""Counters the capture readers keep while they read: packets, bytes, snap-length cuts, link types.

A reader is handed an optional CaptureStats and adds to it; one object may be shared by several
readers (read_captures does so) to get totals. Readers add their per-packet counts in batches (at
every chunk refill and when they stop), so the figures are current to within one chunk (1 MiB)
while reading and exact once a reader is exhausted or closed.

`linktypes` maps every link type a file declared (pcap header, pcapng interface block) to the
names of the files that declared it, before any packet of it is yielded: the pipeline checks it
against kwire.net.decode.SUPPORTED_LINKTYPES to report "unknown link type N in FILE".
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

    def note_linktype(self, linktype: int, name: str) -> None:
        self.linktypes.setdefault(linktype, set()).add(name)

    def add(self, packets: int, captured: int, wire: int, truncated: int) -> None:
        self.packets += packets
        self.captured_bytes += captured
        self.wire_bytes += wire
        self.truncated += truncated
