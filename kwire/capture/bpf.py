"""Capture filters and interfaces: what a live capture socket needs before its first packet.

Owns the interface check (`check_interface`: one CaptureError listing this machine's interfaces),
the permission message, kwire's default filter, and the BPF program attached in the kernel:
- `compile_filter(expression, linktype)`: libpcap's compilation of a filter expression (through
  scapy's binding to libpcap) as a list of (code, jt, jf, k) instructions. A dead libpcap handle
  compiles its accepting `ret` with a snap length of 65535, which would cut loopback packets
  (up to 64 KiB plus headers): every accepting `ret` is raised to SNAPLEN.
- `kernel_prologue(ip_only)`: instructions run before the compiled ones, using the kernel's
  ancillary loads: a packet going out of a loopback interface is dropped (the kernel shows each
  loopback packet twice, leaving and arriving: the arriving copy is kept), and with `ip_only`
  (sockets without link headers) anything but IPv4 and IPv6 is dropped.
- `attach_filter(sock, program)`: SO_ATTACH_FILTER; CaptureError when the kernel refuses it.
A filter libpcap rejects is one CaptureError quoting libpcap's reason.
"""

from __future__ import annotations

import socket
import struct

from kwire.errors import CaptureError

SNAPLEN = 262144  # bytes kept of a packet (tcpdump's default)
SO_ATTACH_FILTER = 26
ARPHRD_LOOPBACK = 772
PACKET_OUTGOING = 4
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
_SKF_AD_OFF = -0x1000
_SKF_AD_PROTOCOL = 0
_SKF_AD_PKTTYPE = 4
_SKF_AD_HATYPE = 28
_LD_W_ABS = 0x20   # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15      # BPF_JMP | BPF_JEQ | BPF_K
_RET_K = 0x06      # BPF_RET | BPF_K
_INSN = struct.Struct("HBBI")  # struct sock_filter
_FPROG = struct.Struct("HL")   # struct sock_fprog: length, pointer (native alignment)

Program = list  # of (code, jt, jf, k)


def interface_names() -> list[str]:
    """Names of this machine's network interfaces."""
    try:
        return [name for _, name in socket.if_nameindex()]
    except (OSError, AttributeError):
        try:
            from scapy.interfaces import get_if_list

            return list(get_if_list())
        except Exception:  # noqa: BLE001 - a listing is only used in messages
            return []


def check_interface(iface: str) -> None:
    names = interface_names()
    if names and iface not in names:
        raise CaptureError(f"no interface named {iface!r} (this machine has: {', '.join(names)})")


def permission_message(where: str) -> str:
    return (f"no permission to capture on {where}: run as root or give python CAP_NET_RAW "
            f"(or watch a recorded capture with --replay FILE)")


# What --tunnels lets through besides TCP: VXLAN and Geneve, GRE (and ERSPAN in it), IP in IP, and on
# Ethernet MPLS and PPPoE sessions (by Ethernet type: the mpls/pppoes keywords would shift the offsets of
# the rest of the expression). The tunnels' inner TCP ports cannot be filtered here: kwire reads them.
TUNNEL_FILTER = ("(udp and ({udp})) or ip proto 47 or ip proto 4 or ip proto 41 or ip6 proto 41 or ip6 proto 4 "
                 "or ether proto 0x8847 or ether proto 0x8848 or ether proto 0x8864")


def tunnel_filter(udp_ports) -> str:
    """The tunnels' part of the capture filter, VXLAN and Geneve on `udp_ports`."""
    return TUNNEL_FILTER.format(udp=" or ".join(f"dst port {p}" for p in sorted(set(udp_ports))))


def default_filter(ports=(), tunnels=None) -> str:
    """The BPF filter kwire uses unless told otherwise: TCP, on the given ports when there are any;
    with `tunnels` (the UDP ports of VXLAN and Geneve), the tunnels kwire opens too."""
    if tunnels:
        return f"({_tcp_filter(ports)}) or {tunnel_filter(tunnels)}"
    return _tcp_filter(ports)


def _tcp_filter(ports) -> str:
    ports = sorted(set(ports))
    if not ports:
        return "tcp"
    return "tcp and (" + " or ".join(f"port {p}" for p in ports) + ")"


def quiet_scapy() -> None:
    """Scapy logs warnings to stderr, which would scribble over the dashboard."""
    import logging

    logging.getLogger("scapy").setLevel(logging.ERROR)


def compile_filter(expression: str, linktype: int) -> Program:
    """libpcap's program for `expression` on `linktype` (1: Ethernet, 101: raw IP), accepting
    SNAPLEN bytes."""
    quiet_scapy()
    try:
        from scapy.arch.common import compile_filter as scapy_compile
        from scapy.arch.common import free_filter
        from scapy.error import Scapy_Exception
    except Exception as exc:  # noqa: BLE001 - scapy missing or broken
        raise CaptureError(f"cannot compile the capture filter: scapy is not usable ({exc})") from None
    try:
        compiled = scapy_compile(expression, linktype=linktype)
    except ImportError as exc:
        raise CaptureError(f"cannot compile the capture filter {expression!r}: {exc}") from None
    except (Scapy_Exception, OSError) as exc:
        text = str(exc)
        if "(" in text and text.endswith(")"):
            text = text[text.rindex("(") + 1:-1]
        raise CaptureError(f"bad capture filter {expression!r}: {text}") from None
    try:
        program = []
        for i in range(compiled.bf_len):
            insn = compiled.bf_insns[i]
            k = insn.k
            if insn.code == _RET_K and k:
                k = SNAPLEN
            program.append((insn.code, insn.jt, insn.jf, k))
        return program
    finally:
        free_filter(compiled)


def kernel_prologue(ip_only: bool) -> Program:
    """Instructions to run before a compiled program (see the module docstring); they fall through
    to it for every packet they do not drop."""
    out = [(_LD_W_ABS, 0, 0, _SKF_AD_OFF + _SKF_AD_PKTTYPE & 0xFFFFFFFF),
           (_JEQ_K, 0, 3, PACKET_OUTGOING),              # not going out: on
           (_LD_W_ABS, 0, 0, _SKF_AD_OFF + _SKF_AD_HATYPE & 0xFFFFFFFF),
           (_JEQ_K, 0, 1, ARPHRD_LOOPBACK),              # going out of a loopback: dropped
           (_RET_K, 0, 0, 0)]
    if ip_only:
        out += [(_LD_W_ABS, 0, 0, _SKF_AD_OFF + _SKF_AD_PROTOCOL & 0xFFFFFFFF),
                (_JEQ_K, 2, 0, ETH_P_IP),
                (_JEQ_K, 1, 0, ETH_P_IPV6),
                (_RET_K, 0, 0, 0)]
    return out


def attach_filter(sock: socket.socket, program: Program, expression: str) -> None:
    """Attach `program` to `sock` in the kernel (the expression is only for the error message)."""
    import ctypes

    code = b"".join(_INSN.pack(*insn) for insn in program)
    buf = ctypes.create_string_buffer(code, len(code))
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, _FPROG.pack(len(program), ctypes.addressof(buf)))
    except OSError as exc:
        raise CaptureError(f"cannot attach the capture filter {expression!r}: {exc.strerror or exc}") from None
