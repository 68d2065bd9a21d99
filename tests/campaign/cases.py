"""Test-only: the hostile-input campaign's cases, seeded, built with the project's own writers.

A Case is a capture (its bytes, or a writer for big ones) and the kwire command line to run on it
(tests/campaign/runner.py runs it in a process of its own, under limits). Three families:

- "mutated": a committed capture (captures/*.pcap, *.pcapng, captures/problems/*.pcap.gz: the
  three container formats) damaged by one seeded mutator: byte edits (tests/fuzz/targets.mutate),
  bit flips, a cut, garbage inserted, records dropped, duplicated or swapped, records of another
  capture spliced in, Kafka bytes damaged inside well-formed packets, absurd timestamps; a gzip
  capture has either its compressed stream or the capture inside it damaged.
- "crafted": Kafka traffic (tests/render/hostile, tests/fuzz): decompression bombs (many in one
  exchange, one in many exchanges, legacy wrappers, in Fetch answers among thousands of batches
  cut at the end), partitions of big values, a record with very
  many headers, very many empty batches, 2^31-element arrays, random bodies of every schema with
  edits, thousands of unknown tagged fields, escape sequences, absurd pcapng times, SASL secrets in
  tagged fields, a reused correlation id, corrupt compressed batches of every codec.
- "flood": SYN-only connections, an acks=0 producer flood (tests/campaign/traffic).
- "hostile": the second campaign's families (issue 25, tests/campaign/hostile.py): inputs that once
  cost quadratic time, memory per distinct name, a hang or a traceback, or a silent wrong result.

`cases(seed, count, scale)`: `count` cases drawn from the seed (the same seed, the same cases, byte
for byte); `scale` multiplies the sizes of crafted cases and floods (1: what the test suite runs).
"""

from __future__ import annotations

import gzip
import random
import struct
from pathlib import Path
from typing import Callable, NamedTuple

from tests.campaign import traffic
from tests.campaign.hostile import FAMILIES, hostile
from tests.native.test_codec_compression import gzip_zeros, zstd_zeros
from tests.codec.test_records_encoder import (GZIP, LZ4, SNAPPY, ZSTD, legacy_message, legacy_wrapper, v2_batch)
from tests.fuzz import targets
from tests.fuzz.conversation import conversation_pcap
from tests.kafka.frames import request_frame, response_frame
from tests.render.hostile import (absurd_time_pcapng, encode_body, escape_capture, exchange, produce_exchange,
                                  sasl_tagged, tagged_flood)

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = sorted([*ROOT.glob("captures/*.pcap"), *ROOT.glob("captures/*.pcapng"),
                   *ROOT.glob("captures/problems/*.pcap.gz")])
COMMANDS = (
    ("inspect",), ("inspect", "--json"), ("inspect", "-V"), ("inspect", "--records"),
    ("inspect", "--json", "--records"), ("stats",), ("stats", "--json"), ("stats", "--html", "{out}/report.html"),
)


class Case(NamedTuple):
    name: str
    family: str
    suffix: str  # the capture file's name ends so: ".pcap", ".pcapng", ".pcap.gz"
    argv: tuple  # kwire's arguments before the capture ("{out}" is a folder for files it writes)
    write: Callable[[Path], None]  # writes the capture to the path given


def _bytes(data: bytes) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data)


# ---- mutated committed captures ----------------------------------------------------------------


