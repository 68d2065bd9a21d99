"""Kafka's protocol rules (kwire.analytics.rules): each against traffic real software made, with the
clients' own view as truth, the clean captures as the false-alarm check, and the state's bounds and
merges on rows made here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kwire.analytics.analysis import Analysis
from kwire.analytics.rules import MAX_ORDERED, RULES, RULES_LIST
from kwire.analytics.aggregate import Aggregator
from kwire.analytics import tags as T
from kwire.pipeline import analyze_files
from tests import problems as P

ROOT = Path(__file__).resolve().parents[2]


def _rules(doc: dict) -> list[dict]:
    return [f for f in doc["findings"] if f["kind"] == "protocol_violation"]


def _document(path: Path) -> dict:
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    return agg.document()


def test_every_rule_finding_carries_its_declaration():
    for f in _rules(P.document("txn-abort")) + _rules(P.document("clean-classic")):
        rule = RULES[f["rule"]]
        assert (f["says"], f["cites"], f["severity"]) == (rule.says, rule.cites, rule.severity)
        assert f["side"] in ("broker", "client") and f["evidence"]


def test_aborted_records_handed_to_a_read_committed_consumer():
    """Tansu's Fetch answer carries the aborted batch and its ABORT marker with an empty
    AbortedTransactions: the reader's own log shows it consumed the aborted values."""
    aborted = P.first("txn-abort", "aborted")
    handed = sorted(e["offset"] for e in P.of("txn-abort", "consumed", "kwire-ledger-reader")
                    if e["value"] in aborted["values"])
    assert len(handed) == len(aborted["values"])  # the fault, as the consumer saw it
    found = [f for f in _rules(P.document("txn-abort")) if f["rule"] == "aborted_transactions_missing"]
    assert len(found) == 1 and found[0]["side"] == "broker" and found[0]["severity"] == "critical"
    pid = P.acquired_pid("txn-abort", "kwire-txn-producer")
    assert f"producer {pid}'s batch at offset {handed[0]} " in found[0]["detail"]
    assert [e["api"] for e in found[0]["evidence"]] == ["Fetch"]
    assert found[0]["evidence"][0]["ts"] <= min(e["ts"] for e in P.of("txn-abort", "consumed")
                                                 if e["offset"] == handed[0])


@pytest.mark.parametrize("name", ["txn-clean", "txn-stall"])
def test_committed_transactions_raise_no_read_committed_rule(name):
    assert not P.of(name, "aborted")
    assert not [f for f in _rules(P.document(name)) if f["rule"] in
                ("aborted_transactions_missing", "records_past_last_stable_offset")]


# operation of scripts/record_admin.py -> the api kafka-python sends for it
_OPERATIONS = {"create_partitions": "CreatePartitions", "alter_configs": "AlterConfigs", "delete_acls": "DeleteAcls",
               "delete_group_offsets": "OffsetDelete", "elect_leaders": "ElectLeaders",
               "describe_log_dirs": "DescribeLogDirs", "describe_producers": "DescribeProducers",
               "list_transactions": "ListTransactions"}


def test_versions_not_advertised_are_the_requests_the_broker_hung_up_on():
    """kafka-python pinned to api_version (3, 5) sends apis Tansu does not advertise: each one the rule
    names is an operation the client's own result says failed with the socket disconnected."""
    path = ROOT / "captures" / "admin" / "kafka-python-pinned-tansu.pcap"
    with open(f"{path}.truth.jsonl") as f:
        truth = [json.loads(line) for line in f if line.strip()][1:]
    disconnected = {_OPERATIONS.get(t["operation"]) for t in truth if "socket disconnected" in (t.get("error") or "")
                    and not t["arguments"].get("incremental")}
    found = [f for f in _rules(_document(path)) if f["rule"] == "version_not_advertised"]
    assert found
    for f in found:
        assert f["api"] in disconnected, f["summary"]
        assert f["side"] == "client" and f["software"].startswith("kafka-python/")
        assert {e["api"] for e in f["evidence"]} == {f["api"], "ApiVersions"}


