"""Split a classic pcap into rotated files the way `tcpdump -C`/`editcap -c` do: consecutive runs of
packets, each file with the original file header. Test support only."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path


_LITTLE = (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")  # microsecond, nanosecond
_BIG = (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d")


def pcap_records(data: bytes) -> tuple[bytes, list[bytes]]:
    magic = data[:4]
    if magic not in _LITTLE + _BIG:  # a pcapng read as one would be one garbage record: no file edge at all
        raise ValueError(f"not a classic pcap (magic {magic.hex()}): rewrite it with classic_pcap() first")
    endian = "<" if magic in _LITTLE else ">"
    header, pos, records = data[:24], 24, []
    while pos + 16 <= len(data):
        caplen = struct.unpack_from(endian + "I", data, pos + 8)[0]
        records.append(data[pos:pos + 16 + caplen])
        pos += 16 + caplen
    return header, records


def classic_pcap(capture: str | Path, out: Path) -> Path:
    """`capture` (a pcapng, say) as kwire reads it, written to `out` as a nanosecond classic pcap of its
    one link type, for rotate()."""
    from kwire.capture.files import read_captures
    from tests.capture.builders import pcap

    packets = list(read_captures([str(capture)]))
    linktypes = {p.linktype for p in packets}
    if len(linktypes) != 1:
        raise ValueError(f"{capture}: {len(linktypes)} link types, a classic pcap holds one")
    out.write_bytes(pcap([(p.ts_ns, p.data, p.wire_len) for p in packets], nano=True, linktype=linktypes.pop()))
    return out


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


def interleaved_copies(capture: str | Path, dst: Path, copies: int, shift_us: int = 3000) -> Path:
    """`copies` copies of a little-endian microsecond Ethernet/IPv4 pcap merged in time, copy i
    shifted by i * shift_us and its TCP ports by 7 * i (each copy its own set of connections), as
    scripts/bench.py makes its big capture. Many connections, each cut by many file edges."""
    import heapq

    header, records = pcap_records(Path(capture).read_bytes())
    streams = []
    for i in range(copies):
        out = []
        for rec in records:
            sec, usec, caplen, wirelen = struct.unpack_from("<IIII", rec, 0)
            ts = sec * 1_000_000 + usec + i * shift_us
            data = bytearray(rec[16:])
            if len(data) >= 38 and data[12:14] == b"\x08\x00" and data[23] == 6:
                t = 14 + (data[14] & 0x0F) * 4
                sport, dport = struct.unpack_from("!HH", data, t)
                struct.pack_into("!HH", data, t, (sport + 7 * i) & 0xFFFF, (dport + 7 * i) & 0xFFFF)
            out.append((ts, i, struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, caplen, wirelen) + bytes(data)))
        streams.append(out)
    dst.write_bytes(header + b"".join(r for _, _, r in heapq.merge(*streams)))
    return dst
