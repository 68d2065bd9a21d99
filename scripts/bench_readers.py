#!/usr/bin/env python3
"""Time kwire's capture reader + decode_segment against scapy's readers on one capture file.

    python scripts/bench_readers.py make /tmp/bench.pcap --packets 200000   # build a test capture
    python scripts/bench_readers.py run /tmp/bench.pcap [--scapy-limit 50000] [--tshark]

`make` writes Ethernet/IPv4/TCP packets with small payloads (a few connections, both directions,
microsecond pcap; `--pcapng` for pcapng, `--gzip` to compress). `run` prints packets/s for each
reader; scapy readers stop after --scapy-limit packets (they are slow) and their rate is computed
on what they read. Rates are per CPU second (this process, or tshark's), so a busy machine skews
them less than wall time; each figure is the best of --repeat runs (tshark and scapy run once).
"""

from __future__ import annotations

import argparse
import gzip
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kwire.capture.files import open_capture  # noqa: E402
from kwire.capture.stats import CaptureStats  # noqa: E402
from kwire.native.net_decode import DecodeCounters, decode_segment  # noqa: E402


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def build_frames(count: int) -> list[tuple[int, bytes]]:
    """(ts_ns, Ethernet frame) for `count` small TCP packets on 8 connections, both ways."""
    frames = []
    ts = 1_700_000_000_000_000_000
    seqs: dict[tuple[int, int], int] = {}
    for i in range(count):
        conn = i % 8
        direction = (i // 8) % 2
        client = (bytes([10, 0, 0, 1 + conn]), 40000 + conn)
        server = (bytes([10, 0, 1, 1]), 9092)
        (sip, sport), (dip, dport) = (client, server) if direction == 0 else (server, client)
        payload = bytes([65 + i % 26]) * (20 + i % 60)
        key = (conn, direction)
        seq = seqs.get(key, 1000 * (conn + 1))
        seqs[key] = (seq + len(payload)) & 0xFFFFFFFF
        tcp = struct.pack("!HHIIBBHHH", sport, dport, seq, 0, 5 << 4, 0x18, 65535, 0, 0) + payload
        total = 20 + len(tcp)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, i & 0xFFFF, 0x4000, 64, 6, 0, sip, dip)
        ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
        eth = b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00"
        frames.append((ts, eth + ip + tcp))
        ts += 10_000
    return frames


def write_pcap(path: Path, frames, compress: bool) -> None:
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1)]
    for ts, frame in frames:
        sec, ns = divmod(ts, 1_000_000_000)
        out.append(struct.pack("<IIII", sec, ns // 1000, len(frame), len(frame)) + frame)
    _write(path, b"".join(out), compress)


def write_pcapng(path: Path, frames, compress: bool) -> None:
    def block(btype: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        return struct.pack("<II", btype, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    out.append(block(1, struct.pack("<HHI", 1, 0, 262144)))
    for ts, frame in frames:
        us = ts // 1000
        out.append(block(6, struct.pack("<IIIII", 0, us >> 32, us & 0xFFFFFFFF, len(frame), len(frame)) + frame))
    _write(path, b"".join(out), compress)


def _write(path: Path, data: bytes, compress: bool) -> None:
    path.write_bytes(gzip.compress(data, 6) if compress else data)


def _cpu() -> float:
    """CPU seconds used by this process and its finished children (tshark)."""
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + child.ru_utime + child.ru_stime


def _best(fn, repeat: int) -> tuple[float, float, int]:
    best_cpu = best_wall = None
    count = 0
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), _cpu()
        count = fn()
        cpu, wall = _cpu() - c0, time.perf_counter() - w0
        best_cpu = cpu if best_cpu is None else min(best_cpu, cpu)
        best_wall = wall if best_wall is None else min(best_wall, wall)
    return best_cpu, best_wall, count


def run(path: Path, scapy_limit: int, repeat: int, tshark: bool) -> None:
    def kwire_read() -> int:
        n = 0
        for _ in open_capture(path):
            n += 1
        return n

    def kwire_decode() -> int:
        counters = DecodeCounters()
        n = 0
        for packet in open_capture(path, CaptureStats()):
            if decode_segment(packet, counters) is not None:
                n += 1
        return n

    def scapy_raw() -> int:
        from scapy.utils import RawPcapReader

        n = 0
        with RawPcapReader(str(path)) as r:
            for _ in r:
                n += 1
                if n >= scapy_limit:
                    break
        return n

    def scapy_reader() -> int:
        from scapy.layers.inet import TCP
        from scapy.utils import PcapReader

        n = 0
        with PcapReader(str(path)) as r:
            for pkt in r:
                if TCP in pkt:
                    bytes(pkt[TCP].payload)
                n += 1
                if n >= scapy_limit:
                    break
        return n

    def scapy_rdpcap() -> int:
        from scapy.utils import rdpcap

        return len(rdpcap(str(path), count=scapy_limit))

    def tshark_fields() -> int:
        out = subprocess.run(
            ["tshark", "-r", str(path), "-T", "fields", "-e", "tcp.seq", "-e", "tcp.len"],
            capture_output=True, check=True,
        ).stdout
        return out.count(b"\n")

    rows = [
        ("kwire open_capture (read only)", kwire_read, repeat),
        ("kwire open_capture + decode_segment", kwire_decode, repeat),
        ("scapy RawPcapReader (no dissection)", scapy_raw, 1),
        ("scapy PcapReader (+ TCP payload)", scapy_reader, 1),
        ("scapy rdpcap", scapy_rdpcap, 1),
    ]
    if tshark:
        rows.append(("tshark -T fields tcp.seq tcp.len", tshark_fields, 1))
    print(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    print(f"  {'reader':40s} {'packets':>9s} {'cpu s':>8s} {'wall s':>8s} {'packets/cpu s':>14s}")
    for label, fn, reps in rows:
        cpu, wall, count = _best(fn, reps)
        print(f"  {label:40s} {count:>9d} {cpu:8.3f} {wall:8.3f} {count / cpu:>14,.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make", help="write a test capture")
    mk.add_argument("path", type=Path)
    mk.add_argument("--packets", type=int, default=200_000)
    mk.add_argument("--pcapng", action="store_true")
    mk.add_argument("--gzip", action="store_true")
    rn = sub.add_parser("run", help="time the readers on a capture")
    rn.add_argument("path", type=Path)
    rn.add_argument("--scapy-limit", type=int, default=50_000)
    rn.add_argument("--repeat", type=int, default=3)
    rn.add_argument("--tshark", action="store_true", help="also time tshark -T fields")
    args = ap.parse_args()
    if args.cmd == "make":
        frames = build_frames(args.packets)
        (write_pcapng if args.pcapng else write_pcap)(args.path, frames, args.gzip)
        print(f"wrote {args.packets} packets to {args.path}")
    else:
        run(args.path, args.scapy_limit, args.repeat, args.tshark)


if __name__ == "__main__":
    main()