def _pcap_records(blob: bytes) -> list[tuple[int, int]]:
    """(offset, length) of each record of a classic pcap (either byte order)."""
    order = "<" if blob[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    out, pos = [], 24
    while pos + 16 <= len(blob):
        caplen = struct.unpack_from(order + "I", blob, pos + 8)[0]
        if pos + 16 + caplen > len(blob):
            break
        out.append((pos, 16 + caplen))
        pos += 16 + caplen
    return out


def _pcapng_blocks(blob: bytes) -> list[tuple[int, int]]:
    out, pos = [], 0
    while pos + 12 <= len(blob):
        size = struct.unpack_from("<I", blob, pos + 4)[0]
        if size < 12 or pos + size > len(blob):
            break
        out.append((pos, size))
        pos += size
    return out


def _units(blob: bytes, suffix: str) -> tuple[int, list[tuple[int, int]]]:
    """The capture's header length and its records (pcap) or blocks after the first two (pcapng)."""
    if suffix == ".pcapng":
        blocks = _pcapng_blocks(blob)
        head = blocks[1][0] + blocks[1][1] if len(blocks) > 1 else 0
        return head, blocks[2:]
    return 24, _pcap_records(blob)


def _flip(blob: bytes, rng: random.Random, lo: int) -> bytes:
    buf = bytearray(blob)
    for _ in range(rng.choice((1, 5, 50, 500))):
        i = rng.randrange(lo, len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def _reorder(blob: bytes, rng: random.Random, suffix: str) -> bytes:
    head, units = _units(blob, suffix)
    pieces = [blob[p:p + n] for p, n in units]
    out = []
    for piece in pieces:
        r = rng.random()
        if r < 0.1:
            continue
        out.append(piece)
        if r > 0.9:
            out.append(piece)
    for _ in range(len(out) // 10):
        i, j = rng.randrange(len(out)), rng.randrange(len(out))
        out[i], out[j] = out[j], out[i]
    return blob[:head] + b"".join(out)


def _splice(blob: bytes, other: bytes, rng: random.Random, suffix: str) -> bytes:
    """Records of another classic pcap (same link type: Ethernet) dealt into this one."""
    head, units = _units(blob, suffix)
    theirs = [other[p:p + n] for p, n in _pcap_records(other)]
    out = [blob[p:p + n] for p, n in units]
    for piece in theirs:
        out.insert(rng.randrange(len(out) + 1), piece)
    return blob[:head] + b"".join(out)


def _payload(blob: bytes, rng: random.Random, suffix: str) -> bytes:
    """4 bytes inside the TCP payload of some packets: frame lengths, headers, bodies."""
    _, units = _units(blob, suffix)
    buf = bytearray(blob)
    every = rng.choice((2, 5, 20))
    skip = 16 + 66 if suffix != ".pcapng" else 28 + 66
    for i, (pos, length) in enumerate(units):
        if i % every == 0 and length > skip + 8:
            at = pos + skip + rng.randrange(length - skip - 4)
            buf[at:at + 4] = rng.choice((b"\x7f\xff\xff\xff", b"\x00\x00\x00\x00", b"\xff\xff\xff\xff",
                                         rng.randbytes(4)))
    return bytes(buf)


def _times(blob: bytes, rng: random.Random, suffix: str) -> bytes:
    """Timestamps garbled: backwards, far future, zero."""
    _, units = _units(blob, suffix)
    buf = bytearray(blob)
    at = 8 if suffix == ".pcapng" else 0
    for pos, _ in units:
        if rng.random() < 0.3:
            buf[pos + at:pos + at + 8] = rng.choice((b"\xff" * 8, b"\x00" * 8, rng.randbytes(8)))
    return bytes(buf)


MUTATORS = ("edits", "flips", "cut", "garbage", "reorder", "splice", "payload", "times")


def mutate_capture(blob: bytes, suffix: str, rng: random.Random, how: str, other: bytes) -> bytes:
    head = 24 if suffix != ".pcapng" else 0
    if how == "edits":
        return targets.mutate(blob, rng, edits=rng.choice((1, 3, 10, 40)))
    if how == "flips":
        return _flip(blob, rng, head)
    if how == "cut":
        return blob[:rng.randrange(len(blob))]
    if how == "garbage":
        at = rng.randrange(head, len(blob))
        return blob[:at] + rng.randbytes(rng.choice((1, 17, 333, 5000))) + blob[at:]
    if how == "reorder":
        return _reorder(blob, rng, suffix)
    if how == "splice":
        return _splice(blob, other, rng, suffix)
    if how == "payload":
        return _payload(blob, rng, suffix)
    return _times(blob, rng, suffix)


def mutated(rng: random.Random) -> Case:
    form = rng.choice((".pcap", ".pcapng", ".pcap.gz"))  # the three containers alike, not by file count
    source = rng.choice([p for p in CAPTURES if p.name.endswith(form)])
    name = source.name
    blob = source.read_bytes()
    how = rng.choice(MUTATORS)
    other = rng.choice([p for p in CAPTURES if p.suffix == ".pcap"]).read_bytes()
    if name.endswith(".gz"):
        inner = gzip.decompress(blob)
        if rng.random() < 0.3:  # the compressed stream itself
            data = rng.choice((lambda: blob[:rng.randrange(len(blob))],
                               lambda: _flip(blob, rng, 10),
                               lambda: blob + rng.randbytes(100),
                               lambda: blob + gzip.compress(rng.randbytes(1000))))()
            how = "gzip-stream"
        else:
            data = gzip.compress(mutate_capture(inner, ".pcap", rng, how, other), 1)
        suffix = ".pcap.gz"
    else:
        suffix = source.suffix
        data = mutate_capture(blob, suffix, rng, how, other)
    return Case(f"mutated-{how}-{name}", "mutated", suffix, rng.choice(COMMANDS), _bytes(data))


# ---- crafted Kafka traffic ---------------------------------------------------------------------


def _first(client_id: str = "producer"):
    """A Metadata exchange: a connection's first request is small (detection reads 1 MiB at most)."""
    return exchange(3, 9, 99_999, client_id, {"Topics": [{"Name": "t"}]},
                    {"Brokers": [{"NodeId": 1, "Host": "b", "Port": 9092}], "Topics": [{"Name": "t"}]})


def _produce_pcap(batches_per_exchange: list[list[bytes]]) -> bytes:
    messages = _first()
    for corr, batches in enumerate(batches_per_exchange, 1):
        messages += produce_exchange(corr, batches)
    return conversation_pcap(messages)


def bombs_in_one_exchange(rng, scale):
    bomb = v2_batch(payload=zstd_zeros(64 << 20, False), codec=ZSTD, record_count=1)
    return _produce_pcap([[bomb * (50 * scale)]])


def bombs_in_many_exchanges(rng, scale):
    codec, payload = rng.choice(((ZSTD, zstd_zeros(64 << 20, False)), (GZIP, gzip_zeros(64))))
    bomb = v2_batch(payload=payload, codec=codec, record_count=1)
    return _produce_pcap([[bomb]] * (30 * scale))


def legacy_bombs(rng, scale):
    bomb = legacy_wrapper(1, 0, b"", GZIP, compressed=gzip_zeros(64))
    return _produce_pcap([[bomb * 3, legacy_message(1, 1, b"k", b"v")]] * (5 * scale))


def big_values(rng, scale):
    """The issue's case: partitions of one big zero value each (zstd, a few KB on the wire)."""
    value = (rng.choice((20, 40, 60)) if scale > 1 else 20) << 20
    batch = v2_batch([(b"k", bytes(value))], codec=ZSTD)
    return _produce_pcap([[batch] * 8])


def fetched_records(rng, scale):
    """Fetch answers whose partitions carry many batches, bombs among them, cut at the end as brokers
    cut them (a Fetch is decoded where the capture's order lives: lag, topic names)."""
    good = v2_batch([(b"k", rng.randbytes(50))] * 3, codec=rng.choice((0, GZIP, LZ4, ZSTD)))
    bomb = v2_batch(payload=zstd_zeros(64 << 20, False), codec=ZSTD, record_count=1)
    messages = _first("consumer")
    for corr in range(1, 4 * scale + 1):
        records = good * rng.randrange(1, 2000) + bomb * rng.randrange(3) + good[:rng.randrange(len(good))]
        messages += exchange(1, 11, corr, "consumer", {
            "ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "IsolationLevel": 1, "SessionEpoch": -1,
            "Topics": [{"Topic": "t", "Partitions": [{"Partition": p, "FetchOffset": 0} for p in range(3)]}]},
            {"Responses": [{"Topic": "t", "Partitions": [
                {"PartitionIndex": p, "HighWatermark": 10**6, "LastStableOffset": 10**6, "Records": records}
                for p in range(3)]}]})
    return conversation_pcap(messages)


def many_headers(rng, scale):
    """One record with very many empty headers (the issue: 5M)."""
    n = 500_000 * scale
    return _produce_pcap([[v2_batch([(b"k", b"v", [(b"", b"")] * n)])]])


def empty_batches(rng, scale):
    return _produce_pcap([[v2_batch([]) * (50_000 * scale)]])


def huge_arrays(rng, scale):
    """Arrays and strings that claim 2^31 elements or bytes, in requests and responses."""
    messages = _first()
    claims = (b"\x7f\xff\xff\xff", b"\xff\xff\xff\xfe", b"\x80\x00\x00\x00")
    for corr in range(1, 20):
        claim = rng.choice(claims)
        body = struct.pack(">hi", 1, 30000) + claim + rng.randbytes(rng.randrange(64))  # Produce v2
        messages += [(0, request_frame(0, 2, corr, "arrays", body)),
                     (1, response_frame(corr, claim + rng.randbytes(rng.randrange(64))))]
    return conversation_pcap(messages)


def random_bodies(rng, scale):
    """Random valid bodies of random (api, version) pairs, most with a few edits."""
    messages = _first("random")
    for corr in range(1, 40 * scale):
        schema, version = rng.choice(targets.SCHEMAS)
        if schema.kind != "request":
            continue
        body = targets.encode(schema, version, rng)
        response = targets.encode(_response_of(schema, targets.SCHEMAS), version, rng) \
            if _response_of(schema, targets.SCHEMAS) is not None else b""
        if rng.random() < 0.7:
            body = targets.mutate(body, rng, edits=rng.randint(1, 5))
        if rng.random() < 0.5:
            response = targets.mutate(response, rng, edits=rng.randint(1, 5))
        flexible = schema.is_flexible(version)
        messages += [(0, request_frame(schema.api_key, version, corr, "random", body, flexible=flexible)),
                     (1, response_frame(corr, response, flexible=flexible and schema.api_key != 18))]
    return conversation_pcap(messages)


def _response_of(schema, schemas):
    for other, _ in schemas:
        if other.api_key == schema.api_key and other.kind == "response":
            return other
    return None


def corrupt_batches(rng, scale):
    """Compressed batches of every codec with random or cut payloads, and random batch headers."""
    batches = []
    for codec in (GZIP, SNAPPY, LZ4, ZSTD):
        good = v2_batch([(b"k", rng.randbytes(100))] * 5, codec=codec)
        batches.append(targets.mutate(good, rng, edits=3))
        batches.append(v2_batch(payload=rng.randbytes(rng.randrange(200)), codec=codec, record_count=3))
    batches.append(targets._random_batches(rng))
    rng.shuffle(batches)
    return _produce_pcap([batches[i:i + 3] for i in range(0, len(batches), 3)] * scale)


def reused_correlation_id(rng, scale):
    n = 2000 * scale
    body = encode_body(3, "request", 9, {"Topics": [{"Name": "t"}]})
    answer = encode_body(3, "response", 9, {"Topics": [{"Name": "t"}]})
    messages = [(0, request_frame(3, 9, 7, "pipelined", body, flexible=True)) for _ in range(n)]
    messages += [(1, response_frame(7, answer, flexible=True)) for _ in range(n)]
    return conversation_pcap(messages)


def escapes(rng, scale):
    return escape_capture(rng)[0]


def absurd_times(rng, scale):
    ticks = rng.choice((2**63, 2**64 - 1, 253402300800 * 10**6, 0))
    return absurd_time_pcapng(ticks, rng.choice((None, 0, 6, 9, 0x80 | 60)))


def tagged(rng, scale):
    return tagged_flood(20_000 * scale)


def sasl(rng, scale):
    return sasl_tagged(b"hunter2-" + rng.randbytes(8).hex().encode())


CRAFTED = {  # name: (maker, suffix, whether it is about record sets)
    "bombs-in-one-exchange": (bombs_in_one_exchange, ".pcap", True),
    "bombs-in-many-exchanges": (bombs_in_many_exchanges, ".pcap", True),
    "legacy-bombs": (legacy_bombs, ".pcap", True),
    "big-values": (big_values, ".pcap", True),
    "fetched-records": (fetched_records, ".pcap", True),
    "many-headers": (many_headers, ".pcap", True),
    "empty-batches": (empty_batches, ".pcap", True),
    "huge-arrays": (huge_arrays, ".pcap", False),
    "random-bodies": (random_bodies, ".pcap", False),
    "corrupt-batches": (corrupt_batches, ".pcap", True),
    "reused-correlation-id": (reused_correlation_id, ".pcap", False),
    "escapes": (escapes, ".pcap", False),
    "absurd-times": (absurd_times, ".pcapng", False),
    "tagged-fields": (tagged, ".pcap", False),
    "sasl-secrets": (sasl, ".pcap", False),
}
RECORDS_COMMANDS = (("inspect", "--json", "--records"), ("inspect", "--records"))


def crafted(rng: random.Random, name: str, scale: int) -> Case:
    make, suffix, records = CRAFTED[name]
    data = make(rng, scale)
    argv = rng.choice(RECORDS_COMMANDS if records and rng.random() < 0.8 else COMMANDS)
    return Case(f"crafted-{name}", "crafted", suffix, argv, _bytes(data))


# ---- floods --------------------------------------------------------------------------------------


def flood(rng: random.Random, name: str, scale: int) -> Case:
    argv = rng.choice((("stats",), ("inspect", "--json"), ("inspect",)))
    if name == "syn-flood":
        n = 10_000 * scale
        return Case(f"flood-syn-{n}", "flood", ".pcap", argv, lambda path: traffic.syn_flood(path, n))
    total = (8 << 20) * scale
    return Case(f"flood-acks0-{total >> 20}MiB", "flood", ".pcap", argv,
                lambda path: traffic.acks0_flood(path, total))


FLOODS = ("syn-flood", "acks0-flood")
HOSTILE = tuple(FAMILIES)  # the second campaign's families (issue 25: tests/campaign/hostile.py)


def cases(seed: int, count: int, scale: int = 1) -> list[Case]:
    """`count` cases: every crafted case and flood once (when count allows), the rest mutations."""
    rng = random.Random(seed)
    out = [crafted(random.Random(rng.getrandbits(64)), name, scale) for name in CRAFTED]
    out += [flood(random.Random(rng.getrandbits(64)), name, scale) for name in FLOODS]
    out += [hostile(random.Random(rng.getrandbits(64)), name, scale) for name in HOSTILE]
    out = out[:count]
    while len(out) < count:
        out.append(mutated(random.Random(rng.getrandbits(64))))
    return out
