"""client_silenced (issue 46, item 4) on captures/problems/java-silenced, checked against the Java client's own
view (its truth lines: each call's outcome and its own request counters): the mock refuses ApiVersions v4 in a
layout of its own, which the Java client reads as a 1,179,648 ms throttle; each Java client is named with that
answer as evidence, and no other client (the workload's librdkafka Producer, which delivered every record) is;
no other committed capture raises it (kafka-python hangs up on the mock's refusal and reconnects; librdkafka reads
it as the mock means it)."""

from __future__ import annotations

import pytest

from kwire.codec.version_refusal import throttle_read_as_asked
from tests import problems as P

NAME = "java-silenced"


def test_each_silenced_java_client_is_named_with_the_answer():
    java = {e["who"]: e for e in P.of(NAME, "counters")}
    assert java and all(e["who"].startswith("kwire-java-") for e in java.values())
    failed = {e["who"] for e in P.of(NAME, "send_failed") + P.of(NAME, "call_failed")}
    assert failed == set(java)  # the client's own word: its calls never got an answer they could use
    found = P.findings(NAME, "client_silenced")
    assert sorted(f["client_id"] for f in found) == sorted(java)
    for f in found:
        counters = java[f["client_id"]]["counters"]
        assert f["api"] == "ApiVersions" and f["api_version"] >= 3 and f["correlation_id"] == 0
        assert f["throttle_ms"] == 1_179_648 and f["read_as"] == "librdkafka-mock"
        assert f["client_software"].startswith("apache-kafka-java/")
        # the evidence: the refused answer and the connection's last exchange, every request the client sent
        assert len(f["evidence"]) == counters["request-total"] == counters["response-total"]
        assert {e["client"] for e in f["evidence"]} == {f["client"]}
        quiet_from = max(e["ts"] for e in f["evidence"])
        assert java[f["client_id"]]["ts"] - quiet_from <= f["quiet_s"] + 1.0  # quiet at least until its counters said so
        assert f["quiet_s"] >= 5.0


def test_clients_that_go_on_are_not_silenced():
    (flushed,) = P.of(NAME, "flushed", "kwire-producer")
    assert flushed["delivered"] == flushed["sent"] > 0
    assert not [f for f in P.findings(NAME, "client_silenced") if f["client_id"] == "kwire-producer"]


@pytest.mark.parametrize("name", ["dup-write-librdkafka", "proxy-faults", "clean-classic", "member-removed"])
def test_no_silenced_client_elsewhere(name):
    assert not P.findings(name, "client_silenced")


def test_the_refusal_read_as_asked():
    """The mock's layout (ErrorCode, count, (ApiKey, MinVersion, MaxVersion)..., ThrottleTimeMs) read as v3+: the
    count 1 is a compact array of none, and ApiKey 18, MinVersion 0 are the throttle."""
    one = {"ErrorCode": 35, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 2}], "ThrottleTimeMs": 0}
    assert throttle_read_as_asked(one) == (18 << 16) == 1_179_648
    assert throttle_read_as_asked({"ErrorCode": 35, "ApiKeys": [], "ThrottleTimeMs": 7}) == 7


def test_kafka_python_hanging_up_on_the_refusal_is_not_silenced():
    from pathlib import Path

    from kwire.analytics import Aggregator
    from kwire.pipeline import analyze_files

    path = Path(__file__).resolve().parents[2] / "captures" / "changes" / "kafka-python-mock.pcap"
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    assert agg.analysis.traffic.silencing.items  # the refusals were seen, read as asked ...
    assert not [f for f in agg.document()["findings"] if f["kind"] == "client_silenced"]  # ... but it went on
