"""`changes` on real recordings of admin clients (captures/changes: confluent-kafka, kafka-python, aiokafka and
KafkaJS against Tansu and librdkafka's mock cluster), checked against each operation's own result as the
client library returned it (the `.truth.jsonl` beside each capture, written by the client's process).

Operation by operation: the operations that change the cluster, in order, each within the time the client
spent on it (kwire's time is the request's), naming resources the client named, `ok` where the client got a
result and not `ok` where it got an error. Operations the client refused itself (the broker does not offer
the api: "not supported by broker", IncompatibleBrokerVersion; the mock cluster has no controller: the call
timed out in the client) never reach the wire and are not expected."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = sorted((ROOT / "captures" / "changes").glob("*.pcap"))
SLACK_S = 0.002  # the capture and the truth read the same clock
UNTIMED_S = 1.0  # an operation whose start the truth does not give: the second before it returned

# The truth's operation names (each client script's) -> kwire's operation
OPERATIONS = {
    "create_topics": "create_topics", "delete_topics": "delete_topics", "create_partitions": "create_partitions",
    "incremental_alter_configs": "incremental_alter_configs", "create_acls": "create_acls",
    "delete_acls": "delete_acls", "delete_records": "delete_records",
    "alter_consumer_group_offsets": "set_group_offsets", "alter_group_offsets": "set_group_offsets",
    "reset_offsets": "set_group_offsets", "set_offsets": "set_group_offsets",
    "delete_group_offsets": "delete_group_offsets", "delete_consumer_group_offsets": "delete_group_offsets",
    "delete_consumer_groups": "delete_groups", "delete_groups": "delete_groups", "elect_leaders": "elect_leaders",
    "alter_user_scram_credentials": "alter_scram_credentials", "alter_partition_reassignments":
    "alter_partition_reassignments", "alter_client_quotas": "alter_client_quotas",
}
# Not a change: "consume_commit", a consumer that assigned itself the partition committing what it read (it
# fetched: its progress, not offsets moved; kwire.analytics.changes)
# Errors a client raises without sending anything (the api not offered, or no controller to send it to)
NOT_SENT = ("not supported by broker", "IncompatibleBrokerVersion", "_UNSUPPORTED_FEATURE", "does not support")
# Errors after the request went out: the broker's own error, or the answer lost or unreadable
SENT = re.compile(r"\[Error \d+\]|KafkaError\{code=[A-Z]|KafkaJSProtocolError|_TRANSPORT|socket disconnected|"
                  r"KafkaConnectionError|process exited|Protocol parse failure|_TIMED_OUT|KafkaJSRequestTimeoutError")


# KafkaJS's admin.setOffsets joins the group (JoinGroup, SyncGroup), commits as a member with its member id
# and generation, and leaves, fetching nothing: a tool's transient member, whose commits are changes (issue 46,
# item 4). When it failed, its error may come from a step before the commit (the mock: the join's
# metadata), so its commit is not required then.
MEMBER_COMMITS = {("kafkajs", "set_offsets")}


def _operation(record: dict) -> str | None:
    name = record.get("operation")
    if name == "alter_configs":
        return "incremental_alter_configs" if (record.get("arguments") or {}).get("incremental") else "alter_configs"
    return OPERATIONS.get(name)


def _errors(record: dict) -> list[str]:
    """Every error text the client reported for the operation (its own error, or per item)."""
    out = [record["error"]] if record.get("error") else []
    result = record.get("result")
    if isinstance(result, dict):
        out += [v["error"] for v in result.values() if isinstance(v, dict) and isinstance(v.get("error"), str)]
    return out


def _truth(capture: Path) -> list[dict]:
    """The operations that change the cluster, each `required` when it surely reached the broker (a result,
    or an error that came after sending) and optional otherwise (another error: the client may have given
    up before sending)."""
    lines = [json.loads(line) for line in Path(str(capture) + ".truth.jsonl").read_text().splitlines() if line.strip()]
    out = []
    for record in lines:
        operation = _operation(record)
        if operation is None:
            continue
        errors = _errors(record)
        not_sent = any(m in e for e in errors for m in NOT_SENT)
        required = not errors or (not not_sent and any(SENT.search(e) for e in errors))
        if errors and (record.get("client"), record.get("operation")) in MEMBER_COMMITS:
            required = False
        out.append(dict(record, expected=operation, errors=errors, required=required))
    return out


def _changes(capture: Path) -> list[dict]:
    agg = Aggregator()
    for ex in analyze_files([str(capture)]):
        agg.add_exchange(ex)
    return agg.document()["changes"]["entries"]


def _names(resource: dict) -> list[str]:
    return [str(resource[k]) for k in ("name", "topic", "group", "resource_name") if resource.get(k) is not None]


def _match(truth: list[dict], changes: list[dict]) -> list[tuple[dict, list[dict]]]:
    """Each truth operation with the changes made while the client ran it (a client may retry)."""
    pairs, rest = [], list(changes)
    for record in truth:
        start, end = record.get("started", record["ts"] - UNTIMED_S) - SLACK_S, record["ts"] + SLACK_S
        mine = [c for c in rest if c["operation"] == record["expected"] and start <= c["ts"] <= end]
        rest = [c for c in rest if c not in mine]
        pairs.append((record, mine))
    assert not rest, f"changes no operation of the truth made: {[(c['operation'], c['ts']) for c in rest]}"
    return pairs


@pytest.mark.skipif(not RECORDINGS, reason="no admin recordings under captures/changes")
@pytest.mark.parametrize("capture", RECORDINGS, ids=[p.name for p in RECORDINGS])
def test_changes_equal_the_clients_operations(capture):
    truth, changes = _truth(capture), _changes(capture)
    for record, made in _match(truth, changes):
        what = (record["operation"], record.get("arguments"))
        if not made:
            assert not record["required"], f"not in changes: {what} ({record['errors']})"
            continue
        arguments = json.dumps(record.get("arguments"))
        if "isolated" in (record.get("arguments") or {}):  # run in a process of its own: arguments not recorded
            arguments = json.dumps([json.loads(line).get("arguments") for line in
                                    Path(str(capture) + ".truth.jsonl").read_text().splitlines()])
        for change in made:
            for resource in change["resources"]:
                assert all(name in arguments for name in _names(resource)), (what, resource)
        last = made[-1]["result"]
        if record["errors"]:
            assert any(r != "ok" for r in last), (what, record["errors"], last)
        else:
            assert all(r == "ok" for r in last), (what, last)


@pytest.mark.skipif(not RECORDINGS, reason="no admin recordings under captures/changes")
def test_every_recording_has_changes_and_admin_change():
    kinds = set()
    for capture in RECORDINGS:
        agg = Aggregator()
        for ex in analyze_files([str(capture)]):
            agg.add_exchange(ex)
        doc = agg.document()
        kinds |= {f["change"] for f in doc["findings"] if f["kind"] == "admin_change"}
        assert doc["changes"]["count"] or not any(r["required"] for r in _truth(capture)), capture.name
    assert {"topic_deleted", "group_deleted", "offsets_moved", "credentials_changed"} <= kinds


def _data_path_captures() -> list[Path]:
    return sorted(p for p in (ROOT / "captures").glob("*.pcap*") if not p.name.endswith((".log", ".jsonl"))) + \
        sorted((ROOT / "captures" / "problems").glob("*.pcap.gz"))


@pytest.mark.parametrize("capture", _data_path_captures(), ids=lambda p: p.name)
def test_data_path_captures_change_nothing_but_their_setup(capture):
    """No admin_change, no quorum; the only changes are the CreateTopics the recording scripts send first
    (client id kwire-admin: scripts/record_problems.py, record_tls.py), the members a scenario's
    operator removed (its truth's `removed_group_members`), the offsets a scenario set from outside the
    group (its truth's `sent_offsets` with a bare group id, or `offset_committed` by a consumer not a member: an
    offsets_moved admin_change of that client; consumers that assign themselves their partitions and commit what
    they read, end-to-end-commits', are no change) and the records it tried to
    delete (its truth's `delete_records`: a records_deleted admin_change of that client, which says no answer came
    when none did)."""
    agg = Aggregator()
    for ex in analyze_files([str(capture)]):
        agg.add_exchange(ex)
    doc = agg.document()
    assert doc["quorum"] is None
    truth = Path(str(capture).removesuffix(".gz") + ".truth.jsonl")
    events = [json.loads(line) for line in truth.read_text().splitlines() if line.strip()] if truth.exists() else []
    removals = [e for e in events if e["event"] == "removed_group_members"]
    setters = {e["client_id"] for e in events if (e["event"] == "sent_offsets" and e["bare"])
               or (e["event"] == "offset_committed" and e["member"] is False)}
    deleters = {e["client_id"] for e in events if e["event"] == "delete_records"}
    assert not [f for f in doc["findings"] if f["kind"] in ("admin_change", "quorum_leader_change", "broker_fenced",
                                                            "metadata_behind")
                and not (f["kind"] == "admin_change" and f["change"] == "offsets_moved" and f["client_id"] in setters)
                and not (f["kind"] == "admin_change" and f["change"] == "records_deleted" and f["client_id"] in deleters)]
    allowed = {("create_topics", "kwire-admin")} | {("remove_group_members", e["client_id"]) for e in removals} | \
        {("set_group_offsets", c) for c in setters} | {("delete_records", c) for c in deleters}
    assert all((e["operation"], e["client_id"]) in allowed for e in doc["changes"]["entries"])


def test_a_member_removed_by_another_client_is_a_change():
    """captures/problems/member-removed: kafka-python's remove_group_members (a LeaveGroup v5 naming a member,
    no reason) is a change naming who removed whom; the consumers' own LeaveGroups, kwire-py-consumer's a v5
    naming itself, are not (the truth: the operator's call and result, the consumers' member ids)."""
    from tests import problems as P

    name = "member-removed"
    (removal,) = P.of(name, "removed_group_members")
    owner = {e["member_id"]: e["who"] for e in P.of(name, "assigned")}
    assert P.log_lines_matching(name, r"Sending request \d+ LeaveGroupRequest\(version=5.*kwire-py-consumer-")
    changes = [c for c in P.document(name)["changes"]["entries"] if c["operation"] == "remove_group_members"]
    assert len(changes) == 1
    (change,) = changes
    assert change["client_id"] == removal["client_id"] and change["api"] == "LeaveGroup"
    assert abs(change["ts"] - removal["ts"]) < 1
    assert [r["member_id"] for r in change["resources"]] == removal["member_ids"]
    assert [r["client_id"] for r in change["resources"]] == [owner[m] for m in removal["member_ids"]]
    assert all(r["client"] != change["client"] for r in change["resources"])
    assert change["result"] == ["ok" if removal["result"][m] == "NoError" else m for m in removal["member_ids"]]
    assert P.document(name)["changes"]["removals_not_checked"] == 0
    # inspect --changes reads one exchange at a time: it cannot tell, and leaves the LeaveGroup out
    from kwire.analytics.changes_read import is_change

    (leave,) = [ex for ex in analyze_files([str(P.capture(name))])
                if ex.api == "LeaveGroup" and ex.correlation_id == change["correlation_id"] and ex.client == change["client"]]
    assert not is_change(leave)
