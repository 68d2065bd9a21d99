"""An offsets change is recognised however it is made (issue 46, item 4), on recordings checked against the
clients' own truth: a transactional producer's TxnOffsetCommit with a bare group metadata sets a group's
offsets from outside the group (captures/problems/txn-offsets-bare: kafka-python's send_offsets_to_transaction
with a group id alone), while an exactly-once app's TxnOffsetCommit naming its consumer's member is no change;
KafkaJS's admin.setOffsets commits as a transient member that joins, commits and leaves without fetching
(captures/changes/kafkajs-tansu), while consumers' own commits stay no change however the Fetches are filtered."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files
from tests import problems as P

ROOT = Path(__file__).resolve().parents[2]


def _document(path: Path, split: int = 1) -> dict:
    parts = [Aggregator() for _ in range(split)]
    for i, ex in enumerate(analyze_files([str(path)])):
        parts[(i * 7) % split].add_exchange(ex)
    for part in parts[1:]:
        parts[0].merge(part)
    return parts[0].document()


def _stats(*args) -> dict:
    from kwire.cli.main import cli

    result = CliRunner().invoke(cli, ["stats", "--json", "--no-summary", *args])
    assert result.exit_code == 0, (args, result.stderr[-2000:], result.exception)
    return json.loads(result.stdout)


def test_bare_txn_offset_commit_is_a_change():
    name = "txn-offsets-bare"
    sent = {e["client_id"]: e for e in P.of(name, "sent_offsets")}
    bare = [e for e in sent.values() if e["bare"]]
    (read_back,) = P.of(name, "group_offsets")
    assert len(bare) == 1 and read_back["offsets"] == bare[0]["offsets"]  # the broker kept what it set
    for split in (1, 3):
        changes = [e for e in _document(P.capture(name), split)["changes"]["entries"]
                   if e["operation"] == "set_group_offsets"]
        assert [(c["api"], c["client_id"]) for c in changes] == [("TxnOffsetCommit", bare[0]["client_id"])]
        (res,) = changes[0]["resources"]
        topic, partition = next(iter(bare[0]["offsets"])).split("/")
        assert (res["group"], res["topic"], res["offsets"]) == (bare[0]["group"], topic,
                                                               {partition: bare[0]["offsets"][f"{topic}/{partition}"]})
        assert changes[0]["result"] == ["ok"]
    (f,) = P.findings(name, "admin_change")
    assert f["change"] == "offsets_moved" and f["client_id"] == bare[0]["client_id"] and f["severity"] == "warning"
    assert " moved group offsets of kwire-ledger-audit/kwire-ledger " in f["summary"]


def test_member_commits_of_a_fetching_member_are_no_change_whatever_the_filters():
    """The consumers of clean-classic commit as members and leave within the capture: they fetch, so their
    commits are no change, also when the Fetches are filtered out of the figures (kwire learns who fetches)."""
    path = P.capture("clean-classic")
    for args in ([], ["--api", "OffsetCommit,JoinGroup,SyncGroup,Heartbeat,LeaveGroup"]):
        doc = _stats(*args, str(path))
        assert not [e for e in doc["changes"]["entries"] if e["operation"] == "set_group_offsets"], args
        assert doc["changes"]["member_commits_not_checked"] == 0


def test_kafkajs_set_offsets_is_a_change():
    path = ROOT / "captures" / "changes" / "kafkajs-tansu.pcap"
    truth = [json.loads(line) for line in Path(str(path) + ".truth.jsonl").read_text().splitlines() if line.strip()]
    (op,) = [r for r in truth if r.get("operation") == "set_offsets"]
    assert op.get("result", 0) is None and not op.get("error")  # the client says it was done
    for split in (1, 2):
        doc = _document(path, split)
        made = [e for e in doc["changes"]["entries"] if e["operation"] == "set_group_offsets"]
        assert made and all(op["started"] - 0.002 <= e["ts"] <= op["ts"] + 0.002 for e in made)
        got = {(r["group"], r["topic"], int(p), o) for e in made for r in e["resources"] for p, o in r["offsets"].items()}
        want = {(op["arguments"]["group"], op["arguments"]["topic"], p, o) for p, o in op["arguments"]["partitions"]}
        assert got == want
    kinds = {f["change"] for f in doc["findings"] if f["kind"] == "admin_change"}
    assert "offsets_moved" in kinds


def test_a_member_commit_kept_short_is_the_entry_its_exchange_makes():
    """Members' commits are kept short (their bodies' Topics) and made into entries only when they were a tool's:
    the entry is the one the change log's reader makes of the exchange (kwire.analytics.changes_apis._offsets)."""
    from kwire.analytics import changes_apis as A
    from kwire.analytics.changes_body import Body
    from kwire.analytics.changes_read import change_of

    seen = 0
    for ex in analyze_files([str(P.capture("clean-classic")), str(ROOT / "captures" / "changes" / "kafkajs-tansu.pcap")]):
        if ex.api != "OffsetCommit":
            continue
        change = change_of(ex)
        if change is None or "member_commit" not in change:
            continue
        whole = A._offsets(ex, Body.of(ex, "request"), "set_group_offsets", "Name", "Partitions", "CommittedOffset",
                           "Topics", "Name")
        assert A.member_commit_entry(change) == dict(whole, commits_as=change["commits_as"])
        seen += 1
    assert seen > 10


def test_a_consumer_committing_what_it_read_from_outside_the_group_is_no_change():
    """end-to-end-commits: two consumers assign themselves their partitions and commit under a group id with no
    membership (generation -1): 44 commits of what they consumed, their own truth says. Their progress, not
    offsets moved: they fetched. However the traffic is split."""
    name = "end-to-end-commits"
    committed = P.of(name, "committed")
    assert len(committed) == 44 and P.of(name, "consumed")
    for split in (1, 3):
        doc = _document(P.capture(name), split)
        assert [e for e in doc["changes"]["entries"] if e["operation"] == "set_group_offsets"] == []
        assert not [f for f in doc["findings"] if f["kind"] == "admin_change"]


def test_an_admin_setting_offsets_from_outside_the_group_is_a_change():
    """confluent-kafka's AdminClient.alter_consumer_group_offsets: an OffsetCommit with no member from a client
    that fetches nothing, the offsets its truth says it set."""
    capture = ROOT / "captures" / "changes" / "confluent-mock.pcap"
    truth = [json.loads(line) for line in Path(str(capture) + ".truth.jsonl").read_text().splitlines() if line]
    (altered,) = [r for r in truth if r.get("operation") == "alter_consumer_group_offsets"]
    for split in (1, 3):
        changes = [e for e in _document(capture, split)["changes"]["entries"] if e["operation"] == "set_group_offsets"]
        assert [c["client_id"] for c in changes] == ["kwire-admin-confluent"]
        (res,) = changes[0]["resources"]
        (topic,) = {t for t, _, _ in altered["arguments"]["partitions"]}
        want = {str(p): o for _, p, o in altered["arguments"]["partitions"]}
        assert (res["group"], res["topic"], res["offsets"]) == (altered["arguments"]["group"], topic, want)
        assert altered["started"] - 0.002 <= changes[0]["ts"] <= altered["ts"] + 0.002
