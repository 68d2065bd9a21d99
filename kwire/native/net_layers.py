"""The link layers, IPv4, IPv6 and TCP as decoders of kwire.net.tables (the general path).

Link layers (LINKS): Ethernet, Linux cooked v1/v2, BSD null/loop in either byte order, raw IP,
LINKTYPE_IPV4/IPV6. Ethernet types (ETHERTYPES): IPv4, IPv6, 802.1Q/802.1ad tags (each one a step),
Ethernet itself (0x6558, what GRE and Geneve call bridged frames). IPv4 (options, total length:
Ethernet padding and FCS are dropped), IPv6 (hop-by-hop, routing, destination options, AH,
mobility/HIP/shim6 extension headers, atomic fragments), then TCP (data offset, options).

Fragmented IP packets are counted and skipped (kwire does not reassemble IP). An IP total or payload
length of 0 (TSO/GSO captures, jumbograms) means "to the end of the enclosing layer", or of the
captured bytes. An IP packet that claims more bytes than its enclosing layer holds is malformed. A
Segment's `missing` is how many payload bytes its IP length says were sent beyond those captured
(the snap length cut them); a segment whose TCP options are cut still comes out, with no payload.

`reject`, `note` and `opened` are how every decoder counts (DecodeCounters in kwire.native.net_decode).
"""

from __future__ import annotations

from struct import Struct

from kwire.capture.packet import (LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL,
                                  LINKTYPE_LINUX_SLL2, LINKTYPE_LOOP, LINKTYPE_NULL, LINKTYPE_RAW)
from kwire.net.drops import FRAGMENTS, MALFORMED, NON_IP, NON_TCP, SHORT
from kwire.net.segment import Segment
from kwire.net.tables import ETHERTYPES, IPPROTOS, LINKS, MAX_NOTES

ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_IPV6 = 0x86DD
ETHERTYPE_ETHERNET = 0x6558  # transparent Ethernet bridging
VLAN_TPIDS = frozenset({0x8100, 0x88A8, 0x9100, 0x9200, 0x9300})
AF_INET = 2
AF_INET6 = frozenset({10, 24, 28, 30})  # Linux, NetBSD/OpenBSD, FreeBSD/DragonFly, Darwin
IPPROTO_TCP = 6
# IPv6 extension headers with the (next header, length in 8-octet units beyond the first) layout.
IPV6_EXT_8 = frozenset({0, 43, 60, 135, 139, 140})
IPV6_FRAGMENT = 44
IPV6_AH = 51

ETHERTYPE_NAMES = {0x0806: "ARP", 0x8035: "RARP", 0x88CC: "LLDP", 0x8863: "PPPoE discovery", 0x888E: "EAPOL",
                   0x88F7: "PTP", 0x8809: "slow protocols (LACP)"}
IPPROTO_NAMES = {1: "ICMP", 2: "IGMP", 17: "UDP", 50: "ESP", 58: "ICMPv6", 89: "OSPF", 103: "PIM", 112: "VRRP",
                 132: "SCTP"}

_U16 = Struct("!H").unpack_from
_U32LE = Struct("<I").unpack_from
# version/IHL, total length, flags/fragment offset, protocol, source, destination
_IPV4 = Struct("!B1xH2xH1xB2x4s4s").unpack_from
# version/class/flow, payload length, next header, source, destination
_IPV6 = Struct("!IHB1x16s16s").unpack_from
# source port, destination port, seq, ack, data offset byte, flags byte
_TCP = Struct("!HHIIBB").unpack_from


# ---- counting -----------------------------------------------------------------------------------


def reject(counters, reason: str) -> None:
    """Count a packet that does not become a Segment under `reason` (a DecodeCounters field: kwire.net.drops)."""
    if counters is not None:
        setattr(counters, reason, getattr(counters, reason) + 1)
    return None


def note(counters, reason: str, what: str) -> None:
    """reject(), and say what the packet was ("UDP to port 4789") for the summary."""
    if counters is not None:
        setattr(counters, reason, getattr(counters, reason) + 1)
        notes = counters.unopened
        if what not in notes and len(notes) >= MAX_NOTES:
            what = "other"
        notes[what] = notes.get(what, 0) + 1
    return None


def opened(counters, name: str) -> None:
    """Count one encapsulation header opened ("VXLAN")."""
    if counters is not None:
        tunnels = counters.tunnels
        tunnels[name] = tunnels.get(name, 0) + 1


# ---- link layers ----------------------------------------------------------------------------------


def by_ethertype(data, off: int, end: int, counters, etype: int):
    """The step for a payload of Ethernet type `etype` at data[off] (shared by every header that
    names its payload by Ethernet type)."""
    decoder = ETHERTYPES.get(etype)
    if decoder is None:
        name = ETHERTYPE_NAMES.get(etype)
        return note(counters, NON_IP, f"ethertype 0x{etype:04x}" + (f" ({name})" if name else ""))
    return decoder, off, end


def ethernet(ts, data, off: int, end: int, n: int, counters):
    if n < off + 14:
        return reject(counters, SHORT)
    return by_ethertype(data, off + 14, end, counters, _U16(data, off + 12)[0])


def vlan(ts, data, off: int, end: int, n: int, counters):
    if n < off + 4:
        return reject(counters, SHORT)
    return by_ethertype(data, off + 4, end, counters, _U16(data, off + 2)[0])


