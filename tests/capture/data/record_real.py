#!/usr/bin/env python3
"""Record the small real captures in this folder with tcpdump and dumpcap (run as root, Linux).

    python tests/capture/data/record_real.py

Each capture watches one TCP port on the loopback while this script sends a known conversation
over IPv4 and IPv6 (see CONVERSATION); tests check that kwire finds exactly those payloads.
Capturing runs for a few seconds at most (each tool under `timeout`). For each capture, tshark's
view of every TCP packet is written beside it as <capture>.tshark.tsv (the ground truth the
tests compare kwire with); `--truth-only` rewrites only those files.
"""

from __future__ import annotations

import gzip
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PORT = 19092
# (client -> server message, server -> client reply), sent in order on each connection
CONVERSATION = [(b"hello kwire %d" % i, b"reply %d" % i * (i + 1)) for i in range(5)]


def serve(family: int, host: str, ready: threading.Event) -> None:
    srv = socket.socket(family, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, PORT))
    srv.listen(1)
    ready.set()
    conn, _ = srv.accept()
    with conn, srv:
        for request, reply in CONVERSATION:
            got = b""
            while len(got) < len(request):
                got += conn.recv(65536)
            conn.sendall(reply)


def talk(family: int, host: str) -> None:
    ready = threading.Event()
    t = threading.Thread(target=serve, args=(family, host, ready))
    t.start()
    ready.wait(5)
    with socket.create_connection((host, PORT), timeout=5) as c:
        for request, reply in CONVERSATION:
            c.sendall(request)
            got = b""
            while len(got) < len(reply):
                got += c.recv(65536)
            time.sleep(0.01)
    t.join(5)


def record(name: str, cmd: list[str]) -> None:
    out = HERE / name
    proc = subprocess.Popen(["timeout", "10"] + cmd + ["-w", str(out)], stderr=subprocess.PIPE)
    # tcpdump says "listening on", dumpcap "Capturing on" once the capture runs
    deadline = time.time() + 5
    line = b""
    while time.time() < deadline and b"listening" not in line and b"Capturing" not in line:
        line = proc.stderr.readline()
    time.sleep(0.3)
    talk(socket.AF_INET, "127.0.0.1")
    talk(socket.AF_INET6, "::1")
    time.sleep(1.5)  # let the kernel hand over the last packets
    proc.terminate()
    proc.wait(10)
    print(name, out.stat().st_size, "bytes")


TRUTH_FIELDS = [
    "frame.time_epoch", "frame.cap_len", "ip.src", "ipv6.src", "tcp.srcport", "ip.dst",
    "ipv6.dst", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.flags", "tcp.len", "tcp.payload",
]


def truth(name: str) -> None:
    cmd = ["tshark", "-r", str(HERE / name), "-T", "fields", "-E", "separator=/t", "-E", "header=y"]
    for f in TRUTH_FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, check=True).stdout
    (HERE / (name + ".tshark.tsv")).write_bytes(out)


CAPTURES = ["lo_us.pcap", "lo_ns.pcap", "any_sll.pcap", "any_sll2.pcap", "lo_snap80.pcap", "lo_any.pcapng"]


def main() -> None:
    if "--truth-only" in sys.argv:
        for name in CAPTURES:
            truth(name)
        return
    flt = ["tcp", "port", str(PORT)]
    record("lo_us.pcap", ["tcpdump", "-U", "--immediate-mode", "-i", "lo"] + flt)
    record("lo_ns.pcap", ["tcpdump", "-U", "--immediate-mode", "-i", "lo", "--time-stamp-precision=nano"] + flt)
    record("any_sll.pcap", ["tcpdump", "-U", "--immediate-mode", "-i", "any", "-y", "LINUX_SLL"] + flt)
    record("any_sll2.pcap", ["tcpdump", "-U", "--immediate-mode", "-i", "any", "-y", "LINUX_SLL2"] + flt)
    record("lo_snap80.pcap", ["tcpdump", "-U", "--immediate-mode", "-i", "lo", "-s", "80"] + flt)
    record("lo_any.pcapng", ["dumpcap", "-q", "-i", "lo", "-i", "any", "-f", " ".join(flt)])
    with open(HERE / "lo_any.pcapng", "rb") as src, gzip.open(HERE / "lo_any.pcapng.gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    for name in CAPTURES:
        truth(name)


if __name__ == "__main__":
    main()
