"""closed_instead_of_answering (kwire.analytics.rules): a broker that closes the connection instead of answering a
request it advertised, and who closed first (kwire.native.tcp_flows: an exchange's `closed_by`).

Real traffic: Tansu 0.6.0 closes the connection on every DeleteRecords (captures/admin and captures/changes, the
clients' results saying the disconnect: kafka-python "socket disconnected", aiokafka "Connection ... closed",
confluent-kafka _TRANSPORT; captures/problems/broker-rules-java, where the Java AdminClient's deleteRecords fails).
The silent cases: librdkafka's mock hanging up on kafka-python's admin requests it never advertised (the client's
version_not_advertised), Tansu closing a connection as it shuts down at the end of captures/problems/txn-clean, and
clients that close with requests in flight. The shutdown windows are rows made here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kwire.analytics import tags as T
from kwire.analytics.aggregate import Aggregator
from kwire.analytics.analysis import Analysis
from kwire.analytics.rules import SHUTDOWN_NS
from kwire.pipeline import analyze_files
from tests import problems as P

ROOT = Path(__file__).resolve().parents[2]
RULE = "closed_instead_of_answering"
DISCONNECTED = ("socket disconnected", "closed", "_TRANSPORT")  # kafka-python, aiokafka, confluent-kafka


def _run(path: Path) -> tuple[list, dict]:
    agg, unanswered = Aggregator(), []
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
        if ex.status == "no_response":
            unanswered.append(ex)
    return unanswered, agg.document()


def _rule(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f.get("rule") == RULE]


_TANSU = ["admin/aiokafka-tansu.pcap", "admin/confluent-tansu.pcap", "admin/kafka-python-tansu.pcap",
          "admin/kafka-python-pinned-tansu.pcap", "admin/kafkajs-tansu.pcap", "changes/aiokafka-tansu.pcap",
          "changes/confluent-tansu.pcap", "changes/kafka-python-tansu.pcap", "changes/kafkajs-tansu.pcap"]


def _failed_delete_records(path: Path) -> list[str]:
    """What the client's own results say of its delete_records: each failure's words."""
    with open(f"{path}.truth.jsonl") as f:
        truth = [json.loads(line) for line in f if line.strip()]
    return [json.dumps(t.get("error") or t.get("result")) for t in truth if t.get("operation") == "delete_records"]


@pytest.mark.parametrize("name", _TANSU)
def test_tansu_closes_on_delete_records_as_the_clients_say(name):
    path = ROOT / "captures" / name
    failed = _failed_delete_records(path)
    if "kafkajs" in name:  # KafkaJS fails on the disconnect in its own code ("Cannot read properties of undefined")
        assert failed and all("Error" in text for text in failed)
    else:
        assert failed and all(any(word in text for word in DISCONNECTED) for text in failed)
    unanswered, doc = _run(path)
    closed = [ex for ex in unanswered if ex.api == "DeleteRecords"]
    assert closed and all(ex.unanswered == "connection_closed" and ex.extra.get("closed_by") == "broker"
                          for ex in closed)
    (found,) = _rule(doc)
    assert found["side"] == "broker" and found["severity"] == "warning"
    assert (found["api"], found["count"]) == ("DeleteRecords", len(closed))
    assert {e["api"] for e in found["evidence"]} == {"DeleteRecords", "ApiVersions"}
    assert {e["correlation_id"] for e in found["evidence"] if e["api"] == "DeleteRecords"} == \
        {ex.correlation_id for ex in closed}
    assert found["brokers"] == sorted({ex.broker for ex in closed})


def test_the_java_admins_delete_records_hung_up_on_each_time():
    """kafka-clients 3.9.1's AdminClient retries DeleteRecords on each new connection until its deadline: its own
    event says deleteRecords failed; every attempt is one the broker closed the connection on."""
    (event,) = [e for e in P.of("broker-rules-java", "delete_records")]
    assert event["ok"] is False and "deleteRecords" in event["error"]
    unanswered, doc = _run(P.capture("broker-rules-java"))
    closed = [ex for ex in unanswered if ex.api == "DeleteRecords"]
    assert len(closed) > 1 and {ex.extra.get("closed_by") for ex in closed} == {"broker"}
    assert len({ex.connection_id for ex in closed}) == len(closed)  # one connection each
    (found,) = _rule(doc)
    assert found["count"] == len(closed) and found["api"] == "DeleteRecords"
    assert found["client_software"] == ["apache-kafka-java/3.9.1"]


def test_confluent_kafkas_delete_records_on_tansu_fails_with_a_transport_error():
    (event,) = P.of("broker-rules", "delete_records")
    assert event["ok"] is False and "_TRANSPORT" in event["error"]
    (found,) = _rule(_run(P.capture("broker-rules"))[1])
    assert (found["api"], found["count"]) == ("DeleteRecords", 1)
    assert found["client_software"] == ["confluent-kafka-python/2.16.1-rdkafka-2.16.0"]


def test_only_the_request_the_broker_closed_on_counts():
    """Pinned kafka-python pipelines a Metadata behind a ListTransactions Tansu does not advertise: the broker closes
    on the first (version_not_advertised), the Metadata behind it is no finding of its own."""
    unanswered, doc = _run(ROOT / "captures" / "admin" / "kafka-python-pinned-tansu.pcap")
    behind = [ex for ex in unanswered if ex.api == "Metadata" and ex.extra.get("closed_by") == "broker"]
    assert behind and any(ex.api == "ListTransactions" and ex.connection_id == behind[0].connection_id
                          for ex in unanswered)
    (found,) = _rule(doc)
    assert found["api"] == "DeleteRecords" and "Metadata" not in found["summary"]


def test_requests_the_mock_never_advertised_are_the_clients_fault():
    """librdkafka's mock hangs up on kafka-python's admin requests of apis it does not advertise: kafka-python's
    results say "socket disconnected", and version_not_advertised (the client's side) names them, not this rule."""
    path = ROOT / "captures" / "admin" / "kafka-python-mock.pcap"
    unanswered, doc = _run(path)
    closed = [ex for ex in unanswered if ex.extra.get("closed_by") == "broker"]
    assert len(closed) >= 10
    assert _rule(doc) == []
    named = {f["api"] for f in doc["findings"] if f.get("rule") == "version_not_advertised"}
    assert named and named <= {ex.api for ex in closed}


def test_a_broker_closing_as_it_shuts_down_is_no_finding():
    """Tansu closes the connections it still has as the recording ends (txn-clean): after its RST on a Metadata
    nothing more is answered, so the close may be its shutdown."""
    unanswered, doc = _run(P.capture("txn-clean"))
    closed = [ex for ex in unanswered if ex.extra.get("closed_by") == "broker"]
    assert closed and _rule(doc) == []


@pytest.mark.parametrize("name", ["clean-classic", "clean-kip848", "unanswered"])
def test_clients_closing_with_requests_in_flight_are_no_finding(name):
    unanswered, doc = _run(P.capture(name))
    by_client = [ex for ex in unanswered if ex.extra.get("closed_by") == "client"]
    assert by_client and all(ex.unanswered == "connection_closed" for ex in by_client)
    assert _rule(doc) == []


# ---- the shutdown windows, on rows made here

BROKER = "10.0.0.2:9092"


def _exchange(analysis, conn, corr, ts, *, answered=None, closed=None, key=21, api="DeleteRecords", version=1):
    client = f"10.0.0.1:{5000 + conn}"
    row = {"ts_ns": ts, "request_ts_ns": ts, "response_ts_ns": answered, "client": client, "broker": BROKER,
           "client_id": "c", "api_key": key, "api": api, "api_version": version, "correlation_id": corr,
           "status": "paired" if answered else "no_response", "connection_id": conn, "error_codes": [],
           "latency_ns": (answered - ts) if answered else None, "evidence": (ts, client, BROKER, corr, api)}
    obs = []
    if api == "ApiVersions":
        obs.append((T.ADVERTISED, client, BROKER, answered, ((18, 0, 3), (21, 0, 2)), row["evidence"]))
    if closed is not None:
        obs.append((T.BROKER_CLOSED, closed, key, version, True, row["evidence"]))
    analysis.add(row, obs)


def _open(analysis, conn, ts):
    _exchange(analysis, conn, 0, ts, answered=ts + 10, key=18, api="ApiVersions", version=3)


S = 1_000_000_000


def test_closes_one_after_another_fire_and_closes_at_once_do_not():
    one_by_one = Analysis()  # a client that reconnects after each close: the broker alive between them
    for conn in (1, 2, 3):
        _open(one_by_one, conn, conn * 100_000)
        _exchange(one_by_one, conn, 1, conn * 100_000 + 100, closed=conn * 100_000 + 200)
    _open(one_by_one, 4, 10 * S)  # answered later: not going away
    (found,) = [f for f in one_by_one.findings({}, None, None) if f.get("rule") == RULE]
    assert found["count"] == 3 and found["api"] == "DeleteRecords" and found["api_version"] == 1
    at_once = Analysis()  # two connections open together, closed by the broker half a second apart
    for conn in (1, 2):
        _open(at_once, conn, conn * 100)
    _exchange(at_once, 1, 1, 1000, closed=2000)
    _exchange(at_once, 2, 1, 1500, closed=2000 + SHUTDOWN_NS // 2)
    _open(at_once, 3, 10 * S)
    assert [f for f in at_once.findings({}, None, None) if f.get("rule") == RULE] == []
    apart = Analysis()  # the same, further apart than SHUTDOWN_NS: each a close of its own
    for conn in (1, 2):
        _open(apart, conn, conn * 100)
    _exchange(apart, 1, 1, 1000, closed=2000)
    _exchange(apart, 2, 1, 1500, closed=2000 + 2 * SHUTDOWN_NS)
    _open(apart, 3, 10 * S)
    assert [f["count"] for f in apart.findings({}, None, None) if f.get("rule") == RULE] == [2]


def test_silent_when_nothing_is_answered_after_or_the_version_was_not_advertised():
    last = Analysis()
    _open(last, 1, 100)
    _exchange(last, 1, 1, 1000, closed=2000)  # nothing answered after it: the capture or the broker ended
    assert [f for f in last.findings({}, None, None) if f.get("rule") == RULE] == []
    unadvertised = Analysis()
    _open(unadvertised, 1, 100)
    _exchange(unadvertised, 1, 1, 1000, closed=2000, version=3)  # DeleteRecords v0-v2 advertised
    _open(unadvertised, 2, 10 * S)
    assert [f for f in unadvertised.findings({}, None, None) if f.get("rule") == RULE] == []
    elsewhere = Analysis()  # no ApiVersions on the connection: the same broker's other one speaks for it
    _open(elsewhere, 1, 100)
    _exchange(elsewhere, 2, 1, 1000, closed=2000)
    _open(elsewhere, 3, 10 * S)
    assert [f["count"] for f in elsewhere.findings({}, None, None) if f.get("rule") == RULE] == [1]


# ---- kwire spark: who closed first travels with the pieces of a connection cut by file edges


@pytest.mark.parametrize("seed", range(4))
def test_spark_over_rotated_files_finds_what_stats_finds(tmp_path, seed):
    import gzip
    import random

    from tests.spark.inprocess import run_in_process
    from tests.spark.rotate import pcap_records
    from tests.spark.test_stitching import assert_same, stats_document

    pytest.importorskip("pyarrow")
    source = [P.capture("broker-rules-java"), ROOT / "captures" / "admin" / "kafka-python-tansu.pcap"][seed % 2]
    data = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    header, records = pcap_records(data)
    rnd = random.Random(seed)
    cuts = sorted(rnd.sample(range(1, len(records)), 12))
    paths = []
    for j, (a, b) in enumerate(zip([0] + cuts, cuts + [len(records)])):
        path = tmp_path / f"part-{j:04d}.pcap"
        path.write_bytes(header + b"".join(records[a:b]))
        paths.append(path)
    result, _ = run_in_process(paths, parts=1 + seed % 3)
    doc = result.aggregator.document()
    assert_same(doc, stats_document(paths))
    assert [f["count"] for f in _rule(doc)] == [f["count"] for f in _rule(_run(source)[1])]
