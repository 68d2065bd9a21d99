"""Valid inputs for each fuzz target (tests/fuzz/targets.py): what the atheris harnesses start from
(scripts/fuzz_common.py) and what the builds' comparison mutates (tests/fuzz/builds.py), so a fuzzer reaches
the paths past each target's first check. Small, and built here from the bundled captures and test frames."""

from __future__ import annotations

import random
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _pipeline() -> list[bytes]:
    from tests.kafka.frames import request_frame, response_frame

    frames = [(0, request_frame(18, 0, 1, "c")), (1, response_frame(1, b"\x00\x00\x00\x00\x00\x00")),
              (0, request_frame(3, 1, 2, "c", b"\x00\x00\x00\x00")), (1, response_frame(2, b"\x00" * 12))]
    return [b"\x00" + b"".join(bytes([d, len(f)]) + f for d, f in frames),
            b"\x08" + b"".join(bytes([d, len(f)]) + f for d, f in frames[:2])]


def conversation(rng: random.Random, exchanges: int = 4) -> bytes:
    """A pipeline input of valid random exchanges: each a request of a random (api, version) kwire knows, its
    body a valid random encoding (targets.encode), answered by a valid random response, some cut or left out."""
    from tests.fuzz import targets
    from tests.kafka.frames import request_frame, response_frame

    requests = [(s, v) for s, v in targets.SCHEMAS if s.kind == "request"]
    responses = {(s.api_key, v): s for s, v in targets.SCHEMAS if s.kind == "response"}
    out = bytearray([rng.choice((0, 8, 9))])
    for corr in range(1, exchanges + 1):
        schema, version = rng.choice(requests)
        flexible = schema.is_flexible(version)
        frames = [(0, request_frame(schema.api_key, version, corr, "fuzz", targets.encode(schema, version, rng),
                                    flexible=flexible))]
        answer = responses.get((schema.api_key, version))
        if answer is not None and rng.random() < 0.9:
            header_flexible = flexible and schema.api_key != 18  # ApiVersions answers with a v0 header
            frames.append((1, response_frame(corr, targets.encode(answer, version, rng), flexible=header_flexible)))
        for direction, frame in frames:
            for i in range(0, len(frame), 255 * 8):  # the target's messages: 2-byte heads, 8-byte units
                piece = frame[i:i + 255 * 8]
                units = (len(piece) + 7) // 8
                piece = piece.ljust(units * 8, b"\0") if i + len(piece) < len(frame) else piece
                out += bytes([direction | 2, units]) + piece
    return bytes(out)


def _framing() -> list[bytes]:
    from tests.kafka.frames import request_frame

    frames = request_frame(18, 3, 7, "c", flexible=True) + request_frame(3, 9, 8, "c", b"\x00" * 9)
    return [b"\x01\x05" + frames, b"\x00\x0b" + b"junk" + frames]


def _headers() -> list[bytes]:
    from tests.kafka.frames import request_frame

    return [request_frame(3, 12, 5, "client", b"\x00", flexible=True)[4:], request_frame(0, 9, 1, None)[4:]]


def _tls_detect() -> list[bytes]:
    from tests.kafka.frames import request_frame

    record = b"\x17\x03\x03\x00\x10" + bytes(16)
    return [b"\x05" + record * 3, b"\x83" + request_frame(18, 3, 1, "c") * 2, b"\xc9" + bytes(range(63))]


def _tunnels() -> list[bytes]:
    from tests.fuzz.conversation import BROKER, CLIENT, ether_ipv4_tcp

    packet = ether_ipv4_tcp(CLIENT, BROKER, 1, 1, 0x18, b"\x00\x00\x00\x04abcd")
    return [b"\x00" + packet, b"\x01" + packet[14:]]


def _reassembly() -> list[bytes]:
    seg = struct.Struct(">BBBIIB")
    out = b""
    for i, (pair, flags, n) in enumerate([(3, 0x02, 0), (1, 0x12, 0), (3, 0x10, 20), (1, 0x18, 30), (3, 0x11, 0)]):
        out += seg.pack(pair, flags, n, i * 20, i * 30, 1) + bytes(n)
    return [out]


def seed_inputs(name: str) -> list[bytes]:
    """A few valid inputs for the target (none for a target whose every input is as good as another)."""
    from tests.fuzz import targets

    rng = random.Random(1)
    if name == "capture":
        return [p.read_bytes()[:200_000] for p in sorted((ROOT / "captures").glob("*.pcap*"))
                if not p.name.endswith(".log")][:4]
    if name == "decoders":
        return [targets.SCHEMAS.index((schema, version)).to_bytes(2, "big") + b"\x01" + rng.randbytes(8)
                for schema, version in targets.SCHEMAS[::7]]
    if name == "records":
        return [targets._random_batches(rng) for _ in range(4)]
    if name == "keylog":
        return [b"CLIENT_RANDOM " + b"ab" * 32 + b" " + b"cd" * 48 + b"\n# a comment\n",
                b"CLIENT_HANDSHAKE_TRAFFIC_SECRET " + b"01" * 32 + b" " + b"02" * 32 + b"\n"]
    if name == "times":
        return [b"2026-12-02T07:48:23Z", b"5m", b"@1700000000", b"07:48", b"-90s"]
    if name == "caps":
        return [bytes(range(3, 200, 3))]
    if name == "pipeline":
        return _pipeline() + [conversation(rng) for _ in range(6)]
    makers = { "framing": _framing, "headers": _headers, "tls_detect": _tls_detect,
              "tunnels": _tunnels, "reassembly": _reassembly}
    return makers[name]() if name in makers else []
