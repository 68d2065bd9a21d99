"""Differential test against tshark's Kafka dissector (an independent decoder) on real traffic.

Debian's tshark decodes Fetch up to v11 and OffsetFetch up to v7; kcat (older librdkafka) speaks
Fetch v11 and Produce v7, so its capture is where both decoders overlap. For every Fetch response
tshark dissects, keyed by (client port, correlation id): the partition ids, LastStableOffset and
LogStartOffset of each partition, ThrottleTimeMs and SessionId, and the keys of every record (tshark
decompresses the batches; kwire with records="full") must agree.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kwire.model import PAIRED
from kwire.pipeline import analyze_files
from kwire.render.values import plain_body
from tests import truthlog

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
CAPTURE = CAPTURES / "kcat-snappy.pcap"

pytestmark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")

FIELDS = ["tcp.dstport", "kafka.correlation_id", "kafka.api_version", "kafka.partition_id",
          "kafka.last_stable_offset", "kafka.log_start_offset", "kafka.throttle_time",
          "kafka.fetch_session_id", "kafka.message_key"]


def tshark_fetch_responses(path: Path) -> dict[tuple[int, int], dict]:
    ports = truthlog.broker_ports(truthlog.read(str(path) + ".truth.log"))
    cmd = ["tshark", "-r", str(path), "-o", "kafka.tcp.ports:" + ",".join(map(str, sorted(ports))),
           "-Y", "kafka.response_key == 1", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"]
    for f in FIELDS:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout
    result = {}
    for line in out.splitlines():
        cols = line.split("\t")
        if len(cols) != len(FIELDS):
            continue
        ints = [[int(v) for v in c.split(",") if v] for c in cols[:8]]
        keys = sorted(bytes.fromhex(k).decode() for k in cols[8].split(",") if k)
        result[(ints[0][0], ints[1][0])] = {
            "partitions": ints[3], "lso": ints[4], "log_start": ints[5],
            "throttle": ints[6][0] if ints[6] else None, "session": ints[7][0] if ints[7] else None,
            "keys": keys,
        }
    return result


def kwire_fetch_responses(path: Path) -> dict[tuple[int, int], dict]:
    result = {}
    for ex in analyze_files([str(path)]):
        if ex.status != PAIRED or ex.api_key != 1 or ex.response is None:
            continue
        body = plain_body(ex.response, records="full")
        parts = [p for t in body["Responses"] for p in t["Partitions"]]
        keys = sorted(r["Key"] for p in parts if p.get("Records") for b in p["Records"]["batches"]
                      for r in b.get("Records") or [] if isinstance(r.get("Key"), str))
        result[(int(ex.client.rsplit(":", 1)[1]), ex.correlation_id)] = {
            "partitions": [p["PartitionIndex"] for p in parts],
            "lso": [p["LastStableOffset"] for p in parts],
            "log_start": [p["LogStartOffset"] for p in parts],
            "throttle": body.get("ThrottleTimeMs"), "session": body.get("SessionId"),
            "keys": keys,
        }
    return result


def test_fetch_v11_responses_agree_with_tshark():
    theirs = tshark_fetch_responses(CAPTURE)
    ours = kwire_fetch_responses(CAPTURE)
    assert len(theirs) >= 2
    assert any(t["keys"] for t in theirs.values()), "no records to compare"
    for key, t in theirs.items():
        assert key in ours, f"tshark saw Fetch response {key}, kwire did not pair it"
        assert ours[key] == t, key
