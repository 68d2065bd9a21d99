"""scripts/record_capture.py end to end: a real namespace, tcpdump and librdkafka clients.

Runs where recording is possible (root, ip, ethtool, tcpdump: CI has them); elsewhere it skips
and says why. The option checks run everywhere.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import truthlog

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "record_capture.py"


def _load():
    spec = importlib.util.spec_from_file_location("record_capture", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("record_capture", module)
    spec.loader.exec_module(module)
    return module


rc = _load()
WHY_NOT = rc.why_not_recordable()
needs_recording = pytest.mark.skipif(WHY_NOT is not None, reason=f"cannot record here: {WHY_NOT}")

PCAP_MAGICS = {b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"}  # little-endian micro / nano
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"


def _our_namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"kwire-rec-{os.getpid()}-")]


def test_options_are_checked():
    with pytest.raises(rc.RecordError, match="unknown scenario"):
        rc.RecordOptions(scenario="nope")
    with pytest.raises(rc.RecordError, match="unknown codec"):
        rc.RecordOptions(codec="brotli")
    with pytest.raises(rc.RecordError, match="brokers"):
        rc.RecordOptions(brokers=0)
    options = rc.RecordOptions(scenario="multi-broker", out=Path("x/y.pcap"))
    assert (options.broker_count, options.message_count) == (3, 30)
    assert options.truth_log == Path("x/y.pcap.truth.log")
    bulk = rc.RecordOptions(scenario="bulk-fetch", bytes=10_000, value_size=4096)
    assert bulk.message_count == 3


@needs_recording
def test_records_produce_consume_with_ground_truth(tmp_path):
    out = tmp_path / "pc.pcap"
    result = rc.record(rc.RecordOptions(scenario="produce-consume", out=out, codec="lz4", messages=6, timeout=60))
    assert result.capture == out and result.dropped == 0 and result.packets > 20
    data = out.read_bytes()
    assert data[:4] in PCAP_MAGICS and len(data) > 2000
    assert _our_namespaces() == []

    text = result.truth_log.read_text()
    assert "Sent " in text and "Received " in text
    records = truthlog.parse(text)
    exchanges = truthlog.pair(records)
    answered = [x for x in exchanges if x.response is not None]
    # Requests left unanswered are those still in flight when the clients closed: Kafka answers a
    # connection's requests in order, so no request sent after one of them (librdkafka numbers them
    # upwards per connection) may have been answered.
    for x in exchanges:
        if x.response is None:
            later = [r for r in records if r.direction == "received" and r.client == x.request.client
                     and r.thread == x.request.thread and r.address == x.request.address
                     and r.conn == x.request.conn and r.corr_id > x.request.corr_id]
            assert later == [], f"{x.request} unanswered, yet a later request on its connection was answered"
    assert len(answered) >= len(exchanges) // 2
    for x in answered:
        assert x.response.corr_id == x.request.corr_id and x.response.api == x.request.api
    apis = {x.request.api for x in answered}
    assert {"ApiVersions", "Metadata", "Produce", "Fetch", "JoinGroup", "OffsetCommit"} <= apis
    info = truthlog.header(text)
    assert info["produced"] == info["consumed"] == 6 and info["codec"] == "lz4"
    assert {r.port for r in records} == {int(a.rsplit(":", 1)[1]) for a in truthlog.mock_bootstraps(text)}


@needs_recording
@pytest.mark.skipif(rc.missing_tools(rc.RecordOptions(pcapng=True)), reason="editcap is not installed")
def test_records_pcapng_with_nanosecond_timestamps(tmp_path):
    out = tmp_path / "small.pcapng"
    result = rc.record(rc.RecordOptions(scenario="many-small", out=out, pcapng=True, nano=True, messages=30,
                                        timeout=60))
    assert out.read_bytes()[:4] == PCAPNG_MAGIC
    assert not (tmp_path / "small.pcapng.tmp.pcap").exists()
    records = truthlog.read(result.truth_log)
    produce = [r for r in records if r.api == "Produce" and r.direction == "sent"]
    assert len(produce) == 30  # one message per request


@needs_recording
def test_failed_scenario_raises_and_cleans_up(tmp_path):
    # Far too little time for a consumer group to form: the scenario times out inside the namespace.
    options = rc.RecordOptions(scenario="produce-consume", out=tmp_path / "f.pcap", messages=2, timeout=0.5)
    with pytest.raises(rc.RecordError, match="timed out"):
        rc.record(options)
    assert _our_namespaces() == []
