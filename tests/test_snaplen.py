"""Snap-length captures: real captures cut with `editcap -s N` (Wireshark's own tool) against their full
versions. Every exchange whose request header was captured is reported with the full capture's api,
version, correlation id, client id, sizes and latency; no answered request is reported unanswered;
cut bodies are marked (outcome kind cut_by_snaplen, kwire.outcomes) and counted; a capture cut before any Kafka byte says so."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from kwire.model import NO_RESPONSE, PAIRED
from kwire.pipeline import RunSummary, analyze_files
from kwire.outcomes import ANSWER_NOT_CAPTURED, MALFORMED, is_cut

pytestmark = pytest.mark.skipif(shutil.which("editcap") is None, reason="needs editcap (Debian package tshark)")

CAPTURES = ["produce-consume-zstd", "bulk-fetch", "multi-broker-3", "share-consumer", "consumer-protocol-lz4",
            "kcat-snappy"]
SNAPS = [96, 128, 256, 512]
FIELDS = ("status", "api", "api_version", "request_size", "response_size", "latency_ms")


def run(path):
    summary = RunSummary()
    out = {(ex.connection_id, ex.correlation_id, ex.api): ex for ex in analyze_files([str(path)], summary=summary)}
    return out, summary


def cut(tmp_path, name: str, snap: int):
    path = tmp_path / f"{name}-{snap}.pcap"
    subprocess.run(["editcap", "-s", str(snap), f"captures/{name}.pcap", str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def full():
    return {name: run(f"captures/{name}.pcap")[0] for name in CAPTURES}


@pytest.mark.parametrize("snap", SNAPS)
@pytest.mark.parametrize("name", CAPTURES)
def test_cut_capture_gives_the_full_exchanges(tmp_path, full, name, snap):
    got, summary = run(cut(tmp_path, name, snap))
    want = full[name]
    same = [key for key, ex in want.items()
            if key in got and all(getattr(got[key], f) == getattr(ex, f) for f in FIELDS)
            and got[key].client_id in (None, ex.client_id)]  # None: the cut fell inside the client id
    # kcat pipelines requests: one behind another in a segment loses its header to a short cut, and
    # its answer is reported without its request (never a wrong pairing)
    assert len(same) >= (0.95 if name != "kcat-snappy" or snap > 128 else 0.90) * len(want), (len(same), len(want))
    answered = {key for key, ex in want.items() if ex.status == PAIRED}
    assert not [key for key in answered if key in got and got[key].status == NO_RESPONSE]
    for ex in got.values():
        assert MALFORMED not in (getattr(ex.request_outcome, 'kind', None), getattr(ex.response_outcome, 'kind', None)), ex
    cut_bodies = sum(is_cut(ex.request_outcome) + is_cut(ex.response_outcome) for ex in got.values())
    assert cut_bodies and summary.kafka["cut_frames"] >= cut_bodies
    assert "cut by snap length" in summary.line()


@pytest.mark.parametrize("snap", [96, 128])
@pytest.mark.parametrize("name", ["multi-broker-3", "share-consumer", "bulk-fetch"])
def test_cut_capture_begun_mid_stream(tmp_path, name, snap):
    """The capture begins at its 30th packet (no handshake for the connections open then) and is cut:
    the frames are found in step with the sequence numbers, and the exchanges are those of the same
    packets uncut."""
    mid = tmp_path / "mid.pcap"
    subprocess.run(["editcap", "-r", f"captures/{name}.pcap", str(mid), "30-1000000"], check=True)
    want, _ = run(mid)
    cut_path = tmp_path / "mid-cut.pcap"
    subprocess.run(["editcap", "-s", str(snap), str(mid), str(cut_path)], check=True)
    got, _ = run(cut_path)
    same = [key for key, ex in want.items()
            if key in got and all(getattr(got[key], f) == getattr(ex, f) for f in FIELDS)]
    assert len(same) >= 0.95 * len(want), (len(same), len(want))
    assert not [key for key, ex in want.items() if ex.status == PAIRED and key in got
                and got[key].status == NO_RESPONSE]


def test_an_error_code_that_was_captured_counts(tmp_path, full):
    """Answers begin with ThrottleTimeMs and ErrorCode: cut at 96 bytes, they are still read."""
    got, _ = run(cut(tmp_path, "multi-broker-3", 96))
    want = full["multi-broker-3"]
    seen = 0
    for key, ex in got.items():
        if is_cut(ex.response_outcome) and ex.response and "ErrorCode" in ex.response:
            assert ex.response["ErrorCode"] == want[key].response["ErrorCode"]
            seen += 1
    assert seen


def test_a_capture_cut_before_any_kafka_byte_says_so(tmp_path):
    got, summary = run(cut(tmp_path, "produce-consume-zstd", 64))
    assert got == {}
    assert "no Kafka byte was captured" in summary.line()


def test_an_answer_lost_in_a_gap_is_paired_without_it():
    """Requests 1, 2, 3; the broker's bytes holding 1's end and 2's start were lost; 3 is answered. 2 was
    answered too (in order): a paired exchange, its answer marked as not captured, not a failure."""
    from kwire.native.exchange_facts import exchange_row
    from kwire.native.exchange_build import build_exchange
    from kwire.tcp.recorder import StreamGap
    from tests.kafka.frames import Tracker, request_frame, response_frame
    from tests.native.test_kafka_pairing import conn, feed

    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(1, 4, 1) + request_frame(1, 4, 2) + request_frame(1, 4, 3))])
    first = response_frame(1, b"x" * 500)
    out += feed(t, c, [(1, 2, first[:100])])
    out += t.on_event(StreamGap(c, 1, 3, len(first) - 100 + 10))
    out += feed(t, c, [(1, 4, response_frame(2, b"y" * 50)[10:] + response_frame(3, b"z"))])
    exchanges = [build_exchange(raw) for raw in out]
    assert [(ex.correlation_id, ex.status) for ex in exchanges] == [(1, PAIRED), (2, PAIRED), (3, PAIRED)]
    lost = exchanges[1]
    assert lost.response_outcome == ANSWER_NOT_CAPTURED and is_cut(lost.response_outcome)
    assert lost.latency_ms is None and lost.response_outcome.kind != MALFORMED
    assert is_cut(exchanges[0].response_outcome) and exchanges[0].response_size == len(first)
    assert exchange_row(lost)["failed"] == (getattr(lost.request_outcome, "kind", None) == MALFORMED)  # (the made-up request body)


def test_figures_take_every_kind_of_cut_exchange(tmp_path):
    """Cut captures (answers lost in gaps: kcat pipelines) through stats' whole analysis: no traceback,
    every exchange counted."""
    import json
    import sys

    for name in ("kcat-snappy", "multi-broker-3"):
        path = cut(tmp_path, name, 96)
        got, summary = run(path)
        stats = subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", str(path)], capture_output=True,
                               text=True)
        assert stats.returncode == 0 and "Traceback" not in stats.stderr
        assert json.loads(stats.stdout)["totals"]["exchanges"] == len(got) == summary.exchanges
