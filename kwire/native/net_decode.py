"""Captured records -> TCP Segments: the hottest path in kwire (called once per packet).

`decode_record` (and `decode_segment`, the same for a Packet) takes the commonest packet, untagged
Ethernet carrying IPv4 without options and unfragmented TCP, with one struct call (the fast path);
every other packet walks the dissector tables of kwire.net.tables from its link type to TCP: the
link layers, IPv4 and IPv6 of kwire.native.net_layers and the tunnels of kwire.native.net_tunnels (VXLAN, Geneve,
GRE and ERSPAN, IP in IP, MPLS, PPPoE), nested in any order, at most MAX_LAYERS headers deep.

Guarantees: it never raises on any bytes; it returns a Segment, or None and adds one to the matching
DecodeCounters field (and, for packets that were not IP or not TCP, a note of what they were:
`unopened`, "UDP to port 53"). Every tunnel opened is counted in `tunnels` ("VXLAN" -> headers
opened). Fragmented IP packets (any fragment, first included; IPv6 atomic fragments excepted) are
skipped and counted: kwire does not reassemble IP. An IP total or payload length of 0 (TSO/GSO
captures, jumbograms) means "to the end of the captured bytes". Segment.truncated is True (and
Segment.missing says by how much) when the captured bytes end before the IP length says the payload
does. A segment whose TCP options are cut still comes out (empty payload): its numbers and flags count.

Link types: SUPPORTED_LINKTYPES is the set decoded here. The capture layer records the link types
each file declares (CaptureStats.linktypes) so the pipeline can report "unknown link type N in
FILE" up front; packets of any other link type are counted in `unknown_linktypes` here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from kwire.capture.packet import Packet
from kwire.native import net_tunnels  # noqa: F401 - registers the tunnels in the tables
from kwire.net.drops import DROP_NAMES, TOO_DEEP
from kwire.native.net_layers import reject
from kwire.net.layout import (ETH_IPV4_TCP, ETHERNET_HEADER, FRAGMENTED, IPPROTO_TCP, MIN_FRAME, PLAIN_HEAD_HI,
                               PLAIN_HEAD_LO, TCP_PAYLOAD_AT)
from kwire.net.segment import Segment
from kwire.net.tables import LINKS, MAX_LAYERS, MAX_NOTES, NO_END

SUPPORTED_LINKTYPES = frozenset(LINKS)


@dataclass(slots=True)
class DecodeCounters:
    """Why packets did not become Segments (one count per packet): a field per kwire.net.drops reason."""

    non_ip: int = 0       # link payload is not IPv4/IPv6 (ARP, LLC, ...)
    non_tcp: int = 0      # IP carrying something other than TCP (UDP, ICMP, ESP, ...)
    fragments: int = 0    # IP fragments (not reassembled)
    malformed: int = 0    # header values that cannot be right (bad version, IHL, data offset)
    short: int = 0        # captured bytes end inside the link/IP/TCP headers (snap length)
    unknown_linktype: int = 0
    too_deep: int = 0     # more than MAX_LAYERS headers before TCP (tunnels nested without end)
    unknown_linktypes: dict[int, int] = field(default_factory=dict)  # link type -> packets
    tunnels: dict[str, int] = field(default_factory=dict)  # "VXLAN" -> headers opened
    unopened: dict[str, int] = field(default_factory=dict)  # "UDP to port 53" -> packets (non_ip, non_tcp)

    @property
    def total(self) -> int:
        return (
            self.non_ip + self.non_tcp + self.fragments + self.malformed + self.short
            + self.unknown_linktype + self.too_deep
        )

    def add(self, other: DecodeCounters, times: int = 1) -> None:
        """Count what `other` counted, `times` times over (notes past MAX_NOTES distinct ones are "other")."""
        for name in COUNTS:
            setattr(self, name, getattr(self, name) + times * getattr(other, name))
        for mine, theirs in ((self.unknown_linktypes, other.unknown_linktypes), (self.tunnels, other.tunnels)):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + times * count
        notes = self.unopened
        for what, count in other.unopened.items():
            if what not in notes and len(notes) >= MAX_NOTES:
                what = "other"
            notes[what] = notes.get(what, 0) + times * count

    def flat(self) -> dict[str, int]:
        """The counts as one flat dict of numbers (what a run's summary keeps, and Spark's tasks sum):
        the fields, then TUNNEL + name for each tunnel opened, UNOPENED + what for each note."""
        out = {name: getattr(self, name) for name in COUNTS}
        out.update((TUNNEL + name, count) for name, count in self.tunnels.items())
        out.update((UNOPENED + what, count) for what, count in self.unopened.items())
        return out


COUNTS = DROP_NAMES  # DecodeCounters' counts, one per drop reason (kwire.net.drops)
TUNNEL = "tunnel:"      # DecodeCounters.flat(): "tunnel:VXLAN" -> headers opened
UNOPENED = "unopened:"  # "unopened:UDP to port 53" -> packets


def decode_segment(packet: Packet, counters: DecodeCounters | None = None) -> Segment | None:
    """The TCP segment in `packet`, or None (counted in `counters` when given)."""
    return decode_record(packet.ts_ns, packet.linktype, packet.data, counters)


def decode_record(ts_ns: int, linktype: int, data, counters: DecodeCounters | None = None) -> Segment | None:
    """The TCP segment in one captured record's bytes, or None (counted in `counters` when given)."""
    n = len(data)
    if linktype == 1 and n >= MIN_FRAME:
        # Fast path, the common case: untagged Ethernet, IPv4 without options, unfragmented TCP.
        # One unpack; anything else falls through to the general path below.
        head, total, frag, proto, src, dst, sport, dport, seq, ack, doff, flags = ETH_IPV4_TCP(data, 0)
        # kwire.net.layout.plain_ipv4_tcp's test, inline (the same names): a plain-Python call per packet
        if PLAIN_HEAD_LO <= head <= PLAIN_HEAD_HI and proto == IPPROTO_TCP and not frag & FRAGMENTED:
            p = TCP_PAYLOAD_AT[doff]
            end = ETHERNET_HEADER + total
            if MIN_FRAME <= p <= end and p <= n:
                if end > n:
                    return Segment(ts_ns, src, sport, dst, dport, seq, ack, flags, data[p:], True, end - n)
                return Segment(ts_ns, src, sport, dst, dport, seq, ack, flags, data[p:end], False)
    step = LINKS.get(linktype)
    if step is None:
        if counters is not None:
            counters.unknown_linktype += 1
            counters.unknown_linktypes[linktype] = counters.unknown_linktypes.get(linktype, 0) + 1
        return None
    off, end = 0, NO_END
    for _ in range(MAX_LAYERS):
        found = step(ts_ns, data, off, end, n, counters)
        if found is None or type(found) is Segment:
            return found
        step, off, end = found
    return reject(counters, TOO_DEEP)


def decode_empty(linktype: int, count: int, counters: DecodeCounters | None = None) -> None:
    """What decode_record does with `count` records of `linktype` that captured no bytes, at once: none is a
    Segment, and each counts what one counts (their times play no part: no link layer fits in no bytes)."""
    if counters is None or count <= 0:
        return
    one = DecodeCounters()
    decode_record(0, linktype, b"", one)
    counters.add(one, count)


def decode_segments(
    packets: Iterable[Packet], counters: DecodeCounters | None = None
) -> Iterator[Segment]:
    """The Segments of `packets`, in order, skipping (and counting) the rest."""
    decode = decode_segment
    for packet in packets:
        segment = decode(packet, counters)
        if segment is not None:
            yield segment
