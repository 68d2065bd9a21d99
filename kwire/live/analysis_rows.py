"""The dashboard's findings and groups panels: small rows made from the stats documents.

`analysis_rows(findings, groups)` turns the `findings` and `groups` documents `kwire stats` prints,
made from the dashboard's analysis (kwire.live.state.DashboardState.documents: every exchange since
the start, shared with the exporter and the findings log), into small rows for kwire.live.snapshot.
The work grows with what the analysis keeps (bounded), not with traffic; the state calls it at most
once per second of capture time.
"""

from __future__ import annotations

from kwire.live.snapshot import FindingRow, GroupRow


def analysis_rows(findings: list[dict], groups_document: dict) -> tuple[list[FindingRow], list[GroupRow]]:
    rows = [FindingRow(f["severity"], f["kind"], f["summary"], f["start"]) for f in findings]
    groups = []
    for group_id, group in groups_document.items():
        generations = group["generations"]
        latest = generations[-1] if generations else None
        groups.append(GroupRow(group=group_id, protocol=group["protocol"] or "?",
                               generation=latest["generation"] if latest else None,
                               members=len(latest["members"]) if latest else 0,
                               generations=len(generations),
                               expired=sum(1 for m in group["members"].values() if m["left"] == "expired"),
                               since=latest["start"] if latest else None))
    groups.sort(key=lambda r: (-(r.generations), r.group))
    return rows, groups
