"""Link, IP and TCP headers -> Segment: the hottest path in kwire (called once per packet).

Owns the link layers in kwire.capture.packet (Ethernet with any number of 802.1Q/802.1ad tags,
Linux cooked v1/v2, BSD null/loop in either byte order, raw IP, LINKTYPE_IPV4/IPV6), IPv4 (options,
total length: Ethernet padding and FCS are dropped) and IPv6 (hop-by-hop, routing, destination
options, AH, mobility/HIP/shim6 extension headers), and the TCP header (data offset, options).

Guarantees: `decode_record` (and `decode_segment`, the same for a Packet) never raises on any bytes;
it returns a Segment, or None and adds one
to the matching DecodeCounters field. Fragmented IP packets (any fragment, first included; IPv6
atomic fragments excepted) are skipped and counted: kwire does not reassemble IP. An IP total or
payload length of 0 (TSO/GSO captures, jumbograms) means "to the end of the captured bytes".
Segment.truncated is True when the captured bytes end before the IP length says the payload does.
A segment whose TCP options are cut still comes out (empty payload): its numbers and flags count.

Link types: SUPPORTED_LINKTYPES is the set decoded here. The capture layer records the link types
each file declares (CaptureStats.linktypes) so the pipeline can report "unknown link type N in
FILE" up front; packets of any other link type are counted in `unknown_linktypes` here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from struct import Struct
from typing import Iterable, Iterator

from kwire.capture.packet import (
    LINKTYPE_ETHERNET,
    LINKTYPE_IPV4,
    LINKTYPE_IPV6,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_LOOP,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
    Packet,
)
from kwire.net.layout import ETH_IPV4_TCP
from kwire.net.segment import Segment

SUPPORTED_LINKTYPES = frozenset(
    {
        LINKTYPE_NULL,
        LINKTYPE_ETHERNET,
        LINKTYPE_RAW,
        LINKTYPE_LOOP,
        LINKTYPE_LINUX_SLL,
        LINKTYPE_LINUX_SLL2,
        LINKTYPE_IPV4,
        LINKTYPE_IPV6,
    }
)

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
VLAN_TPIDS = frozenset({0x8100, 0x88A8, 0x9100, 0x9200, 0x9300})
AF_INET = 2
AF_INET6 = frozenset({10, 24, 28, 30})  # Linux, NetBSD/OpenBSD, FreeBSD/DragonFly, Darwin
IPPROTO_TCP = 6
# IPv6 extension headers with the (next header, length in 8-octet units beyond the first) layout.
IPV6_EXT_8 = frozenset({0, 43, 60, 135, 139, 140})
IPV6_FRAGMENT = 44
IPV6_AH = 51
IPV6_EXT = IPV6_EXT_8 | {IPV6_FRAGMENT, IPV6_AH}

_U16 = Struct("!H").unpack_from
_U32LE = Struct("<I").unpack_from
# version/IHL, total length, flags/fragment offset, protocol, source, destination
_IPV4 = Struct("!B1xH2xH1xB2x4s4s").unpack_from
# version/class/flow, payload length, next header, source, destination
_IPV6 = Struct("!IHB1x16s16s").unpack_from
# source port, destination port, seq, ack, data offset byte, flags byte
_TCP = Struct("!HHIIBB").unpack_from
# Ethernet type, then the IPv4 fields above, then the TCP fields above (IHL 5, no VLAN tag).
# (kwire.tcp.flows.FlowTable.take_ethernet has its own variant for established connections.)
_ETH_IPV4_TCP = Struct("!12xHB1xH2xH1xB2x4s4sHHIIBB").unpack_from


@dataclass(slots=True)
class DecodeCounters:
    """Why packets did not become Segments (one count per packet)."""

    non_ip: int = 0       # link payload is not IPv4/IPv6 (ARP, LLC, ...)
    non_tcp: int = 0      # IP carrying something other than TCP (UDP, ICMP, ESP, ...)
    fragments: int = 0    # IP fragments (not reassembled)
    malformed: int = 0    # header values that cannot be right (bad version, IHL, data offset)
    short: int = 0        # captured bytes end inside the link/IP/TCP headers (snap length)
    unknown_linktype: int = 0
    unknown_linktypes: dict[int, int] = field(default_factory=dict)  # link type -> packets

    @property
    def total(self) -> int:
        return (
            self.non_ip + self.non_tcp + self.fragments + self.malformed + self.short
            + self.unknown_linktype
        )


def decode_segment(packet: Packet, counters: DecodeCounters | None = None) -> Segment | None:
    """The TCP segment in `packet`, or None (counted in `counters` when given)."""
    return decode_record(packet.ts_ns, packet.linktype, packet.data, counters)


def decode_record(ts_ns: int, linktype: int, data, counters: DecodeCounters | None = None) -> Segment | None:
    """The TCP segment in one captured record's bytes, or None (counted in `counters` when given)."""
    n = len(data)
    if linktype == 1 and n >= 54:
        # Fast path, the common case: untagged Ethernet, IPv4 without options, unfragmented TCP.
        # One unpack; anything else falls through to the general path below.
        (etype, vihl, total, frag, proto, src, dst, sport, dport, seq, ack, doff, flags) = ETH_IPV4_TCP(data, 0)
        if etype == 0x0800 and vihl == 0x45 and proto == 6 and not frag & 0x3FFF and total >= 40:
            p = 34 + ((doff >> 4) << 2)
            end = 14 + total
            if 54 <= p <= end and p <= n:
                if end > n:
                    return Segment(ts_ns, src, sport, dst, dport, seq, ack, flags, data[p:], True)
                return Segment(ts_ns, src, sport, dst, dport, seq, ack, flags, data[p:end], False)
    link = _link(linktype, data, n, counters)
    if link is None:
        return None
    off, version = link
    ip = _ipv4(data, n, off, counters) if version == 4 else _ipv6(data, n, off, counters)
    if ip is None:
        return None
    t, end, src, dst = ip
    return _tcp(ts_ns, data, n, t, end, src, dst, counters)


