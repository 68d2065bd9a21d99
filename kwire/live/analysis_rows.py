"""The dashboard's findings and groups panels: rows made from the analysis the Aggregators carry.

`analysis_rows(analysis, parts, names)` reads the same `findings` and `groups` documents `kwire
stats` prints from the dashboard's analysis (kwire.live.window.Window.analysis: every exchange since
the start), over the time its Aggregators span (`parts`: the retired one and the window's seconds),
as small rows for kwire.live.snapshot. The work grows with what the analysis keeps (bounded), not
with traffic; the state calls it at most once per second of capture time.
"""

from __future__ import annotations

from kwire.analytics.analysis import Analysis
from kwire.live.snapshot import FindingRow, GroupRow


def analysis_rows(analysis: Analysis, parts, names: dict[str, str]) -> tuple[list[FindingRow], list[GroupRow]]:
    first = last = None
    for agg in parts:
        if agg.first_ns is not None:
            first = agg.first_ns if first is None else min(first, agg.first_ns)
            last = agg.last_ns if last is None else max(last, agg.last_ns)
    findings = [FindingRow(f["severity"], f["kind"], f["summary"], f["start"])
                for f in analysis.findings(names, first, last)]
    groups = []
    for group_id, group in analysis.groups_document(names).items():
        generations = group["generations"]
        latest = generations[-1] if generations else None
        groups.append(GroupRow(group=group_id, protocol=group["protocol"] or "?",
                               generation=latest["generation"] if latest else None,
                               members=len(latest["members"]) if latest else 0,
                               generations=len(generations),
                               expired=sum(1 for m in group["members"].values() if m["left"] == "expired"),
                               since=latest["start"] if latest else None))
    groups.sort(key=lambda r: (-(r.generations), r.group))
    return findings, groups
