"""The dissector tables of the net layer: which decoder opens what a header says comes next.

As Wireshark's dissector tables do, each header names its payload by a number and a table maps the
number to the decoder of that payload: `LINKS` (pcap link type), `ETHERTYPES` (Ethernet type, also
what Linux cooked headers, VLAN tags, GRE and Geneve carry), `IPPROTOS` (IPv4 protocol and IPv6
next header) and `UDP_PORTS` (destination port of a UDP datagram that carries a tunnel). The
decoders register themselves: kwire.native.net_layers (link layers, IP, TCP) and kwire.native.net_tunnels (VXLAN,
Geneve, GRE/ERSPAN, IP-in-IP, MPLS, PPPoE). kwire.native.net_decode walks from a link type to TCP through
these tables.

A decoder is `decode(ts_ns, data, off, end, n, counters)`: its header starts at data[off], its
layer's bytes end at `end` (what the enclosing header says; NO_END when nothing said so: the link
layer) and n bytes were captured. It returns the Segment (TCP reached), the next step
`(decoder, offset, end)`, or None after counting why in `counters` (a kwire.native.net_decode
DecodeCounters, or None). Every decoder checks the bytes it reads against n and every length it
reads against `end` before it uses them.
"""

from __future__ import annotations

from typing import Callable

Decoder = Callable  # (ts_ns, data, off, end, n, counters) -> Segment | (Decoder, int, int) | None

NO_END = 1 << 62  # the layer's end is not known from any header (the link layer)
MAX_LAYERS = 32   # headers walked per packet at most (tunnels in tunnels, VLAN tags, MPLS labels)
MAX_NOTES = 64    # distinct "what was not opened" notes kept per run (the rest are "other")

LINKS: dict[int, Decoder] = {}
ETHERTYPES: dict[int, Decoder] = {}
IPPROTOS: dict[int, Decoder] = {}
UDP_PORTS: dict[int, Decoder] = {}

VXLAN_PORTS = (4789, 8472)  # IANA's, and Linux's (flannel, the kernel's default)
GENEVE_PORT = 6081


def add_vxlan_ports(ports) -> None:
    """Open UDP datagrams to these ports as VXLAN too (`--vxlan-port`), in this process."""
    vxlan = UDP_PORTS[VXLAN_PORTS[0]]
    for port in ports:
        UDP_PORTS[int(port)] = vxlan


def vxlan_ports() -> list[int]:
    """The UDP ports opened as VXLAN now (to hand on to other processes: Spark executors)."""
    vxlan = UDP_PORTS[VXLAN_PORTS[0]]
    return sorted(port for port, decoder in UDP_PORTS.items() if decoder is vxlan)
