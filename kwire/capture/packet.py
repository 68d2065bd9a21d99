"""What the capture layer hands to the rest of kwire: one captured packet.

`ts_ns` is the capture timestamp in integer nanoseconds since the epoch (whatever the file's
resolution); `linktype` is the pcap LINKTYPE_* of the interface it was captured on; `data` is the
captured bytes, `wire_len` the length on the wire (larger when the snap length cut the packet).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple


@dataclass(slots=True)
class Packet:
    ts_ns: int
    linktype: int
    data: bytes
    wire_len: int

    @property
    def truncated(self) -> bool:
        return len(self.data) < self.wire_len


# A consumer that may take a whole captured packet in place, before it becomes a Packet:
# take(ts_ns, buf, start, stop) -> 0: not taken (the reader yields a Packet as usual); 1: taken;
# 2: taken, and the consumer has something to say about it: the reader yields None in its place;
# 3: taken and put aside quietly, like 1, and the packets after it may well be taken the same way
# (a reader that has a TakeRun offers it the records that follow).
Take = Callable[[int, bytes, int, int], int]
NOT_TAKEN, TAKEN, TAKEN_EVENTS, TAKEN_QUIETLY = 0, 1, 2, 3


class RecordLayout(NamedTuple):
    """How a classic pcap file lays out its record headers (for a TakeRun walking them itself)."""

    unpack: Callable  # buf, pos -> (seconds, fraction, captured length, wire length)
    unpack_lengths: Callable  # buf, pos -> (seconds, captured length, wire length): the same, less
    header_size: int  # 16, or 24 for the "modified" format
    ts_mult: int      # nanoseconds per fraction unit (1000 for microsecond files, 1 for nanosecond)
    max_caplen: int   # a larger captured length is damage the reader reports

    def ts_at(self, buf, pos: int) -> int:
        """The capture time, in ns, of the record starting at buf[pos]."""
        sec, frac = self.unpack(buf, pos)[:2]
        return sec * 1_000_000_000 + frac * self.ts_mult


# A consumer that may take a run of consecutive records in place: take_run(buf, pos, end, layout)
# takes whole Ethernet records (captured length == wire length) from buf[pos:end] one after the
# other, as quietly as Take's answer 3 (no event, nothing to say), and stops at the first record
# it does not take or that is not whole in the buffer. Returns (position after the last record
# taken, number of records taken).
TakeRun = Callable[[bytes, int, int, RecordLayout], "tuple[int, int]"]

# pcap LINKTYPE_* values kwire understands.
LINKTYPE_NULL = 0          # BSD loopback: 4-byte address family in host byte order
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101         # raw IPv4 or IPv6, version from the first nibble
LINKTYPE_LOOP = 108        # OpenBSD loopback: 4-byte address family in network byte order
LINKTYPE_LINUX_SLL = 113   # Linux cooked capture v1 (tcpdump -i any)
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276  # Linux cooked capture v2
