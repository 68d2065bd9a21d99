"""Findings: named diagnoses of what went wrong, each with the exchanges that prove it.

`findings(analysis, names, first_ns, last_ns)` is the `findings` key of the stats document (the
first MAX_FINDINGS; `findings_and_total` also gives `findings_total`, how many were found): a list
of dicts, most severe first (then by start time, kind and summary), each

    {kind, severity, summary, start_ts_ns, end_ts_ns, evidence: [{ts_ns, client, broker, api, correlation_id}],
     ...}

with the keys of its kind (docs/findings.md lists them). `severity` is "critical", "warning" or
"info"; `start_ts_ns` and `end_ts_ns` are epoch ns (and, deprecated for one release, `start`, `end` and each
evidence's `ts` the same in epoch seconds, to the µs: docs/vocabulary.md); `evidence` names exchanges to look up in
`kwire inspect` (a connection is its two endpoints, `client` and `broker`: kwire's connection
numbers are per run and differ between `kwire stats` and `kwire spark`). The finders live in
kwire.analytics.findings_groups (member_expired, join_stuck, join_left_behind,
rebalance_storm),
kwire.analytics.findings_traffic (slow_broker, error_burst, throttled, unanswered, client_hangup), kwire.analytics.findings_delivery (transaction_stall, produce_retry,
share_redelivery), kwire.analytics.findings_resends (duplicate_write), kwire.analytics.findings_changes
(admin_change), kwire.analytics.findings_quorum (quorum_leader_change, broker_fenced, metadata_behind) and
kwire.analytics.findings_rules (protocol_violation: Kafka's protocol rules broken, kwire.analytics.rules).
Every finder is a pure function of the merged state.
"""

from __future__ import annotations

SEVERITIES = ("critical", "warning", "info")
MAX_FINDINGS = 200
MAX_SHOWN_EVIDENCE = 10


def seconds(ns: int | None) -> float | None:
    return None if ns is None else round(ns / 1e9, 6)


def evidence_items(items) -> list[dict]:
    """Evidence tuples (ts_ns, client, broker, correlation id, api) as documented dicts, in time
    order, without repeats, at most MAX_SHOWN_EVIDENCE."""
    out, seen = [], set()
    for ts, client, broker, corr, api in sorted(e for e in items if e is not None):
        if (ts, client, broker, corr) in seen:
            continue
        seen.add((ts, client, broker, corr))
        out.append({"ts_ns": ts, "client": client, "broker": broker, "api": api, "correlation_id": corr,
                    "ts": seconds(ts)})  # (ts: deprecated, epoch s)
        if len(out) == MAX_SHOWN_EVIDENCE:
            break
    return out


def named(value) -> str:
    """A name from the wire in a summary: "null" where the wire held none (never Python's "None")."""
    return "null" if value is None else str(value)


def client_named(client_id) -> str:
    """A client id in a summary: "(no client id)" for a null one, as the changes table says it."""
    return "(no client id)" if client_id is None else str(client_id)


def clients_named(client_ids) -> str:
    """Client ids in a summary, comma-separated (client_named)."""
    return ", ".join(client_named(c) for c in client_ids)


def finding(kind: str, severity: str, summary: str, start_ns, end_ns, evidence, /, **keys) -> dict:
    out = {"kind": kind, "severity": severity, "summary": summary, "start_ts_ns": start_ns, "end_ts_ns": end_ns,
           "evidence": evidence_items(evidence), "start": seconds(start_ns), "end": seconds(end_ns)}
    out.update(keys)
    return out


def _order(f: dict) -> tuple:
    """Most severe first, then by start (to the µs, as the list has always been sorted), kind and summary."""
    start = f["start_ts_ns"]
    return (SEVERITIES.index(f["severity"]), seconds(start) if start is not None else 0, f["kind"], f["summary"])


def findings(analysis, names: dict[str, str], first_ns: int | None, last_ns: int | None) -> list[dict]:
    """The first MAX_FINDINGS findings, most severe first (`findings_and_total` also counts the rest)."""
    return findings_and_total(analysis, names, first_ns, last_ns)[0]


def findings_and_total(analysis, names: dict[str, str], first_ns: int | None,
                       last_ns: int | None) -> tuple[list[dict], int]:
    """(the first MAX_FINDINGS findings, how many there are in all): the stats document's `findings`
    and `findings_total`, so that a cut list says how much it left out."""
    from kwire.analytics import (findings_changes, findings_delivery, findings_groups, findings_quorum,
                                 findings_resends, findings_rules, findings_silenced, findings_traffic)

    out: list[dict] = []
    for module in (findings_delivery, findings_groups, findings_traffic, findings_resends, findings_changes,
                   findings_quorum, findings_silenced, findings_rules):
        out += module.find(analysis, names, first_ns, last_ns)
    out.sort(key=_order)
    return out[:MAX_FINDINGS], len(out)
