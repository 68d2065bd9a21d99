"""Real captures wrapped in tunnels by scapy (an encoder independent of kwire's decoders).

`wrap(src, dst, kind)` writes `dst`: every packet of the capture `src` (Ethernet frames carrying
IPv4) inside the encapsulation `kind` (one of KINDS), with outer headers as the devices that send
them write them. The inner packets are the capture's own bytes (6in4/6in6: the same TCP segment moved
to IPv6 addresses, as a v6 overlay would carry it), so the wrapped capture must give the exchanges
of the plain one.
"""

from __future__ import annotations

import ipaddress

from scapy.contrib.geneve import GENEVE
from scapy.contrib.mpls import MPLS
from scapy.layers.inet import GRE, IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.layers.ppp import PPP, PPPoE
from scapy.layers.vxlan import VXLAN
from scapy.packet import Raw
from scapy.utils import PcapReader, PcapWriter

try:
    from scapy.contrib.erspan import ERSPAN_II, ERSPAN_III, ERSPAN_PlatformSpecific
except ImportError:  # older scapy
    ERSPAN_II = ERSPAN_III = ERSPAN_PlatformSpecific = None

UNDERLAY = dict(src="192.0.2.1", dst="192.0.2.2")
MACS = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")  # given: scapy would look them up
KINDS = ("vxlan", "vxlan-8472", "vxlan-custom", "geneve", "gre-eth", "gre-ip", "gre-key-seq", "erspan1",
         "erspan2", "erspan3", "ipip", "6in4", "6in6", "mpls", "mpls-pw", "pppoe", "vlan-vxlan-gre")
CUSTOM_VXLAN_PORT = 4790 + 1000


def _v6(ip4: str) -> str:
    return str(ipaddress.IPv6Address("2001:db8::" + ip4.replace(".", ":")))  # one v6 address per v4


def _as_ipv6(frame: Ether):
    """The frame's IPv4 packet as the same TCP segment over IPv6."""
    ip = frame[IP]
    tcp = ip.payload.copy()
    del tcp.chksum
    hops = ip.ttl
    return IPv6(src=_v6(ip.src), dst=_v6(ip.dst), hlim=hops) / tcp


def wrapped(frame_bytes: bytes, kind: str, n: int):
    """The frame (Ethernet bytes) wrapped as `kind`; n: its packet number (sequence numbers)."""
    eth = Ether(frame_bytes)
    inner_ip = Raw(bytes(eth.payload))  # the IPv4 packet as captured (padding included: kwire drops it)
    outer = Ether(**MACS) / IP(**UNDERLAY)
    frame = Raw(frame_bytes)
    if kind == "vxlan":
        return outer / UDP(sport=49152 + n % 1000, dport=4789) / VXLAN(vni=42) / frame
    if kind == "vxlan-8472":
        return outer / UDP(sport=49152, dport=8472) / VXLAN(vni=1) / frame
    if kind == "vxlan-custom":
        return outer / UDP(sport=49152, dport=CUSTOM_VXLAN_PORT) / VXLAN(vni=7) / frame
    if kind == "geneve":
        options = b"\x01\x08\x01\x02" + b"\xaa" * 8  # one option: class 0x0108, type 1, 8 bytes of data
        return outer / UDP(sport=49152, dport=6081) / GENEVE(vni=9, proto=0x6558, optionlen=3) / Raw(options) / frame
    if kind == "gre-eth":
        return outer / GRE(proto=0x6558) / frame
    if kind == "gre-ip":
        return outer / GRE(proto=0x0800) / inner_ip
    if kind == "gre-key-seq":
        return outer / GRE(proto=0x0800, key_present=1, key=77, seqnum_present=1, seqence_number=n,
                           chksum_present=1) / inner_ip
    if kind == "erspan1":
        return outer / GRE(proto=0x88BE) / frame
    if kind == "erspan2":
        return outer / GRE(proto=0x88BE, seqnum_present=1, seqence_number=n) / ERSPAN_II(session_id=5) / frame
    if kind == "erspan3":
        return (outer / GRE(proto=0x22EB, seqnum_present=1, seqence_number=n) / ERSPAN_III(session_id=5, o=1)
                / ERSPAN_PlatformSpecific() / frame)
    if kind == "ipip":
        return Ether(**MACS) / IP(proto=4, **UNDERLAY) / inner_ip
    if kind == "6in4":
        return Ether(**MACS) / IP(proto=41, **UNDERLAY) / _as_ipv6(eth)
    if kind == "6in6":
        return Ether(**MACS) / IPv6(src="2001:db8:ffff::1", dst="2001:db8:ffff::2", nh=41) / _as_ipv6(eth)
    if kind == "mpls":
        return Ether(**MACS, type=0x8847) / MPLS(label=100, s=0) / MPLS(label=200, s=1) / inner_ip
    if kind == "mpls-pw":  # an Ethernet pseudowire: control word, then the frame
        return Ether(**MACS, type=0x8847) / MPLS(label=300, s=1) / Raw(b"\x00\x00\x00\x00") / frame
    if kind == "pppoe":
        return Ether(**MACS, type=0x8864) / PPPoE(sessionid=0x1234) / PPP(proto=0x0021) / inner_ip
    if kind == "vlan-vxlan-gre":  # tunnels in tunnels: VLAN, VXLAN, then GRE carrying the IP packet
        inner = Ether(**MACS) / IP(proto=47, src="198.51.100.1", dst="198.51.100.2") / GRE(proto=0x0800) / inner_ip
        return (Ether(**MACS) / Dot1Q(vlan=10) / IP(**UNDERLAY) / UDP(sport=40000, dport=4789) / VXLAN(vni=1)
                / inner)
    raise ValueError(kind)


def wrap(src, dst, kind: str) -> int:
    """Write `dst`: the packets of `src` wrapped as `kind` (timestamps kept). Returns the count."""
    count = 0
    with PcapReader(str(src)) as reader, PcapWriter(str(dst), linktype=1, sync=False) as writer:
        for pkt in reader:
            out = wrapped(bytes(pkt), kind, count)
            out.time = pkt.time
            writer.write(out)
            count += 1
    return count
