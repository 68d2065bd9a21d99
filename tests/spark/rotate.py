"""Split a classic pcap into rotated files the way `tcpdump -C`/`editcap -c` do: consecutive runs of
packets, each file with the original file header. Test support only."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path


def pcap_records(data: bytes) -> tuple[bytes, list[bytes]]:
    magic = data[:4]
    endian = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    header, pos, records = data[:24], 24, []
    while pos + 16 <= len(data):
        caplen = struct.unpack_from(endian + "I", data, pos + 8)[0]
        records.append(data[pos:pos + 16 + caplen])
        pos += 16 + caplen
    return header, records


def rotate(capture: str | Path, out_dir: Path, packets_per_file: int, *, gzip_every: int = 0) -> list[Path]:
    """Write out_dir/part-00000.pcap, ...; every `gzip_every`-th file gzip-compressed (.pcap.gz)."""
    header, records = pcap_records(Path(capture).read_bytes())
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, start in enumerate(range(0, len(records), packets_per_file)):
        blob = header + b"".join(records[start:start + packets_per_file])
        if gzip_every and i % gzip_every == gzip_every - 1:
            path = out_dir / f"part-{i:05d}.pcap.gz"
            path.write_bytes(gzip.compress(blob))
        else:
            path = out_dir / f"part-{i:05d}.pcap"
            path.write_bytes(blob)
        paths.append(path)
    return paths
