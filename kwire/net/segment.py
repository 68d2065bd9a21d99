"""What the net layer hands to TCP reassembly: one TCP segment with its addresses.

IP addresses stay as packed bytes (4 or 16) on the hot path; `format_endpoint` makes the
"ip:port" text (IPv6 as "[addr]:port") only when something is shown.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache

FIN = 0x01
SYN = 0x02
RST = 0x04
PSH = 0x08
ACK = 0x10


@dataclass(slots=True)
class Segment:
    ts_ns: int
    src_ip: bytes
    src_port: int
    dst_ip: bytes
    dst_port: int
    seq: int
    ack: int
    flags: int
    payload: bytes  # the TCP payload actually captured
    truncated: bool  # True when the snap length cut the payload short
    missing: int = 0  # payload bytes sent but not captured (the IP length says so): the snap length's cut


Endpoint = tuple[bytes, int]


@lru_cache(maxsize=4096)
def format_endpoint(ip: bytes, port: int) -> str:
    if len(ip) == 16:
        return f"[{ipaddress.IPv6Address(ip)}]:{port}"
    return f"{ipaddress.IPv4Address(ip)}:{port}"
