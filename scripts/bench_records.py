#!/usr/bin/env python3
"""Throughput of `--records` decoding: `kwire.native.codec_records.decode_records` on every records field of
the given captures, plus synthetic record sets (many small records with headers, uncompressed and
zstd), best of several rounds in CPU time. Used to check that changes to the record decoder do not
slow `--records` down (docs/bounds.md).

    python scripts/bench_records.py captures/*.pcap [--rounds 7]
"""

from __future__ import annotations

import argparse
import struct
import time

from kwire.native.codec_records import decode_records
from kwire.codec.values import RawRecords
from kwire.pipeline import analyze_files


def record_sets(paths) -> list[bytes]:
    out: list[bytes] = []

    def walk(node):
        if type(node) is RawRecords:
            out.append(bytes(node.data))
        elif type(node) is dict:
            for v in node.values():
                walk(v)
        elif type(node) is list:
            for v in node:
                walk(v)

    for ex in analyze_files(paths):
        walk(ex.request)
        walk(ex.response)
    return out


def _varint(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def synthetic_batch(n: int, headers: int, codec: int) -> bytes:
    """One v2 batch of n records (key, 40-byte value, `headers` headers each), codec 0 or 4 (zstd)."""
    import crc32c

    recs = []
    for i in range(n):
        key = b"key-%d" % i
        value = b"v" * 40
        body = (b"\x00" + _varint(i) + _varint(i) + _varint(len(key)) + key + _varint(len(value)) + value
                + _varint(headers) + b"".join(_varint(2) + b"h%d" % (j % 10) + _varint(3) + b"xyz"
                                              for j in range(headers)))
        recs.append(_varint(len(body)) + body)
    payload = b"".join(recs)
    if codec == 4:
        import zstandard

        payload = zstandard.ZstdCompressor().compress(payload)
    tail = struct.pack(">hiqqqhii", codec, n - 1, 1_700_000_000_000, 1_700_000_000_000 + n, -1, -1, -1, n) + payload
    return struct.pack(">qiibI", 0, len(tail) + 9, 0, 2, crc32c.crc32c(tail)) + tail


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("captures", nargs="*")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    suites = {}
    if args.captures:
        suites["captures"] = record_sets(args.captures)
    suites["small records, 2 headers"] = [synthetic_batch(2000, 2, 0) for _ in range(10)]
    suites["small records, zstd"] = [synthetic_batch(2000, 0, 4) for _ in range(10)]
    for name, sets in suites.items():
        records = sum(sum(len(b.get("Records", ())) for b in decode_records(s)["batches"]) for s in sets)
        size = sum(map(len, sets))
        best = None
        for _ in range(args.rounds):
            start = time.process_time()
            for s in sets:
                decode_records(s)
            elapsed = time.process_time() - start
            best = elapsed if best is None else min(best, elapsed)
        print(f"{name}: {len(sets)} record sets, {size / 1e6:.2f} MB, {records:,} records; best of {args.rounds}: "
              f"{best * 1e3:.1f} ms = {records / best:,.0f} records/s")


if __name__ == "__main__":
    main()
