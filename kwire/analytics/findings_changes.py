"""admin_change: destructive or security-relevant changes to the cluster, with who made them.

One finding per (kind of change, client id, principal, broker) over the kept changes
(kwire.analytics.changes): topics deleted, records deleted, groups deleted, group offsets set or
deleted by a tool, ACLs removed, an ALLOW binding for every principal or every operation on every
resource added, SCRAM credentials changed. Severity by kind (kwire.analytics.changes_read.DESTRUCTIVE:
critical for deleted topics and records and allow-all ACLs, warning for the rest); "info" when the
broker refused every attempt with an error (nothing changed, but someone tried). An attempt not
answered, or answered with a body that does not decode, may have changed the cluster: it counts.

    admin_change {change, client_id, principal, clients, operations, resources, count, refused}

`resources` names what was touched (at most MAX_NAMED, in time order), `count` the changes and
`refused` those of them the broker refused (every resource's result an error name).
"""

from __future__ import annotations

from kwire.analytics.changes_read import DESTRUCTIVE, NO_RESPONSE, NOT_IN_ANSWER, OK, UNDECODED

_UNKNOWN = frozenset({NO_RESPONSE, NOT_IN_ANSWER, UNDECODED})
from kwire.analytics.findings import finding

MAX_NAMED = 20
_WHAT = {"topic_deleted": "deleted topics", "records_deleted": "deleted records from", "group_deleted": "deleted groups",
         "offsets_moved": "moved group offsets of", "acl_removed": "removed ACLs", "acl_allow_all": "added allow-all ACLs",
         "credentials_changed": "changed SCRAM credentials of"}


def resource_name(res: dict) -> str:
    """A short name of a change's resource, for summaries and tables."""
    kind = res.get("type")
    if kind in ("acl", "acl_filter"):
        return (f"{res.get('permission')} {res.get('principal')} {res.get('operation')} on "
                f"{res.get('resource_type')}:{res.get('resource_name')}")
    if kind == "group_offsets":
        return f"{res.get('group')}/{res.get('topic')}"
    if kind == "user":
        return f"{res.get('name')} ({res.get('mechanism')}, {res.get('action')})"
    if kind in ("records", "partitions"):
        return str(res.get("topic"))
    if kind == "quota":
        return ",".join(f"{k}={v}" for k, v in (res.get("entity") or {}).items())
    if kind == "group_member":
        return f"{res.get('group')}/{res.get('instance_id') or res.get('member_id')}"
    return str(res.get("name", res.get("token_id", kind)))


def _refused(change: dict) -> bool:
    """Every resource answered with an error: nothing was changed."""
    return all(r != OK and r not in _UNKNOWN for r in change["result"])


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    groups: dict[tuple, list] = {}
    for change, principal in analysis.changes.destructive():
        groups.setdefault((change["kind"], change["client_id"] or "", principal or "", change["broker"]), []).append(change)
    out = []
    for (kind, client_id, principal, broker), changes in sorted(groups.items()):
        named: list[str] = []
        for change in changes:
            for res in change["resources"]:
                name = resource_name(res)
                if name not in named and len(named) < MAX_NAMED:
                    named.append(name)
        failed = sum(1 for c in changes if _refused(c))
        severity = "info" if failed == len(changes) else DESTRUCTIVE[kind]
        who = client_id or "(no client id)"
        if principal:
            who += f" as {principal}"
        tail = f" ({failed} of {len(changes)} refused)" if failed else ""
        summary = f"{who} {_WHAT[kind]} {', '.join(named)} on broker {broker}{tail}"
        evidence = [(c["ts_ns"], c["client"], c["broker"], c["correlation_id"], c["api"]) for c in changes]
        out.append(finding("admin_change", severity, summary, changes[0]["ts_ns"], changes[-1]["ts_ns"], evidence,
                           change=kind, client_id=client_id or None, principal=principal or None,
                           clients=sorted({c["client"] for c in changes}),
                           operations=sorted({c["operation"] for c in changes}), resources=named,
                           count=len(changes), refused=failed))
    return out
