"""With records decoded, every key a producer sent shows up again in what consumers fetched, for every
codec: Produce requests and Fetch / ShareFetch responses of the same capture carry the same keys, and
the batches say the codec the capture was recorded with."""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.model import PAIRED
from kwire.pipeline import analyze_files
from kwire.render.values import plain_body

CAPTURES = Path(__file__).resolve().parent.parent / "captures"
CASES = sorted(p for p in CAPTURES.glob("*.pcap*") if not p.name.endswith(".log"))
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def batches(body: dict):
    """Every record batch under any "Records" field of a decoded, plain body."""
    stack = [body]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            rec = node.get("Records")
            if isinstance(rec, dict) and "batches" in rec:
                yield from rec["batches"]
            stack.extend(v for k, v in node.items() if k != "Records" and isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend(node)


@pytest.mark.parametrize("capture", CASES, ids=[p.name for p in CASES])
def test_produced_keys_are_fetched(capture: Path):
    produced, fetched, codecs = set(), set(), set()
    for ex in analyze_files([str(capture)]):
        if ex.status != PAIRED:
            continue
        if ex.api == "Produce":
            for b in batches(plain_body(ex.request, records="full")):
                assert not b.get("error"), b.get("error")
                codecs.add(b["Attributes"]["Compression"])
                produced |= {r["Key"] for r in b["Records"]}
        elif ex.api in ("Fetch", "ShareFetch"):
            for b in batches(plain_body(ex.response, records="full")):
                if b.get("partial"):
                    continue
                assert not b.get("error"), b.get("error")
                fetched |= {r["Key"] for r in b["Records"]}
    assert produced, "no produced records"
    assert produced <= fetched, f"produced but never fetched: {sorted(produced - fetched)[:5]}"
    named = [c for c in CODECS if f"-{c}" in capture.name]
    if named:
        assert codecs == {named[0]}, codecs
