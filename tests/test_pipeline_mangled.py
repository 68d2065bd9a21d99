"""Real captures made harder: segments reordered and duplicated, and captures that start mid-stream.

Reordered/duplicated: the same exchanges come out paired as from the original file.
Mid-stream: dropping the first part of a capture, on every connection every answered exchange after
the first request captured whole is still paired, with the same api, version and correlation id
(bulk-fetch-lz4.pcap cuts inside frames of hundreds of segments).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kwire.capture.files import read_captures
from kwire.model import PAIRED
from kwire.pipeline import RunSummary, analyze_files
from tests.capture.builders import pcap

CAPTURES = Path(__file__).resolve().parent.parent / "captures"
SOURCES = sorted(p for p in CAPTURES.glob("*.pcap") if p.stat().st_size < 4_000_000)


def packets(path):
    return [(p.ts_ns, p.data, p.wire_len, p.linktype) for p in read_captures([str(path)])]


def write(tmp_path, name, pkts):
    out = tmp_path / name
    out.write_bytes(pcap([(ts, data, wire) for ts, data, wire, _ in pkts], nano=True, linktype=pkts[0][3]))
    return str(out)


def keys(exchanges):
    return sorted((ex.client, ex.broker, ex.api_key, ex.api_version, ex.correlation_id)
                  for ex in exchanges if ex.status == PAIRED)


@pytest.mark.parametrize("capture", SOURCES, ids=[p.name for p in SOURCES])
def test_reordered_and_duplicated_segments(tmp_path, capture):
    original = list(analyze_files([str(capture)]))
    pkts = packets(capture)
    rng = random.Random(capture.name)
    mangled = []
    i = 0
    while i < len(pkts):
        window = pkts[i:i + 4]
        rng.shuffle(window)
        for p in window:
            mangled.append(p)
            if rng.random() < 0.15:
                mangled.append(p)  # a retransmission
        i += 4
    summary = RunSummary()
    result = list(analyze_files([write(tmp_path, "mangled.pcap", mangled)], summary=summary))
    assert keys(result) == keys(original)
    assert summary.tcp.get("retransmitted_bytes", 1) > 0 or summary.tcp


@pytest.mark.parametrize("capture", SOURCES, ids=[p.name for p in SOURCES])
@pytest.mark.parametrize("fraction", [0.2, 0.45, 0.7])
def test_capture_starting_mid_stream(tmp_path, capture, fraction):
    original = list(analyze_files([str(capture)]))
    pkts = packets(capture)
    cut = int(len(pkts) * fraction)
    cut_ts = pkts[cut][0]
    result = list(analyze_files([write(tmp_path, "late.pcap", pkts[cut:])]))
    # On each connection, the first request whose last segment follows the cut may have begun before
    # it; every request after that one was captured whole, and must be paired.
    by_connection: dict[str, list] = {}
    for ex in original:
        if ex.status == PAIRED:
            by_connection.setdefault(ex.client, []).append(ex)
    expected = []
    for exchanges in by_connection.values():
        later = sorted((e for e in exchanges if e.request_ts_ns > cut_ts), key=lambda e: e.request_ts_ns)
        expected += [(e.client, e.broker, e.api_key, e.api_version, e.correlation_id) for e in later[1:]]
    got = set(keys(result))
    missing = [k for k in expected if k not in got]
    assert not missing, f"{len(missing)} of {len(expected)} exchanges after the cut not paired: {missing[:5]}"
