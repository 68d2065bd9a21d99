"""Encapsulations opened on the way to TCP: one decoder per tunnel, registered in kwire.net.tables.

- VXLAN (RFC 7348): UDP to 4789 or 8472 (VXLAN_PORTS; `add_vxlan_ports` for others), 8-byte
  header with the I flag, then an Ethernet frame. What AWS VPC Traffic Mirroring, Azure vTAP,
  flannel and Linux's vxlan devices send.
- Geneve (RFC 8926): UDP to 6081, 8-byte header and its options (length in 4-byte words), then the
  protocol it names (Ethernet 0x6558, IPv4, IPv6). AWS Gateway Load Balancer, GCP, OVN.
- GRE (RFC 2784/2890): checksum, key and sequence number fields as its flags say, then the
  Ethernet type it names (IPv4, IPv6, Ethernet 0x6558, MPLS). Version 1 (PPTP) is not opened.
- ERSPAN in GRE: type I (0x88BE, no sequence number: the Ethernet frame at once), type II (0x88BE
  with a sequence number: an 8-byte header), type III (0x22EB: a 12-byte header, and the 8-byte
  platform sub-header when its O flag is set). Switches' and cloud mirrors' sessions.
- IP in IP: IPv4 (protocol 4) and IPv6 (protocol 41) inside IPv4 or IPv6 (IPIP, 6in4/SIT, 6in6).
- MPLS (0x8847, 0x8848): the label stack down to its bottom-of-stack label, then IPv4 or IPv6 by
  the first nibble, or an Ethernet pseudowire behind a control word (first nibble 0).
- PPPoE sessions (0x8864): the 6-byte header (its length bounds the payload), then PPP's IPv4
  (0x0021) or IPv6 (0x0057).

Each one counts itself opened (`opened`: the summary's "VXLAN: 12,345 packets") and says what it did
not open (`note`: "UDP to port 53"). A length from a header that runs past its enclosing layer is
malformed; how deep tunnels nest is bounded by kwire.net.tables.MAX_LAYERS (kwire.native.net_decode).
"""

from __future__ import annotations

from struct import Struct

from kwire.net.drops import MALFORMED, NON_IP, NON_TCP, SHORT
from kwire.native.net_layers import by_ethertype, ethernet, ipv4, ipv6, note, opened, reject
from kwire.net.tables import ETHERTYPES, GENEVE_PORT, IPPROTOS, UDP_PORTS, VXLAN_PORTS

_U16 = Struct("!H").unpack_from
_UDP = Struct("!2xHH").unpack_from  # destination port, length

GRE_CSUM, GRE_ROUTING, GRE_KEY, GRE_SEQ = 0x8000, 0x4000, 0x2000, 0x1000
ETHERTYPE_ERSPAN_2 = 0x88BE  # types I and II
ETHERTYPE_ERSPAN_3 = 0x22EB
ETHERTYPE_MPLS = (0x8847, 0x8848)
ETHERTYPE_PPPOE_SESSION = 0x8864
PPP_IPV4, PPP_IPV6 = 0x0021, 0x0057
MAX_LABELS = 16  # MPLS labels read in one stack


def udp(ts, data, off: int, end: int, n: int, counters):
    if n < off + 8:
        return reject(counters, SHORT)
    dport, length = _UDP(data, off)
    if length:
        if length < 8 or off + length > end:
            return reject(counters, MALFORMED)
        end = off + length
    decoder = UDP_PORTS.get(dport)
    if decoder is None:
        return note(counters, NON_TCP, f"UDP to port {dport}")
    return decoder, off + 8, end


def vxlan(ts, data, off: int, end: int, n: int, counters):
    if n < off + 8:
        return reject(counters, SHORT)
    if not data[off] & 0x08 or off + 8 > end:  # the I flag: a VNI follows
        return reject(counters, MALFORMED)
    opened(counters, "VXLAN")
    return ethernet, off + 8, end