def test_the_mocks_refusal_layout_is_named_on_every_mock_capture():
    """librdkafka's mock refuses ApiVersions v3 with a one-byte ApiKeys count: the client's log shows
    the refusal and its retry at a lower version."""
    doc = P.document("clean-classic")
    found = [f for f in _rules(doc) if f["rule"] == "api_versions_refusal_layout"]
    assert len(found) == 1 and found[0]["severity"] == "info" and found[0]["side"] == "broker"
    retried = P.log_lines_matching("clean-classic", r"ApiVersionRequest v3 failed due to UNSUPPORTED_VERSION")
    assert 0 < len(retried) <= found[0]["count"]  # (clients logging without debug=protocol say nothing)
    # one ApiKeys entry: 13 bytes is the mock's layout (v0's is 12 bytes, v3's 15)
    sizes = {m.group(1) for line in P.log_lines_matching("clean-classic", r"Received ApiVersionResponse \(v3,")
             for m in [re.search(r"\(v3, (\d+) bytes", line)]}
    assert sizes == {"13"}
    assert found[0]["api"] == "ApiVersions" and found[0]["api_version"] == 3


_REAL_KAFKA = ["kraft/kraft-quorum.pcap"]  # captures of Apache Kafka itself


@pytest.mark.parametrize("name", _REAL_KAFKA)
def test_real_kafka_breaks_no_rule(name):
    assert _rules(_document(ROOT / "captures" / name)) == []


def test_the_docs_document_every_rule():
    text = (ROOT / "docs" / "rules.md").read_text()
    headings = re.findall(r"^## `([a-z_]+)`", text, re.M)
    assert headings == [r.id for r in RULES_LIST]
    for rule in RULES_LIST:
        section = text.split(f"## `{rule.id}`", 1)[1].split("\n## ", 1)[0]
        assert rule.says in section and "kwire " in section, rule.id


# ---- the state on rows made here


def _row(corr, ts, answered, client="10.0.0.1:5000", broker="10.0.0.2:9092", api="Metadata", key=3, version=12):
    return {"ts_ns": ts, "request_ts_ns": ts, "response_ts_ns": answered, "client": client, "broker": broker,
            "client_id": "c", "api_key": key, "api": api, "api_version": version, "correlation_id": corr,
            "status": "paired", "connection_id": 1, "error_codes": [], "latency_ns": answered - ts,
            "evidence": (ts, client, broker, corr, api)}


def _found(analysis, rule):
    return [f for f in analysis.findings({}, None, None) if f.get("rule") == rule]


def test_answers_out_of_order_are_found_whichever_way_the_rows_are_split():
    rows = [_row(1, 100, 500), _row(2, 200, 400), _row(3, 300, 600)]  # 2 answered before 1
    whole = Analysis()
    for row in rows:
        whole.add(row)
    found = _found(whole, "responses_out_of_order")
    assert len(found) == 1 and [e["correlation_id"] for e in found[0]["evidence"]] == [1, 2]
    a, b = Analysis(), Analysis()
    a.add(rows[1])
    b.add(rows[0])
    b.add(rows[2])
    a.merge(b)
    assert _found(a, "responses_out_of_order") == found
    ordered = Analysis()
    for row in (_row(1, 100, 400), _row(2, 200, 400), _row(3, 300, 600)):  # one segment held two answers
        ordered.add(row)
    assert _found(ordered, "responses_out_of_order") == []


def test_order_is_checked_on_the_first_answers_and_says_so():
    analysis = Analysis()
    for n in range(MAX_ORDERED + 10):
        analysis.add(_row(n, 1000 * n, 1000 * n + 10))
    analysis.add(_row(10_000, 5, 2_000_000))  # answered last, sent first
    found = _found(analysis, "responses_out_of_order")
    assert len(found) == 1 and "had more" in found[0]["summary"]
    assert len(analysis.traffic.connections[("10.0.0.1:5000", "10.0.0.2:9092", 1)].order.items) == MAX_ORDERED


def test_versions_are_checked_only_after_the_connections_api_versions_answer():
    analysis = Analysis()
    analysis.add(_row(1, 100, 150, api="Metadata", version=13))  # before it: nothing said yet
    advertised = _row(2, 200, 250, api="ApiVersions", key=18, version=3)
    analysis.add(advertised, [(T.ADVERTISED, advertised["client"], advertised["broker"], 250,
                               ((3, 0, 12), (18, 0, 3)), advertised["evidence"])])
    assert _found(analysis, "version_not_advertised") == []
    analysis.add(_row(3, 300, 350, api="Metadata", version=13))
    analysis.add(_row(4, 400, 450, api="Metadata", version=12))
    found = _found(analysis, "version_not_advertised")
    assert len(found) == 1 and (found[0]["api"], found[0]["api_version"]) == ("Metadata", 13)
    assert [e["correlation_id"] for e in found[0]["evidence"]] == [2, 3]
    silent = Analysis()  # no ApiVersions seen on the connection: silent
    silent.add(_row(3, 300, 350, api="Metadata", version=99))
    assert _found(silent, "version_not_advertised") == []


