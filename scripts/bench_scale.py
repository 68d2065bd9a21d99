#!/usr/bin/env python3
"""Scale bounds, measured: wall time and peak RSS of `kwire stats` and `kwire inspect --json` on big
captures written by kwire's own writer (tests/campaign/traffic.py: kwire.capture.pcapwrite.PcapWriter,
frames from tests/kafka/frames.py and tests/render/hostile.py), into --dir (not committed):

- syn200k:   200,000 SYN-only connections, then one Kafka exchange (issue 12: under 30 s);
- short200k: 200,000 connections, each a handshake, one Metadata exchange and FINs;
- acks0-1g:  an acks=0 producer flood of 1 GiB (Produce requests of 16 KiB, never answered);
- batches1m: 1,000,000 record batches (1,000 Produce exchanges of 1,000 one-record batches);
- e2e2m:     2,000,000 one-record batches written and read (20,000 Produce exchanges of 100 partitions, each
             followed by a consumer's Fetch delivering them): as many writes and deliveries for end-to-end
             latency to keep, against its caps (kwire/analytics/end_to_end.py; synthetic: frames encoded from
             kwire's schemas, written by kwire's own writer);
and issue 12's hostile record sets, with --records where that is the point:
- bombs1000: a thousand 2 KB zstd bombs (64 MiB of zeros each, size not declared), one per exchange;
- p8x60:     8 partitions of one 60 MiB zero value each (zstd), one exchange;
- p8x48ctl:  8 partitions of one value of 48 MiB - 100 bytes of \x01 each (zstd): the largest
             exchange the default budget decodes, and the worst for JSON (each byte is "\u0001");
- headers5m: one record with 5,000,000 empty headers;
- empty500k: 500,000 empty record batches in one exchange.

Each command runs under /usr/bin/time (GNU time: peak RSS of the largest process, kwire's main
process or one of its workers) with the default --jobs. Prints a Markdown table (docs/bounds.md).

    python scripts/bench_scale.py [--dir /tmp/kwire-scale] [--only syn200k,batches1m] [--keep]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.campaign import traffic  # noqa: E402


def _issue_capture(path: Path, name: str) -> None:
    from tests.native.test_codec_compression import zstd_zeros
    from tests.codec.test_records_encoder import ZSTD, v2_batch
    from tests.fuzz.conversation import conversation_pcap
    from tests.render.hostile import bomb_capture, exchange, produce_exchange

    first = exchange(3, 9, 99_999, "producer", {"Topics": [{"Name": "t"}]}, {"Brokers": [], "Topics": []})
    if name == "bombs1000":
        bomb = v2_batch(payload=zstd_zeros(64 << 20, False), codec=ZSTD, record_count=1)
        messages = list(first)
        for corr in range(1, 1001):
            messages += produce_exchange(corr, [bomb])
        path.write_bytes(conversation_pcap(messages))
    elif name == "p8x60":
        path.write_bytes(bomb_capture(1, 8, 60 << 20))
    elif name == "p8x48ctl":
        batch = v2_batch([(b"k", b"\x01" * ((48 << 20) - 100))], codec=ZSTD)
        path.write_bytes(conversation_pcap(first + produce_exchange(1, [batch] * 8)))
    elif name == "headers5m":
        batch = v2_batch([(b"k", b"v", [(b"", b"")] * 5_000_000)])
        path.write_bytes(conversation_pcap(first + produce_exchange(1, [batch])))
    else:
        raise ValueError(name)


CAPTURES = {
    "syn200k": (lambda p: traffic.syn_flood(p, 200_000), ("stats",), ("inspect", "--json")),
    "short200k": (lambda p: traffic.short_connections(p, 200_000), ("stats",), ("inspect", "--json")),
    "acks0-1g": (lambda p: traffic.acks0_flood(p, 1 << 30), ("stats",), ("inspect", "--json")),
    "batches1m": (lambda p: traffic.batch_flood(p, 1_000_000, 1000), ("stats",), ("inspect", "--json")),
    "e2e2m": (lambda p: traffic.write_read_flood(p, 2_000_000, 100), ("stats", "-j", "0"), ("stats", "--json", "-j", "0")),
    "bombs1000": (lambda p: _issue_capture(p, "bombs1000"), ("inspect", "--json", "--records"),
                  ("inspect", "--records")),
    "p8x60": (lambda p: _issue_capture(p, "p8x60"), ("inspect", "--json", "--records"), ("inspect", "--records")),
    "p8x48ctl": (lambda p: _issue_capture(p, "p8x48ctl"), ("inspect", "--json", "--records"),
                 ("inspect", "--records")),
    "headers5m": (lambda p: _issue_capture(p, "headers5m"), ("inspect", "--json", "--records"), ("stats",)),
    "empty500k": (lambda p: traffic.empty_batches(p, 500_000), ("stats",), ("inspect", "--json"), ("inspect",),
                  ("inspect", "--json", "--records")),
}


def measure(argv: list[str]) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in bytes, exit status) of `python -m kwire argv`, output discarded."""
    time_bin = shutil.which("time", path="/usr/bin")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "kwire", *argv]
    start = time.monotonic()
    if time_bin:
        done = subprocess.run([time_bin, "-f", "KWIRE-RSS %M", *cmd], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env, cwd=ROOT, text=True)
        seconds = time.monotonic() - start
        rss = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("KWIRE-RSS ")]
        return seconds, (rss[-1] if rss else 0) * 1024, done.returncode
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)  # (this process's size counts too: Linux keeps maxrss over exec)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.monotonic() - start, usage.ru_maxrss * 1024, proc.returncode


def _size(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n / 2**10:,.0f} KiB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/kwire-scale"))
    parser.add_argument("--only", help="comma-separated capture names")
    parser.add_argument("--keep", action="store_true", help="keep the captures (default: delete each after use)")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    names = args.only.split(",") if args.only else list(CAPTURES)
    rows = ["| capture | size | command | wall time | peak RSS | exit |", "|---|---|---|---|---|---|"]
    for name in names:
        make, *commands = CAPTURES[name]
        path = args.dir / f"{name}.pcap"
        if not path.exists():
            start = time.monotonic()
            make(path)
            print(f"wrote {path} ({path.stat().st_size:,} bytes) in {time.monotonic() - start:.1f} s", flush=True)
        for command in commands:
            seconds, rss, status = measure([*command, str(path)])
            row = (f"| {name} | {_size(path.stat().st_size)} | `kwire {' '.join(command)}` | {seconds:.1f} s "
                   f"| {rss / 2**20:,.0f} MiB | {status} |")
            print(row, flush=True)
            rows.append(row)
        if not args.keep:
            path.unlink()
    print("\n".join(rows))


if __name__ == "__main__":
    main()