def geneve(ts, data, off: int, end: int, n: int, counters):
    if n < off + 8:
        return reject(counters, SHORT)
    first = data[off]
    start = off + 8 + ((first & 0x3F) << 2)
    if first >> 6 or start > end:  # version 0 only
        return reject(counters, MALFORMED)
    opened(counters, "Geneve")
    return by_ethertype(data, start, end, counters, _U16(data, off + 2)[0])


def gre(ts, data, off: int, end: int, n: int, counters):
    if n < off + 4:
        return reject(counters, SHORT)
    flags, proto = _U16(data, off)[0], _U16(data, off + 2)[0]
    if flags & 7:
        return note(counters, NON_TCP, f"GRE version {flags & 7}")
    if flags & GRE_ROUTING:
        return note(counters, NON_TCP, "GRE with source routing")
    start = off + 4 + (4 if flags & GRE_CSUM else 0) + (4 if flags & GRE_KEY else 0) + (4 if flags & GRE_SEQ else 0)
    if proto == ETHERTYPE_ERSPAN_2:
        if flags & GRE_SEQ:
            opened(counters, "ERSPAN II")
            start += 8
        else:
            opened(counters, "ERSPAN I")
    elif proto == ETHERTYPE_ERSPAN_3:
        if n < start + 12:
            return reject(counters, SHORT)
        opened(counters, "ERSPAN III")
        start += 20 if data[start + 11] & 1 else 12  # O flag: a platform-specific sub-header
    else:
        if start > end:
            return reject(counters, MALFORMED)
        opened(counters, "GRE")
        return by_ethertype(data, start, end, counters, proto)
    if start > end:
        return reject(counters, MALFORMED)
    return ethernet, start, end


def ipv4_in_ip(ts, data, off: int, end: int, n: int, counters):
    opened(counters, "IPv4-in-IP")
    return ipv4(ts, data, off, end, n, counters)


def ipv6_in_ip(ts, data, off: int, end: int, n: int, counters):
    opened(counters, "IPv6-in-IP")
    return ipv6(ts, data, off, end, n, counters)


def mpls(ts, data, off: int, end: int, n: int, counters):
    for _ in range(MAX_LABELS):
        if n < off + 5:
            return reject(counters, SHORT)
        bottom = data[off + 2] & 1
        off += 4
        if bottom:
            break
    else:
        return reject(counters, MALFORMED)
    if off > end:
        return reject(counters, MALFORMED)
    opened(counters, "MPLS")
    nibble = data[off] >> 4
    if nibble == 4:
        return ipv4, off, end
    if nibble == 6:
        return ipv6, off, end
    if nibble == 0:  # a pseudowire's control word, then the Ethernet frame
        return ethernet, off + 4, end
    return note(counters, NON_IP, "MPLS payload that is not IP")


def pppoe_session(ts, data, off: int, end: int, n: int, counters):
    if n < off + 8:
        return reject(counters, SHORT)
    if data[off] != 0x11 or data[off + 1]:  # version 1, type 1, code 0 (session data)
        return reject(counters, MALFORMED)
    stop = off + 6 + _U16(data, off + 4)[0]
    if stop > end or stop < off + 8:
        return reject(counters, MALFORMED)
    opened(counters, "PPPoE")
    proto = _U16(data, off + 6)[0]
    if proto == PPP_IPV4:
        return ipv4, off + 8, stop
    if proto == PPP_IPV6:
        return ipv6, off + 8, stop
    return note(counters, NON_IP, f"PPP protocol 0x{proto:04x}")


IPPROTOS.update({4: ipv4_in_ip, 41: ipv6_in_ip, 47: gre, 17: udp})
UDP_PORTS.update(dict.fromkeys(VXLAN_PORTS, vxlan))
UDP_PORTS[GENEVE_PORT] = geneve
ETHERTYPES.update(dict.fromkeys(ETHERTYPE_MPLS, mpls))
ETHERTYPES[ETHERTYPE_PPPOE_SESSION] = pppoe_session
