#!/usr/bin/env python3
"""How fast kwire reads empty records (the slowest input per byte: a record's cost with none of its bytes), plain
and compressed in every format, as docs/bounds.md quotes it (issue 49). Each capture is built by
tests/hostile3/compressed.py (`--mib` MiB of empty pcap records or pcapng Enhanced Packet Blocks, uncompressed)
and read by `kwire stats` under /usr/bin/time; one markdown row a run: format, container, file size, wall time,
peak RSS, MB/s and records/s of the uncompressed input, and the lines kwire said on stderr.

    python scripts/bench_empty_records.py [--mib 64] [--tree DIR] [--only gzip,zstd,...] [--folder DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hostile3.compressed import EMPTY_EPB, FORMATS, PCAP_HEADER, PCAPNG_HEAD, SUFFIX, empty_records  # noqa: E402


def build(folder: Path, fmt: str, container: str, mib: int) -> tuple[Path, int]:
    """The capture of `mib` MiB of empty records, `fmt` "plain" or a compression (built once, kept in folder)."""
    head, record = (PCAP_HEADER, bytes(16)) if container == "pcap" else (PCAPNG_HEAD, EMPTY_EPB)
    records = (mib << 20) // len(record)
    name = f"empty-{mib}m.{container}" + ("" if fmt == "plain" else f".{SUFFIX[fmt]}")
    path = folder / name
    if not path.exists():
        if fmt == "plain":
            with open(path, "wb") as f:
                f.write(head)
                per_chunk = (1 << 20) // len(record)
                for i in range(0, records, per_chunk):
                    f.write(record * min(per_chunk, records - i))
        else:
            path.write_bytes(empty_records(fmt, records, container))
    return path, records


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64)
    ap.add_argument("--tree", default=str(ROOT))
    ap.add_argument("--only", default="plain," + ",".join(FORMATS))
    ap.add_argument("--container", default="pcap,pcapng")
    ap.add_argument("--folder", default="/tmp/kwire-empty")
    args = ap.parse_args()
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=args.tree)
    print("| format | container | file | wall | peak RSS | MB/s | records/s | stderr |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for container in args.container.split(","):
        for fmt in args.only.split(","):
            path, records = build(folder, fmt, container, args.mib)
            start = time.monotonic()
            got = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "kwire", "stats", str(path)],
                                 env=env, cwd=args.tree, capture_output=True, text=True)
            wall = time.monotonic() - start
            lines = got.stderr.strip().splitlines()
            said = "; ".join(line for line in lines[:-1] if "expands" in line or "reading:" in line)[:160]
            print(f"| {fmt} | {container} | {path.stat().st_size:,} | {wall:.1f} s | {int(lines[-1]) // 1024} MB | "
                  f"{(args.mib << 20) / wall / 1e6:.1f} | {records / wall:,.0f} | {said} |", flush=True)


if __name__ == "__main__":
    main()
