"""Test-only builders of Kafka frames (synthetic bytes for unit tests of framing and pairing)."""

from __future__ import annotations

import struct


def request_frame(api_key: int, version: int, corr: int, client_id: str | None = "cli", body: bytes = b"",
                  flexible: bool = False) -> bytes:
    head = struct.pack(">hhi", api_key, version, corr)
    if client_id is None:
        head += struct.pack(">h", -1)
    else:
        raw = client_id.encode()
        head += struct.pack(">h", len(raw)) + raw
    if flexible:
        head += b"\x00"
    payload = head + body
    return struct.pack(">i", len(payload)) + payload


def response_frame(corr: int, body: bytes = b"", flexible: bool = False) -> bytes:
    payload = struct.pack(">i", corr) + (b"\x00" if flexible else b"") + body
    return struct.pack(">i", len(payload)) + payload