def _marks(analysis, ts, hw, api="Fetch", corr=1):
    row = _row(corr, ts, ts + 1, api=api, key=1 if api == "Fetch" else 2)
    tag = T.HIGH_WATERMARK if api == "Fetch" else T.LATEST_OFFSET
    analysis.add(row, [(tag, row["broker"], ts + 1, (("t", 0, hw),), row["evidence"])])


def test_latest_below_a_high_watermark_given_before():
    analysis = Analysis()
    _marks(analysis, 100, 10)
    _marks(analysis, 200, 12, corr=2)
    _marks(analysis, 300, 11, api="ListOffsets", corr=3)  # below 12, given before it
    found = _found(analysis, "latest_below_high_watermark")
    assert len(found) == 1 and "answered 11" in found[0]["detail"] and "HighWatermark 12" in found[0]["detail"]
    before = Analysis()
    _marks(before, 50, 5, api="ListOffsets")  # the Fetch came after: nothing to compare with
    _marks(before, 100, 10, corr=2)
    assert _found(before, "latest_below_high_watermark") == []


# ---- null_not_nullable: Tansu's and the mock's nulls, as their clients read them


def _exchanges(path: Path, api: str) -> list:
    return [ex for ex in analyze_files([str(path)]) if ex.api == api]


@pytest.mark.parametrize("name", ["confluent-tansu.pcap", "kafka-python-tansu.pcap"])
def test_a_null_create_acls_results_is_named_at_the_null(name):
    """Tansu answers CreateAcls v2/v3 with a compact null Results (0) and nothing after it. librdkafka's own
    log says it read -1 results; the rule names Results, the first fault, not the tagged fields after it."""
    path = ROOT / "captures" / "admin" / name
    if name.startswith("confluent"):
        with open(f"{path}.truth.jsonl") as f:
            failed = [json.loads(line) for line in f if '"create_acls"' in line]
        assert "Received -1 acls in response" in failed[0]["error"]  # the client's view: a null array
    (ex,) = _exchanges(path, "CreateAcls")
    outcome = ex.response_outcome
    assert (outcome.kind, outcome.field, outcome.fault) == ("malformed", "Results", "null_not_nullable")
    assert outcome.offset == 9  # correlation id, header tags, ThrottleTimeMs: the null's one byte
    found = [f for f in _rules(_document(path)) if f["api"] == "CreateAcls"]
    assert [f["rule"] for f in found] == ["null_not_nullable"]
    assert found[0]["side"] == "broker" and "Results" in found[0]["detail"]
    assert [(e["api"], e["correlation_id"]) for e in found[0]["evidence"]] == [("CreateAcls", ex.correlation_id)]


def test_a_kafkajs_create_acls_v1_answer_cut_short_is_no_null():
    """v1 is not flexible: Tansu's answer ends before Results' 4-byte length, a truncation, not a null."""
    (ex,) = _exchanges(ROOT / "captures" / "admin" / "kafkajs-tansu.pcap", "CreateAcls")
    assert ex.response_outcome.fault is None and ex.response_outcome.kind == "malformed"


def test_the_mocks_null_sync_group_assignment_is_shown_and_named():
    """The mock answers SyncGroup REBALANCE_IN_PROGRESS with a null Assignment (Kafka's schema: bytes, not
    nullable); librdkafka logs the error and reads the null as empty. The body is shown as sent, the rule names
    Assignment."""
    assert P.log_lines_matching("unanswered", r"SyncGroup response: Broker: Group rebalance in progress")
    nulls = [ex for ex in _exchanges(P.capture("unanswered"), "SyncGroup")
             if ex.response_outcome.kind == "null_not_nullable"]
    assert nulls and all(ex.response == {"ThrottleTimeMs": 0, "ErrorCode": 27, "Assignment": None} for ex in nulls)
    assert {ex.response_outcome.field for ex in nulls} == {"Assignment"}
    found = [f for f in _rules(P.document("unanswered")) if f["rule"] == "null_not_nullable"]
    assert len(found) == 1 and found[0]["api"] == "SyncGroup" and found[0]["count"] == len(nulls)
    assert found[0]["violation"] == "null_not_nullable"


