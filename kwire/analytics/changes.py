"""The change log: who changed what in the cluster, kept in mergeable, bounded form.

`ChangesState` takes the observations of kwire.analytics.observe tagged "ch" (a change entry of
kwire.analytics.changes_read) and "pr" (the principal a connection authenticated as, from its
SaslAuthenticate exchange), merges exactly across any split of the traffic (`kwire stats --jobs`, the
partitions of `kwire spark`, the seconds of `kwire live`), and makes the `changes` key of the stats
document:

    {count, failed, shown, overflow, removals_not_checked, by_operation: {operation: n},
     by_result: {result: n},
     entries: [{ts, client, broker, client_id, principal, correlation_id, api, operation, resources,
                result, kind, makes_kind, resource_count, unlisted_results, request_outcome,
                entries_not_read}]}

A LeaveGroup that names members by id (v3+) is a change only when its client is not one of them: the
entry's `removes` (kwire.analytics.changes_apis) is kept apart (the first MAX_REMOVALS by time) and
decided when the document is made, against the connections the members' own requests came on
(kwire.analytics.groups: Member.clients); a removal names each removed member's client id and connection.
`removals_not_checked` counts those past the cap (not decided, not listed).

Bounds (one policy, kwire.analytics.mergeable): the first MAX_CHANGES changes by time are kept whole
(ties broken by client, broker and correlation id: `Kept`), the others are counted (`overflow`) and
still counted in by_operation and by_result, which are sums (by_result over every resource of a
change, those it does not list too: its `unlisted_results`). A change keeps at most
changes_read.MAX_RESOURCES resources (and as many more that make its kind): one change of a million
resources is a bounded entry. A connection's principal is joined in
when the document is made; principals are kept for the MAX_PRINCIPALS smallest (client, broker) pairs.
`destructive()` gives the kept changes of a DESTRUCTIVE kind to kwire.analytics.findings_changes.
"""

from __future__ import annotations

from kwire.analytics.mergeable import Capped, Kept, choose, keep_smallest, merge_counts
from kwire.analytics import tags as T

MAX_CHANGES = 1000
MAX_REMOVALS = 1000
MAX_PRINCIPALS = 65536
OK = "ok"
UNKNOWN = "not_kept"  # a resource whose answer kwire did not keep: not a failure


def _key(change: dict) -> tuple:
    return (change["ts_ns"], change["client"] or "", change["broker"] or "", change["correlation_id"])


