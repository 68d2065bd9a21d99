"""What the capture layer hands to the rest of kwire: captured records, one at a time.

Two forms, one meaning. A `Packet` is a record as an object: `ts_ns` is the capture timestamp in
integer nanoseconds since the epoch (whatever the file's resolution); `linktype` is the pcap
LINKTYPE_* of the interface it was captured on; `data` is the captured bytes, `wire_len` the length
on the wire (larger when the snap length cut the packet). A `RecordSink` is given the same facts
for each record straight from the reader's buffer (a file's chunk, or a live capture's ring block),
before any object is made (the fast path: most records never become a Packet); `PacketCollector`
is the sink that makes Packets of them. Runs of records that follow are offered in the buffer's own
layout: back-to-back classic pcap records (`RecordLayout`, `run`) or ring frames, each with a header
of its own and the offset of the next (`FrameLayout`, `frame_run`). Plain Python: the loop over classic pcap records and RecordSink
itself are kwire.native.record_walk's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, NamedTuple

# What a capture reader hands its records to (its contract is its docstring): a class of kwire.native, where
# classic pcap's record loop calls it in C (record_walk).
from kwire.native.record_walk import RecordSink


# Capture bytes a reader hands to a RecordSink between two yields (where its caller takes the exchanges those
# records completed and analyses or renders them). A file is read 1 MiB at a time (kwire.capture.source.CHUNK),
# but handed over in windows of this size: the exchanges a window completes are then used while their bodies
# are still in the CPU's cache. A whole megabyte of small packets is some 2,700 exchanges, whose objects outgrow
# the cache before the first is read again. Measured (wall, compiled, 290,009 small Produce exchanges, 2-core
# EPYC VM): `kwire stats -j 0` 5.2 s handed over by the megabyte, 4.1 s by 64 KiB; `inspect --json -j 0` 3.7 s
# and 2.9 s. (A record longer than the window is still handed over whole: a window ends between records.)
HANDOFF = 64 << 10


@dataclass(slots=True)
class Packet:
    ts_ns: int
    linktype: int
    data: bytes
    wire_len: int

    @property
    def truncated(self) -> bool:
        return len(self.data) < self.wire_len


class RecordLayout(NamedTuple):
    """How a classic pcap file lays out its record headers (for a RecordSink.run walking them)."""

    unpack: Callable  # buf, pos -> (seconds, fraction, captured length, wire length)
    unpack_lengths: Callable  # buf, pos -> (seconds, captured length, wire length): the same, less
    header_size: int  # 16, or 24 for the "modified" format
    ts_mult: int      # nanoseconds per fraction unit (1000 for microsecond files, 1 for nanosecond)
    max_caplen: int   # a larger captured length is damage the reader reports

    def ts_at(self, buf, pos: int) -> int:
        """The capture time, in ns, of the record starting at buf[pos]."""
        sec, frac = self.unpack(buf, pos)[:2]
        return sec * 1_000_000_000 + frac * self.ts_mult


class FrameLayout:
    """How a live capture's ring block lays out its frames (for a RecordSink.frame_run walking them):
    each frame starts with a header of its own, and its packet lies `data offset` bytes into it.
    (A plain class: a NamedTuple's creation would add to every run's start-up.)"""

    __slots__ = ("unpack", "unpack_ts", "stop_status")

    def __init__(self, unpack: Callable, unpack_ts: Callable, stop_status: int):
        self.unpack = unpack        # buf, pos -> (next frame's offset from pos, 0 after the last; seconds;
                                    #              captured length; wire length; status; data offset)
        self.unpack_ts = unpack_ts  # buf, pos -> (seconds, nanoseconds)
        self.stop_status = stop_status  # status bits of a frame the run must leave to the walker

    def ts_at(self, buf, pos: int) -> int:
        """The capture time, in ns, of the frame starting at buf[pos]."""
        sec, nsec = self.unpack_ts(buf, pos)
        return sec * 1_000_000_000 + nsec


def packets_of(feed: Callable[[RecordSink], Iterator[None]]) -> Iterator[Packet]:
    """A reader's records as Packets, from its feed(sink): chunk by chunk, and the packets read before
    damage still come out before the error does."""
    collector = PacketCollector()
    packets = collector.packets
    try:
        for _ in feed(collector):
            yield from packets
            packets.clear()
    except Exception:  # damage (CaptureError), not GeneratorExit: a closed reader yields no more
        yield from packets
        raise


class PacketCollector(RecordSink):
    """A RecordSink that makes a Packet of every record and keeps them in `packets`."""

    __slots__ = ("packets",)

    def __init__(self) -> None:
        self.packets: list[Packet] = []

    def record(self, ts_ns: int, linktype: int, buf, start: int, stop: int, wire_len: int) -> bool:
        self.packets.append(Packet(ts_ns, linktype, buf[start:stop], wire_len))
        return False


# pcap LINKTYPE_* values kwire understands.
LINKTYPE_NULL = 0          # BSD loopback: 4-byte address family in host byte order
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101         # raw IPv4 or IPv6, version from the first nibble
LINKTYPE_LOOP = 108        # OpenBSD loopback: 4-byte address family in network byte order
LINKTYPE_LINUX_SLL = 113   # Linux cooked capture v1 (tcpdump -i any)
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276  # Linux cooked capture v2
