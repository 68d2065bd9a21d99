"""The quorum's findings within their bounds, the cut said with its count (issue 49; tests/hostile3/changes.py).

9,999 leader changes gave 20 quorum_leader_change findings and nothing said of the other 9,979: now the
first MAX_EACH are listed one by one and one more stands for the rest, with their count.
"""

from __future__ import annotations

from kwire.analytics import Aggregator
from kwire.analytics.findings_quorum import MAX_EACH
from kwire.pipeline import analyze_files
from tests.hostile3 import changes as gen


def _document(path) -> dict:
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    return agg.document()


def test_leader_changes_past_the_cap_are_counted(tmp_path):
    path = tmp_path / "leaders.pcap"
    gen.leader_changes(path, 100)
    doc = _document(path)
    assert len(doc["quorum"]["leaders"]) == 101 and doc["quorum"]["overflow"] == 0
    found = [f for f in doc["findings"] if f["kind"] == "quorum_leader_change"]
    assert len(found) == MAX_EACH + 1
    assert [f["count"] for f in found] == [1] * MAX_EACH + [100 - MAX_EACH]
    assert sum(f["count"] for f in found) == 100  # every change is in one finding
    last = max(found, key=lambda f: f["count"])
    assert (last["epoch"], last["leader_id"]) == (101, 1 + 101 % 3)
    assert (last["previous_epoch"], last["previous_leader_id"]) == (MAX_EACH + 1, 1 + (MAX_EACH + 1) % 3)
    assert f"{100 - MAX_EACH:,} more times" in last["summary"]