def _link(lt: int, data, n: int, counters) -> tuple[int, int] | None:
    """(offset of the IP header, IP version) behind the link-layer header, or None (counted)."""
    if lt == LINKTYPE_ETHERNET or lt == LINKTYPE_LINUX_SLL or lt == LINKTYPE_LINUX_SLL2:
        off, tpos = (14, 12) if lt == LINKTYPE_ETHERNET else (20, 0) if lt == LINKTYPE_LINUX_SLL2 else (16, 14)
        if n < off:
            return _reject(counters, "short")
        etype = _U16(data, tpos)[0]
        while etype in VLAN_TPIDS:
            if n < off + 4:
                return _reject(counters, "short")
            etype = _U16(data, off + 2)[0]
            off += 4
        if etype == ETHERTYPE_IPV4:
            return off, 4
        if etype == ETHERTYPE_IPV6:
            return off, 6
        return _reject(counters, "non_ip")
    if lt == LINKTYPE_NULL or lt == LINKTYPE_LOOP:
        if n < 4:
            return _reject(counters, "short")
        af = _U32LE(data, 0)[0]
        if af > 0xFFFF:  # written in the other byte order
            af = int.from_bytes(data[:4], "big")
        if af == AF_INET:
            return 4, 4
        if af in AF_INET6:
            return 4, 6
        return _reject(counters, "non_ip")
    if lt == LINKTYPE_RAW or lt == LINKTYPE_IPV4 or lt == LINKTYPE_IPV6:
        if n < 1:
            return _reject(counters, "short")
        version = data[0] >> 4
        if version != 4 and version != 6:
            return _reject(counters, "non_ip")
        return 0, version
    if counters is not None:
        counters.unknown_linktype += 1
        counters.unknown_linktypes[lt] = counters.unknown_linktypes.get(lt, 0) + 1
    return None


def _ipv4(data, n: int, off: int, counters) -> tuple[int, int, bytes, bytes] | None:
    """(offset of the TCP header, end of the IP packet, source, destination), or None (counted)."""
    if n < off + 20:
        return _reject(counters, "short")
    vihl, total, frag, proto, src, dst = _IPV4(data, off)
    ihl = (vihl & 0x0F) << 2
    if vihl >> 4 != 4 or ihl < 20:
        return _reject(counters, "malformed")
    if frag & 0x3FFF:  # more-fragments flag or a fragment offset
        return _reject(counters, "fragments")
    if proto != IPPROTO_TCP:
        return _reject(counters, "non_tcp")
    if total:
        if total < ihl:
            return _reject(counters, "malformed")
        end = off + total
    else:
        end = n  # total length 0: TSO/GSO capture, the packet runs to the end
    return off + ihl, end, src, dst


def _ipv6(data, n: int, off: int, counters) -> tuple[int, int, bytes, bytes] | None:
    """As _ipv4, through IPv6's extension headers."""
    if n < off + 40:
        return _reject(counters, "short")
    vcf, plen, nh, src, dst = _IPV6(data, off)
    if vcf >> 28 != 6:
        return _reject(counters, "malformed")
    t = off + 40
    end = t + plen if plen else n  # payload length 0: jumbogram or TSO
    while nh != IPPROTO_TCP:
        if nh not in IPV6_EXT:
            return _reject(counters, "non_tcp")
        if t + 8 > n:
            return _reject(counters, "short")
        if nh in IPV6_EXT_8:
            nh = data[t]
            t += (data[t + 1] + 1) << 3
        elif nh == IPV6_FRAGMENT:
            if _U16(data, t + 2)[0] & 0xFFF9:  # fragment offset or more-fragments flag
                return _reject(counters, "fragments")
            nh = data[t]
            t += 8
        else:  # IPV6_AH
            nh = data[t]
            t += (data[t + 1] + 2) << 2
    if t > end:
        return _reject(counters, "malformed")
    return t, end, src, dst


def _tcp(ts_ns: int, data, n: int, t: int, end: int, src: bytes, dst: bytes, counters) -> Segment | None:
    if t + 20 > n:
        return _reject(counters, "short")
    sport, dport, seq, ack, doff, flags = _TCP(data, t)
    p = t + ((doff >> 4) << 2)
    if p < t + 20 or p > end:
        return _reject(counters, "malformed")
    if p > n:  # options cut by the snap length: flags and numbers are still worth having
        return Segment(ts_ns, src, sport, dst, dport, seq, ack, flags, b"", end > p)
    if end > n:
        return Segment(ts_ns, src, sport, dst, dport, seq, ack, flags, data[p:], True)
    return Segment(ts_ns, src, sport, dst, dport, seq, ack, flags, data[p:end], False)


def _reject(counters: DecodeCounters | None, reason: str) -> None:
    if counters is not None:
        setattr(counters, reason, getattr(counters, reason) + 1)
    return None


def decode_segments(
    packets: Iterable[Packet], counters: DecodeCounters | None = None
) -> Iterator[Segment]:
    """The Segments of `packets`, in order, skipping (and counting) the rest."""
    decode = decode_segment
    for packet in packets:
        segment = decode(packet, counters)
        if segment is not None:
            yield segment
