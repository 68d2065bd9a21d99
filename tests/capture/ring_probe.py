"""A ring capture run in a network namespace for tests/capture/test_ring.py (a process of its own:
the interface lives in the namespace, the tests in theirs).

    python -m tests.capture.ring_probe IFACE FILTER OUT.pcap [RING_BYTES] [--hold]

Opens kwire.capture.ring.RingCapture on IFACE, prints "ready", writes every packet the ring hands
over to OUT.pcap (kwire.capture.pcapwrite) and counts them through a PacketCollector, until its
stdin is closed and the ring is empty; then prints one JSON line: packets, bytes, truncated, kernel drops, the link type,
and the error that ended the capture, if one did. With --hold it reads nothing until stdin says
"go" (so the ring fills and the kernel drops), then reads everything there is.
"""

from __future__ import annotations

import json
import select
import sys

from kwire.capture.packet import PacketCollector
from kwire.capture.pcapwrite import PcapWriter
from kwire.capture.ring import RingCapture
from kwire.errors import CaptureError


def main() -> None:
    iface, expression, out = sys.argv[1:4]
    ring_bytes = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4].isdigit() else 64 << 20
    hold = "--hold" in sys.argv
    ring = RingCapture(iface, expression, ring_bytes=ring_bytes, block_size=4096 if hold else 1 << 20)
    ring.open()
    print("ready", flush=True)
    if hold:
        sys.stdin.readline()
    collector = PacketCollector()
    error = None
    with PcapWriter(out, ring.linktype) as writer:
        stopping, blocks = False, 0
        try:
            for _ in ring.feed(collector, writer, idle_s=0.02):
                if stopping and ring.stats.blocks == blocks:
                    break  # stdin closed, and a wait brought no block: everything was read
                blocks = ring.stats.blocks
                if not stopping and select.select([sys.stdin], [], [], 0)[0] and not sys.stdin.readline():
                    stopping = True
        except CaptureError as exc:
            error = str(exc)
    ring.read_drops()
    stats = ring.stats
    print(json.dumps({"packets": stats.packets, "collected": len(collector.packets), "bytes": stats.bytes,
                      "truncated": stats.truncated, "kernel_drops": stats.kernel_drops,
                      "linktype": ring.linktype, "error": error}), flush=True)
    ring.close()


if __name__ == "__main__":
    main()
