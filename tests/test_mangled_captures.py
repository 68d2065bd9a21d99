"""Thirty mangled variants of real captures through `kwire inspect --json`, each as its own process.

Cut short at many points, bytes flipped, garbage inserted and appended, file and record headers
damaged, pcapng blocks and gzip streams broken, Kafka bytes inside the TCP payload damaged. Each run
must end (a timeout catches hangs) with exit status 0 or 1, print no traceback, write only JSON
lines on stdout and only `kwire: ...` lines on stderr; exit 1 comes with one-line
`kwire: error: ...` messages, exit 0 with results.
"""

from __future__ import annotations

import gzip
import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

CAPTURES = Path(__file__).resolve().parent.parent / "captures"
PCAP = CAPTURES / "produce-consume-gzip.pcap"
MULTI = CAPTURES / "multi-broker-3.pcap"
PCAPNG = CAPTURES / "produce-consume-zstd-nano.pcapng"
TIMEOUT = 120


def records(blob: bytes) -> list[tuple[int, int]]:
    """(offset, length) of every record (header included) of a little-endian microsecond pcap."""
    out = []
    pos = 24
    while pos + 16 <= len(blob):
        caplen = struct.unpack_from("<I", blob, pos + 8)[0]
        out.append((pos, 16 + caplen))
        pos += 16 + caplen
    return out


def flip(blob: bytes, count: int, seed: int, lo: int = 24) -> bytes:
    rng = random.Random(seed)
    buf = bytearray(blob)
    for _ in range(count):
        i = rng.randrange(lo, len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def set_at(blob: bytes, offset: int, raw: bytes) -> bytes:
    return blob[:offset] + raw + blob[offset + len(raw):]


def payload_damage(blob: bytes, seed: int, every: int) -> bytes:
    """Overwrite 4 bytes of the TCP payload of every `every`-th packet (frame lengths, headers, bodies)."""
    rng = random.Random(seed)
    buf = bytearray(blob)
    for i, (pos, length) in enumerate(records(blob)):
        if i % every == 0 and length > 16 + 66 + 8:
            at = pos + 16 + 66 + rng.randrange(length - 16 - 66 - 4)
            buf[at:at + 4] = rng.choice((b"\x7f\xff\xff\xff", b"\x00\x00\x00\x00", b"\xff\xff\xff\xff",
                                         rng.randbytes(4)))
    return bytes(buf)


def drop_and_duplicate(blob: bytes, seed: int) -> bytes:
    rng = random.Random(seed)
    out = [blob[:24]]
    for pos, length in records(blob):
        rec = blob[pos:pos + length]
        r = rng.random()
        if r < 0.1:
            continue
        out.append(rec)
        if r > 0.9:
            out.append(rec)
    return b"".join(out)


def variants() -> list[tuple[str, bytes]]:
    pcap = PCAP.read_bytes()
    multi = MULTI.read_bytes()
    ng = PCAPNG.read_bytes()
    recs = records(pcap)
    mid_rec = recs[len(recs) // 2][0]
    rng = random.Random(6)
    return [
        # cut short
        ("cut-in-file-header", pcap[:13]),
        ("cut-after-file-header", pcap[:24]),
        ("cut-in-first-record-header", pcap[:24 + 9]),
        ("cut-in-first-record", pcap[:24 + 16 + 20]),
        ("cut-in-the-middle", pcap[:len(pcap) // 2]),
        ("cut-one-byte-short", pcap[:-1]),
        ("cut-in-a-record-header-late", pcap[:recs[-3][0] + 7]),
        # bytes flipped
        ("flip-1", flip(pcap, 1, 1)),
        ("flip-10", flip(pcap, 10, 2)),
        ("flip-100", flip(pcap, 100, 3)),
        ("flip-1000-multi-broker", flip(multi, 1000, 4)),
        ("xor-the-first-30000-bytes-after-header", pcap[:24] + bytes(b ^ 0x5A for b in pcap[24:30000]) + pcap[30000:]),
        # garbage inserted or appended
        ("garbage-inserted-at-a-record", pcap[:mid_rec] + rng.randbytes(333) + pcap[mid_rec:]),
        ("garbage-inserted-mid-record", pcap[:mid_rec + 40] + rng.randbytes(17) + pcap[mid_rec + 40:]),
        ("garbage-appended", pcap + rng.randbytes(5000)),
        ("zeros-appended", pcap + b"\x00" * 4096),
        ("second-header-appended", pcap + pcap[:24] + pcap[24:2000]),
        # headers damaged
        ("bad-magic", set_at(pcap, 0, b"\xde\xad\xbe\xef")),
        ("bad-version", set_at(pcap, 4, struct.pack("<HH", 9, 9))),
        ("snaplen-zero-and-unknown-linktype", set_at(pcap, 16, struct.pack("<II", 0, 4242))),
        ("record-caplen-huge", set_at(pcap, mid_rec + 8, struct.pack("<I", 0xFFFFFFF0))),
        ("record-caplen-above-wirelen", set_at(pcap, mid_rec + 8, struct.pack("<II", 60, 20))),
        ("every-timestamp-garbled", b"".join([pcap[:24]] + [
            struct.pack("<II", rng.getrandbits(32), rng.getrandbits(32)) + pcap[p + 8:p + n] for p, n in recs])),
        # pcapng and gzip
        ("pcapng-cut", ng[:len(ng) * 2 // 3]),
        ("pcapng-bytes-flipped", flip(ng, 30, 5, lo=0)),
        ("gzip-truncated", gzip.compress(pcap)[:-4000]),
        ("gzip-body-corrupted", flip(gzip.compress(pcap), 5, 6, lo=100)),
        # Kafka bytes damaged inside well-formed packets
        ("kafka-payload-damaged", payload_damage(pcap, 7, 5)),
        ("kafka-payload-damaged-multi-broker", payload_damage(multi, 8, 3)),
        ("packets-dropped-and-duplicated", drop_and_duplicate(multi, 9)),
    ]


VARIANTS = variants()


def test_thirty_variants():
    assert len(VARIANTS) == 30
    assert len({name for name, _ in VARIANTS}) == 30
    assert all(blob != PCAP.read_bytes() for _, blob in VARIANTS)


@pytest.mark.parametrize("name, blob", VARIANTS, ids=[name for name, _ in VARIANTS])
def test_mangled_capture_gives_results_or_one_line_error(tmp_path, name, blob):
    path = tmp_path / (name + (".pcapng" if "pcapng" in name else ".pcap"))
    path.write_bytes(blob)
    try:
        proc = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", str(path)],
                              capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{name}: kwire did not finish in {TIMEOUT} s")
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    for line in proc.stdout.splitlines():
        json.loads(line)
    err = proc.stderr.splitlines()
    assert all(line.startswith("kwire: ") for line in err), err
    errors = [line for line in err if line.startswith("kwire: error: ")]
    if proc.returncode == 1:
        assert errors, err
    else:
        assert not errors
        assert any(line.startswith("kwire: ") and "packets" in line for line in err)
