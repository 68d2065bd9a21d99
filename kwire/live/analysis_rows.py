"""The dashboard's findings, groups and end-to-end panels: small rows made from the stats documents.

`analysis_rows(findings, groups)` turns the `findings` and `groups` documents `kwire stats` prints,
made from the dashboard's analysis (kwire.live.state.DashboardState.documents: every exchange since
the start, shared with the exporter and the findings log), into small rows for kwire.live.snapshot;
`end_to_end_rows(section)` the `end_to_end` section (kwire.analytics.end_to_end_doc): a row per topic
and consumer (its latencies, slowest first), and a row of lag in time per consumer (the largest latest
sample over its partitions, and the largest since the start) and per group committing (its commits).
The work grows with what the analysis keeps (bounded), not with traffic; the state calls it at most
once per second of capture time.
"""

from __future__ import annotations

from kwire.analytics.findings import seconds
from kwire.live.snapshot import EndToEndRow, FindingRow, GroupRow, TimeLagRow


def analysis_rows(findings: list[dict], groups_document: dict) -> tuple[list[FindingRow], list[GroupRow]]:
    rows = [FindingRow(f["severity"], f["kind"], f["summary"], seconds(f["start_ts_ns"])) for f in findings]
    groups = []
    for group_id, group in groups_document.items():
        generations = group["generations"]
        latest = generations[-1] if generations else None
        groups.append(GroupRow(group=group_id, protocol=group["protocol"] or "?",
                               generation=latest["generation"] if latest else None,
                               members=len(latest["members"]) if latest else 0,
                               generations=len(generations),
                               expired=sum(1 for m in group["members"].values() if m["left"] == "expired"),
                               since=seconds(latest["start_ts_ns"]) if latest else None))
    groups.sort(key=lambda r: (-(r.generations), r.group))
    return rows, groups


def end_to_end_rows(section: dict) -> tuple[list[EndToEndRow], list[TimeLagRow]]:
    latencies = [EndToEndRow(row["topic"], row["consumer"], row["kind"], row["deliveries"], row["latency_ms"]["p50"],
                             row["latency_ms"]["p99"], row["latency_ms"]["max"]) for row in section["consumers"]]
    latencies.sort(key=lambda r: (-(r.max_ms if r.max_ms is not None else -1), r.topic, r.consumer))
    lags: dict[tuple, list] = {}
    for kind, rows, name in (("fetch", section["partitions"], "consumer"), ("commits", section["commits"], "group")):
        for row in rows:
            if row.get("kind", "fetch") != "fetch" or not row["time_lag_ms"]["samples"]:
                continue
            have = lags.setdefault((row[name], kind), [None, None])
            for i, value in enumerate((row["time_lag_ms"]["last"], row["time_lag_ms"]["max"])):
                if value is not None and (have[i] is None or value > have[i]):
                    have[i] = value
    time_lag = [TimeLagRow(name, kind, latest, most) for (name, kind), (latest, most) in lags.items()]
    time_lag.sort(key=lambda r: (-(r.latest_ms or 0), -(r.max_ms or 0), r.kind, r.name))
    return latencies, time_lag