class ChangesState:
    __slots__ = ("kept", "count", "failed", "by_operation", "by_result", "principals", "removals",
                 "removal_candidates")

    def __init__(self) -> None:
        self.kept = Kept(MAX_CHANGES)
        self.count = 0
        self.failed = 0
        self.by_operation: dict[str, int] = {}
        self.by_result: dict[str, int] = {}
        self.principals: dict[tuple, str] = Capped()
        self.removals = Kept(MAX_REMOVALS)  # LeaveGroups naming members by id: decided in document()
        self.removal_candidates = 0

    def add(self, ob: tuple) -> None:
        if ob[0] == T.PRINCIPAL:
            self.add_principal(ob[1], ob[2], ob[3])
            return
        change = ob[1]
        if "removes" in change:
            self.removal_candidates += 1
            self.removals.add(_key(change), change)
            return
        self.count += 1
        if _tally(change, self.by_operation, self.by_result):
            self.failed += 1
        self.kept.add(_key(change), change)

    def add_principal(self, client: str, broker: str, principal: str) -> None:
        key = (client, broker)
        self.principals[key] = choose(self.principals.get(key), principal)
        if len(self.principals) > MAX_PRINCIPALS:
            keep_smallest(self.principals, MAX_PRINCIPALS)

    def merge(self, other: ChangesState) -> None:
        self.kept.merge(other.kept)
        self.removals.merge(other.removals)
        self.removal_candidates += other.removal_candidates
        self.count += other.count
        self.failed += other.failed
        merge_counts(self.by_operation, other.by_operation)
        merge_counts(self.by_result, other.by_result)
        for (client, broker), principal in other.principals.items():
            self.add_principal(client, broker, principal)

    def principal(self, change: dict) -> str | None:
        return self.principals.get((change["client"], change["broker"]))

    def entries(self) -> list[dict]:
        """The kept changes, in time order, as the document gives them."""
        return [_shown(change, self.principal(change)) for change in self.kept.values()]

    def destructive(self) -> list[tuple[dict, str | None]]:
        """(change, principal) of every kept change of a destructive kind, in time order."""
        return [(c, self.principal(c)) for c in self.kept.values() if c.get("kind")]

    def removed_by_others(self, groups) -> list[dict]:
        """The kept LeaveGroups whose client is none of the members they name (kwire.analytics.groups'
        GroupsState `groups` says which connections each member's own requests came on), each naming the
        removed members' client ids and connections."""
        out = []
        for change in self.removals.values():
            group_id, member_ids = change["removes"]
            group = groups.groups.get(group_id) if groups is not None and type(group_id) is str else None
            members = {m: group.members.get(m) for m in member_ids} if group is not None else {}
            if any(m is not None and change["client"] in m.clients for m in members.values()):
                continue  # one of them leaving, on its own connection
            out.append(_naming_members(change, members))
        return out

    def document(self, groups=None) -> dict:
        """The `changes` key; `groups` (a GroupsState) decides the LeaveGroups that name members by id."""
        kept, count, failed = Kept(MAX_CHANGES), self.count, self.failed
        kept.merge(self.kept)
        by_operation, by_result = dict(self.by_operation), dict(self.by_result)
        for change in self.removed_by_others(groups):
            count += 1
            failed += 1 if _tally(change, by_operation, by_result) else 0
            kept.add(_key(change), change)
        entries = [_shown(change, self.principal(change)) for change in kept.values()]
        return {"count": count, "failed": failed, "shown": len(entries), "overflow": count - len(entries),
                "removals_not_checked": self.removal_candidates - len(self.removals.items),
                "by_operation": dict(sorted(by_operation.items())), "by_result": dict(sorted(by_result.items())),
                "entries": entries}


def _tally(change: dict, by_operation: dict, by_result: dict) -> bool:
    """Count a change by operation and its resources by result; True when one failed."""
    unlisted = change["unlisted_results"]
    op = change["operation"]
    by_operation[op] = by_operation.get(op, 0) + 1
    for result in change["result"]:
        by_result[result] = by_result.get(result, 0) + 1
    merge_counts(by_result, unlisted)
    return any(r != OK and r != UNKNOWN for r in change["result"]) or any(r != OK and r != UNKNOWN for r in unlisted)


def _naming_members(change: dict, members: dict) -> dict:
    """A removal whose group_member resources say whom: the member's client id and connection (null when
    the capture holds none of its own requests)."""
    out = dict(change)
    resources = []
    for res in change["resources"]:
        member = members.get(res.get("member_id")) if res.get("type") == "group_member" else None
        if res.get("type") == "group_member":
            res = dict(res, client_id=member.client_id if member else None, client=member.client if member else None)
        resources.append(res)
    out["resources"] = resources
    return out


def _shown(change: dict, principal: str | None) -> dict:
    return {"ts": round(change["ts_ns"] / 1e9, 9), "client": change["client"], "broker": change["broker"],
            "client_id": change["client_id"], "principal": principal, "correlation_id": change["correlation_id"],
            "api": change["api"], "operation": change["operation"], "resources": change["resources"],
            "result": change["result"], "kind": change["kind"], "makes_kind": change["makes_kind"],
            "resource_count": change["resource_count"],
            "unlisted_results": change["unlisted_results"], "request_outcome": change["request_outcome"],
            "entries_not_read": change["entries_not_read"]}