# ---- error_code_unknown, on frames made here (no committed capture of real software has one)


def _heartbeats(path: Path, codes) -> None:
    from kwire.capture.pcapwrite import PcapWriter
    from tests.campaign.traffic import ETHERNET, Traffic, client_address
    from tests.kafka.frames import request_frame, response_frame

    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(1))
        for corr, code in enumerate(codes, start=1):
            body = b"\x00\x07group-a" + b"\x00\x00\x00\x01" + b"\x00\x02m1"  # GroupId, GenerationId, MemberId
            conn.exchange([(0, request_frame(12, 0, corr, "hb", body)),
                           (1, response_frame(corr, code.to_bytes(2, "big", signed=True)))])
        conn.close()


def test_error_codes_kafka_does_not_define_are_named(tmp_path):
    path = tmp_path / "codes.pcap"
    _heartbeats(path, [0, 27, 200, -2, 200, 133])  # 27 and 133 are Kafka's; 200 and -2 are not
    found = [f for f in _rules(_document(path)) if f["rule"] == "error_code_unknown"]
    assert len(found) == 1
    f = found[0]
    assert (f["api"], f["side"], f["count"], f["severity"]) == ("Heartbeat", "broker", 3, "warning")
    assert "UNKNOWN_ERROR_CODE(200)" in f["detail"] and "UNKNOWN_ERROR_CODE(-2)" in f["detail"]
    assert sorted(e["correlation_id"] for e in f["evidence"]) == [3, 4, 5]
    clean = tmp_path / "clean.pcap"
    _heartbeats(clean, [0, 27, 133, -1])
    assert not [f for f in _rules(_document(clean)) if f["rule"] == "error_code_unknown"]


_COMMITTED = sorted(p for p in (ROOT / "captures").rglob("*.pcap*")
                    if ".truth" not in p.name and not p.name.endswith(".keys") and p.parent.name != "tls")


def test_no_committed_capture_answers_a_code_kafka_does_not_define():
    """Real software (Kafka, Tansu, librdkafka's mock, behind proxies) answers only codes Kafka defines: the
    false-alarm check (the TLS captures, decrypted with their key logs, are tests/test_pipeline_tls.py's)."""
    assert len(_COMMITTED) > 40
    for path in _COMMITTED:
        assert not [f for f in _rules(_document(path)) if f["rule"] == "error_code_unknown"], path.name


def test_a_null_is_blamed_on_whichever_side_wrote_it(tmp_path):
    """SyncGroup exchanges with one non-nullable field sent null in the request or in the answer
    (tests/hostile3/nulls.py): the rule names the client for the requests and the broker for the answers."""
    from tests.hostile3.nulls import write_capture

    path = tmp_path / "sync-nulls.pcap"
    write_capture(path, kinds=("lenient",), apis=(14,))
    found = [f for f in _rules(_document(path)) if f["rule"] == "null_not_nullable"]
    assert {f["side"] for f in found} == {"client", "broker"}
    assert {f["api"] for f in found} == {"SyncGroup"} and all(f["evidence"] for f in found)


@pytest.mark.parametrize("client", ["aiokafka", "kafka-python"])
def test_the_mocks_null_offset_fetch_topics_is_what_the_clients_failed_on(client):
    """The mock answers OffsetFetch with a null Topics array (not nullable in Kafka's schema): the client's own
    result is a TypeError on None, and the rule names Topics in that answer."""
    path = ROOT / "captures" / "admin" / f"{client}-mock.pcap"
    with open(f"{path}.truth.jsonl") as f:
        ops = [json.loads(line) for line in f if line.strip()][1:]
    failed = [op for op in ops if op["operation"] in ("list_consumer_group_offsets", "list_group_offsets")]
    assert failed and all("'NoneType' object is not iterable" in op.get("error", "") for op in failed)
    (found,) = [f for f in _rules(_document(path)) if f["rule"] == "null_not_nullable"]
    assert found["api"] == "OffsetFetch" and "Topics" in found["detail"] and found["side"] == "broker"
    (ex,) = [ex for ex in _exchanges(path, "OffsetFetch") if ex.response_outcome.kind == "null_not_nullable"]
    assert ex.response["Topics"] is None and ex.response_outcome.field == "Topics"
    assert failed[0]["started"] <= found["evidence"][0]["ts"] <= failed[0]["ts"]
