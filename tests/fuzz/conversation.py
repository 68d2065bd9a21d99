"""Test-only: a TCP conversation (handshake, data cut into segments, ACKs, FINs) as Ethernet/IPv4 packets
and as a pcap file, for tests that need whole captures built from Kafka frames."""

from __future__ import annotations

import struct

from tests.capture.builders import pcap

CLIENT = (b"\x7f\x00\x00\x01", 40000)
BROKER = (b"\x7f\x00\x00\x01", 9092)
SYN, ACK, PSH, FIN = 0x02, 0x10, 0x08, 0x01


def ether_ipv4_tcp(src, dst, seq: int, ack: int, flags: int, payload: bytes = b"") -> bytes:
    tcp = struct.pack("!HHIIBBHHH", src[1], dst[1], seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags,
                      65535, 0, 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, src[0], dst[0])
    return b"\x00" * 12 + b"\x08\x00" + ip + tcp


def conversation(messages, *, client=CLIENT, broker=BROKER, mss: int = 1448, start_ns: int = 10**18,
                 step_ns: int = 1000, handshake: bool = True, close: bool = True) -> list[tuple[int, bytes]]:
    """messages: (direction, bytes) in order, direction 0 = client -> broker. Returns (ts_ns, frame) records."""
    out = []
    ts = start_ns
    seq = {0: 1000, 1: 500000}
    ends = {0: client, 1: broker}

    def emit(d, flags, payload=b""):
        nonlocal ts
        out.append((ts, ether_ipv4_tcp(ends[d], ends[1 - d], seq[d], seq[1 - d], flags, payload)))
        ts += step_ns

    if handshake:
        seq[0] -= 1
        emit(0, SYN)
        seq[0] += 1
        seq[1] -= 1
        out.append((ts, ether_ipv4_tcp(broker, client, seq[1], seq[0], SYN | ACK)))
        ts += step_ns
        seq[1] += 1
        emit(0, ACK)
    for d, data in messages:
        for i in range(0, len(data), mss):
            piece = data[i:i + mss]
            emit(d, ACK | PSH, piece)
            seq[d] += len(piece)
        emit(1 - d, ACK)
    if close:
        emit(0, FIN | ACK)
        seq[0] += 1
        emit(1, FIN | ACK)
        seq[1] += 1
        emit(0, ACK)
    return out


def conversation_pcap(messages, **kw) -> bytes:
    return pcap(conversation(messages, **kw), nano=True)
