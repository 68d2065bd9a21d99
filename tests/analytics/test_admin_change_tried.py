"""admin_change says what happened (issue 46, item 4): a change nobody answered reads as tried, with
`unanswered` and a severity a step down; one the broker refused reads as tried and refused; a change
done beside others tried names what was done and says what became of the rest. The changes are
written by hand here (the results the broker's answers would give), one finding per group."""

from __future__ import annotations

from kwire.analytics import findings_changes
from kwire.analytics.changes_read import NO_RESPONSE, OK, UNDECODED


def _change(corr: int, topic: str, result: str, kind: str = "records_deleted", outcome=None) -> dict:
    return {"ts_ns": 1_000_000_000 + corr, "client": "127.0.0.1:5000", "broker": "127.0.0.1:9092",
            "client_id": "j1-admin", "correlation_id": corr, "api": "DeleteRecords", "operation": "delete_records",
            "resources": [{"type": "records", "topic": topic, "low_watermarks": {"0": 5}}], "result": [result],
            "kind": kind, "makes_kind": [], "resource_count": 1, "unlisted_results": {}, "request_outcome": outcome,
            "entries_not_read": 0}


class _Changes:
    def __init__(self, changes):
        self.changes = changes

    def destructive(self, groups=None, traffic=None):
        return [(c, None) for c in self.changes]


class _Analysis:
    def __init__(self, changes):
        self.changes = _Changes(changes)
        self.groups = self.traffic = None


def _one(changes) -> dict:
    (f,) = findings_changes.find(_Analysis(changes), {}, None, None)
    return f


def test_unanswered_changes_read_as_tried():
    f = _one([_change(i, t, NO_RESPONSE) for i, t in enumerate(["j1-lz4", "j1-zstd", "j1-lz4"])])
    assert f["summary"] == ("j1-admin tried to delete records from j1-lz4, j1-zstd on broker "
                            "127.0.0.1:9092; no answer to 3 requests")
    assert f["severity"] == "warning"  # records_deleted is critical when done
    assert f["unanswered"] == 3 and f["refused"] == 0 and f["count"] == 3


def test_refused_changes_read_as_tried_and_refused():
    f = _one([_change(1, "a", "TOPIC_AUTHORIZATION_FAILED"), _change(2, "b", "UNKNOWN_TOPIC_OR_PARTITION")])
    assert " tried to delete records from a, b " in f["summary"]
    assert f["summary"].endswith("; refused (TOPIC_AUTHORIZATION_FAILED, UNKNOWN_TOPIC_OR_PARTITION)")
    assert f["severity"] == "info" and f["refused"] == 2 and f["unanswered"] == 0
    assert " deleted records" not in f["summary"]


def test_refused_and_unanswered_step_down():
    f = _one([_change(1, "a", "POLICY_VIOLATION"), _change(2, "b", NO_RESPONSE)])
    assert f["summary"].endswith("; 1 refused (POLICY_VIOLATION), 1 with no answer")
    assert f["severity"] == "warning" and f["refused"] == 1 and f["unanswered"] == 1


def test_done_names_only_what_was_done():
    f = _one([_change(1, "a", OK), _change(2, "b", NO_RESPONSE), _change(3, "c", "POLICY_VIOLATION")])
    assert f["summary"] == ("j1-admin deleted records from a on broker 127.0.0.1:9092; tried 2 more requests: "
                            "1 refused (POLICY_VIOLATION), 1 with no answer")
    assert f["severity"] == "critical" and f["resources"] == ["a", "b", "c"]


def test_an_answer_not_read_may_have_done_it():
    f = _one([_change(1, "a", UNDECODED)])
    assert "may have been done" in f["summary"] and f["severity"] == "critical"


def test_unread_unanswered_request_is_tried():
    f = _one([dict(_change(1, "a", NO_RESPONSE, outcome="malformed"),
                   resources=[{"type": "request", "not_read": "malformed"}], resource_count=None)])
    assert "could not read (malformed): no answer to 1 request" in f["summary"]
    assert "may have" not in f["summary"] and f["severity"] == "warning" and f["unanswered"] == 1


def test_a_resource_refused_inside_a_done_change_is_not_said_done():
    change = dict(_change(1, "a", OK), resources=[{"type": "records", "topic": "a"}, {"type": "records", "topic": "b"}],
                  result=[OK, "TOPIC_AUTHORIZATION_FAILED"], resource_count=2)
    f = _one([change])
    assert f["summary"] == ("j1-admin deleted records from a on broker 127.0.0.1:9092 (refused for b: "
                            "TOPIC_AUTHORIZATION_FAILED)")
    assert f["severity"] == "critical" and f["resources"] == ["a", "b"]