def linux_sll(ts, data, off: int, end: int, n: int, counters):
    if n < 16:
        return reject(counters, SHORT)
    return by_ethertype(data, 16, end, counters, _U16(data, 14)[0])


def linux_sll2(ts, data, off: int, end: int, n: int, counters):
    if n < 20:
        return reject(counters, SHORT)
    return by_ethertype(data, 20, end, counters, _U16(data, 0)[0])


def bsd_null(ts, data, off: int, end: int, n: int, counters):
    if n < 4:
        return reject(counters, SHORT)
    af = _U32LE(data, 0)[0]
    if af > 0xFFFF:  # written in the other byte order
        af = int.from_bytes(data[:4], "big")
    if af == AF_INET:
        return ipv4, 4, end
    if af in AF_INET6:
        return ipv6, 4, end
    return note(counters, NON_IP, f"address family {af}")


def raw_ip(ts, data, off: int, end: int, n: int, counters):
    if n < 1:
        return reject(counters, SHORT)
    version = data[0] >> 4
    if version == 4:
        return ipv4, 0, end
    if version == 6:
        return ipv6, 0, end
    return note(counters, NON_IP, f"IP version {version}")


# ---- IP and TCP ---------------------------------------------------------------------------------------


def ipv4(ts, data, off: int, end: int, n: int, counters):
    if n < off + 20:
        return reject(counters, SHORT)
    vihl, total, frag, proto, src, dst = _IPV4(data, off)
    ihl = (vihl & 0x0F) << 2
    if vihl >> 4 != 4 or ihl < 20:
        return reject(counters, MALFORMED)
    if frag & 0x3FFF:  # more-fragments flag or a fragment offset
        return reject(counters, FRAGMENTS)
    if total:
        if total < ihl or off + total > end:
            return reject(counters, MALFORMED)
        end = off + total
    elif end > n:
        end = n  # total length 0: TSO/GSO capture, the packet runs to the end
    if proto == IPPROTO_TCP:
        return tcp(ts, data, n, off + ihl, end, src, dst, counters)
    return _next_protocol(data, off + ihl, end, counters, proto)


def ipv6(ts, data, off: int, end: int, n: int, counters):
    if n < off + 40:
        return reject(counters, SHORT)
    vcf, plen, nh, src, dst = _IPV6(data, off)
    if vcf >> 28 != 6:
        return reject(counters, MALFORMED)
    t = off + 40
    if plen:
        if t + plen > end:
            return reject(counters, MALFORMED)
        end = t + plen
    elif end > n:
        end = n  # payload length 0: jumbogram or TSO
    while nh != IPPROTO_TCP:
        if nh in IPV6_EXT_8:
            step = 8
        elif nh == IPV6_FRAGMENT or nh == IPV6_AH:
            step = 0
        else:
            break
        if t + 8 > n:
            return reject(counters, SHORT)
        if step:
            nh, t = data[t], t + ((data[t + 1] + 1) << 3)
        elif nh == IPV6_FRAGMENT:
            if _U16(data, t + 2)[0] & 0xFFF9:  # fragment offset or more-fragments flag
                return reject(counters, FRAGMENTS)
            nh, t = data[t], t + 8
        else:  # IPV6_AH
            nh, t = data[t], t + ((data[t + 1] + 2) << 2)
    if t > end:
        return reject(counters, MALFORMED)
    if nh == IPPROTO_TCP:
        return tcp(ts, data, n, t, end, src, dst, counters)
    return _next_protocol(data, t, end, counters, nh)


def _next_protocol(data, off: int, end: int, counters, proto: int):
    decoder = IPPROTOS.get(proto)
    if decoder is None:
        name = IPPROTO_NAMES.get(proto)
        return note(counters, NON_TCP, f"IP protocol {proto}" + (f" ({name})" if name else ""))
    return decoder, off, end


def tcp(ts: int, data, n: int, t: int, end: int, src: bytes, dst: bytes, counters) -> Segment | None:
    """The Segment whose TCP header is at data[t] and whose IP packet ends at `end`."""
    if t + 20 > n:
        return reject(counters, SHORT)
    sport, dport, seq, ack, doff, flags = _TCP(data, t)
    p = t + ((doff >> 4) << 2)
    if p < t + 20 or p > end:
        return reject(counters, MALFORMED)
    if p > n:  # options cut by the snap length: flags and numbers are still worth having
        return Segment(ts, src, sport, dst, dport, seq, ack, flags, b"", end > p, end - p)
    if end > n:
        return Segment(ts, src, sport, dst, dport, seq, ack, flags, data[p:], True, end - n)
    return Segment(ts, src, sport, dst, dport, seq, ack, flags, data[p:end], False)


LINKS.update({LINKTYPE_ETHERNET: ethernet, LINKTYPE_LINUX_SLL: linux_sll, LINKTYPE_LINUX_SLL2: linux_sll2,
              LINKTYPE_NULL: bsd_null, LINKTYPE_LOOP: bsd_null, LINKTYPE_RAW: raw_ip, LINKTYPE_IPV4: raw_ip,
              LINKTYPE_IPV6: raw_ip})
ETHERTYPES.update({ETHERTYPE_IPV4: ipv4, ETHERTYPE_IPV6: ipv6, ETHERTYPE_ETHERNET: ethernet})
ETHERTYPES.update(dict.fromkeys(VLAN_TPIDS, vlan))
