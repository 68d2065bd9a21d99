"""The change log: who changed what in the cluster, kept in mergeable, bounded form.

`ChangesState` takes the observations of kwire.analytics.observe tagged "ch" (a change entry of
kwire.analytics.changes_read) and "pr" (the principal a connection authenticated as, from its
SaslAuthenticate exchange), merges exactly across any split of the traffic (`kwire stats --jobs`, the
partitions of `kwire spark`, the seconds of `kwire live`), and makes the `changes` key of the stats
document:

    {count, failed, shown, overflow, removals_not_checked, member_commits_not_checked, by_operation: {operation: n},
     by_result: {result: n},
     entries: [{ts, client, broker, client_id, principal, correlation_id, api, operation, resources,
                result, kind, makes_kind, resource_count, unlisted_results, request_outcome,
                entries_not_read}]}

A LeaveGroup that names members by id (v3+) is a change only when its client is not one of them: the
entry's `removes` (kwire.analytics.changes_apis) is kept apart (the first MAX_REMOVALS by time) and
decided when the document is made, against the connections the members' own requests came on
(kwire.analytics.groups: Member.clients); a removal names each removed member's client id and connection.
`removals_not_checked` counts those past the cap (not decided, not listed).

An OffsetCommit from outside the group (no member id, generation -1: the entry's `commits_as` is group, "" and
client id) is a change unless its client id sent a Fetch anywhere in the capture (a consumer that assigns itself
its partitions, `assign()`, commits its progress so); its first MAX_MEMBER_COMMITS commits per (group, client id)
are kept, the rest counted, as a member's. A member's own OffsetCommit (the entry's `commits_as`: group, member
id) is a change only when the member was a tool's transient one: it left within the capture and neither its own requests' client id nor the
commit's sent a Fetch anywhere in the capture (the connections kwire.analytics.traffic marks `fetched`, and
the client ids of Fetches filtered out, learnt by `add_fetcher`) (KafkaJS admin.setOffsets joins the group, commits, leaves). The first MAX_MEMBER_COMMITS
commits of each of MAX_COMMITTERS members are kept (the smallest (group, member id)), the rest of each counted,
and decided when the document is made (a tool's commits past the first are counted, in `overflow`);
`member_commits_not_checked` counts the commits of the members past the cap (all of them past MAX_FETCHERS
client ids that fetched: then none is decided). A capture that holds a consumer's group traffic but none of its Fetches
(one broker's traffic of several) would call its commits a tool's once it leaves.

Bounds (one policy, kwire.native.mergeable): the first MAX_CHANGES changes by time are kept whole
(ties broken by client, broker and correlation id: `Kept`), the others are counted (`overflow`) and
still counted in by_operation and by_result, which are sums (by_result over every resource of a
change, those it does not list too: its `unlisted_results`). A change keeps at most
changes_read.MAX_RESOURCES resources (and as many more that make its kind): one change of a million
resources is a bounded entry. A connection's principal is joined in
when the document is made; principals are kept for the MAX_PRINCIPALS smallest (client, broker) pairs.
`destructive()` gives the kept changes of a DESTRUCTIVE kind to kwire.analytics.findings_changes.
"""

from __future__ import annotations

from kwire.analytics.changes_apis import member_commit_entry
from kwire.native.exchange_facts import ns_to_s
from kwire.native.mergeable import Capped, Kept, choose, keep_smallest, merge_counts
from kwire.analytics import tags as T

MAX_CHANGES = 1000
MAX_REMOVALS = 1000
MAX_PRINCIPALS = 65536
MAX_COMMITTERS = 1024  # members whose own commits are kept until the capture says whether they were a tool's
MAX_MEMBER_COMMITS = 4  # ... the first commits of each
MAX_FETCHERS = 65536  # client ids that sent a Fetch (past it, no member's commit is decided)
OK = "ok"
UNKNOWN = "not_kept"  # a resource whose answer kwire did not keep: not a failure


def _key(change: dict) -> tuple:
    return (change["ts_ns"], change["client"] or "", change["broker"] or "", change["correlation_id"])


class ChangesState:
    __slots__ = ("kept", "count", "failed", "by_operation", "by_result", "principals", "removals",
                 "removal_candidates", "member_commits", "member_commit_candidates", "fetchers")

    def __init__(self) -> None:
        self.kept = Kept(MAX_CHANGES)
        self.count = 0
        self.failed = 0
        self.by_operation: dict[str, int] = {}
        self.by_result: dict[str, int] = {}
        self.principals: dict[tuple, str] = Capped()
        self.removals = Kept(MAX_REMOVALS)  # LeaveGroups naming members by id: decided in document()
        self.removal_candidates = 0
        self.member_commits: dict[tuple, list] = Capped()  # (group, member id) -> its first commits: decided in document()
        self.member_commit_candidates = 0
        self.fetchers: dict | None = {}  # client id -> None of the Fetches not counted (filtered out); None: too many

    def add(self, ob: tuple) -> None:
        if ob[0] == T.PRINCIPAL:
            self.add_principal(ob[1], ob[2], ob[3])
            return
        change = ob[1]
        if "removes" in change:
            self.removal_candidates += 1
            self.removals.add(_key(change), change)
            return
        if "commits_as" in change:
            self.add_member_commit(change)
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

    def add_fetcher(self, client_id) -> None:
        fetchers = self.fetchers
        if fetchers is not None and client_id not in fetchers:
            fetchers[client_id] = None
            if len(fetchers) > MAX_FETCHERS:
                self.fetchers = None  # too many to tell: no member's commit is decided

    def add_member_commit(self, change: dict) -> None:
        self.member_commit_candidates += 1
        group, *member = change["commits_as"]  # (member id) or ("", client id): a commit from outside the group
        key = (group if type(group) is str else "", *member)
        cell = self.member_commits.get(key)
        if cell is None:
            cell = self.member_commits[key] = [0, Kept(MAX_MEMBER_COMMITS)]
            keep_smallest(self.member_commits, MAX_COMMITTERS)
        cell[0] += 1
        cell[1].add(_key(change), change)

    def merge(self, other: ChangesState) -> None:
        for key, (n, theirs) in other.member_commits.items():
            mine = self.member_commits.get(key)
            if mine is None:
                mine = self.member_commits[key] = [0, Kept(MAX_MEMBER_COMMITS)]
            mine[0] += n
            mine[1].merge(theirs)
        keep_smallest(self.member_commits, MAX_COMMITTERS)
        self.member_commit_candidates += other.member_commit_candidates
        if other.fetchers is None:
            self.fetchers = None
        else:
            for client_id in other.fetchers:
                self.add_fetcher(client_id)
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

    def destructive(self, groups=None, traffic=None) -> list[tuple[dict, str | None]]:
        """(change, principal) of every kept change of a destructive kind, in time order (with `groups`, a
        GroupsState, and `traffic`, a TrafficState, the commits of tools' transient members too)."""
        kept = Kept(MAX_CHANGES)
        kept.merge(self.kept)
        for change in self.tool_member_commits(groups, traffic):
            kept.add(_key(change), change)
        return [(c, self.principal(c)) for c in kept.values() if c.get("kind")]

    def tool_member_commits(self, groups, traffic) -> list[dict]:
        """The kept commits of members that were a tool's: the member left within the capture, and neither the
        client id of its own requests nor that of the commit sent a Fetch anywhere in it (kwire's whole
        traffic, filtered out or not: the connections of `traffic` that carried one, and those learnt here).
        Undecided (none) past MAX_FETCHERS client ids learnt, when `traffic` kept only some of its connections, or
        without `groups` and `traffic`."""
        return [c for _, commits in self._tools(groups, traffic) for c in commits]

    def _fetchers(self, traffic) -> set | None:
        from kwire.analytics.traffic import MAX_CONNECTIONS

        if traffic is None or self.fetchers is None or len(traffic.connections) >= MAX_CONNECTIONS:
            return None
        return {c.client_id for c in traffic.connections.values() if c.fetched} | set(self.fetchers)

    def _tools(self, groups, traffic) -> list[tuple[int, list[dict]]]:
        """(commits, the kept ones) of each member that was a tool's (`tool_member_commits`)."""
        if not self.member_commits:
            return []
        fetchers = self._fetchers(traffic)
        if fetchers is None:
            return []
        out = []
        for key, (n, commits) in self.member_commits.items():
            if len(key) == 3:  # from outside the group: a tool's unless its client consumes
                if key[2] not in fetchers:
                    out.append((n, [member_commit_entry(c) for c in commits.values()]))
                continue
            group_id, member_id = key
            group = groups.groups.get(group_id) if group_id and groups is not None else None
            member = group.members.get(member_id) if group is not None else None
            if member is None or member.left_ns is None or member.client_id is None or member.client_id in fetchers:
                continue
            mine = [member_commit_entry(c) for c in commits.values()
                    if c["client_id"] is not None and c["client_id"] not in fetchers]
            if mine:
                out.append((n if len(mine) == len(commits.items) else len(mine), mine))
        return out

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

    def _member_commits_not_checked(self, traffic) -> int:
        """Commits of the members past MAX_COMMITTERS (not decided, not listed), or every one when the clients
        that fetched were too many to tell."""
        if self.member_commit_candidates and self._fetchers(traffic) is None:
            return self.member_commit_candidates
        return self.member_commit_candidates - sum(n for n, _ in self.member_commits.values())

    def document(self, groups=None, traffic=None) -> dict:
        """The `changes` key; `groups` (a GroupsState) decides the LeaveGroups that name members by id, and with
        `traffic` (a TrafficState: which connections fetched) the commits of members."""
        kept, count, failed = Kept(MAX_CHANGES), self.count, self.failed
        kept.merge(self.kept)
        by_operation, by_result = dict(self.by_operation), dict(self.by_result)
        for change in self.removed_by_others(groups):
            count += 1
            failed += 1 if _tally(change, by_operation, by_result) else 0
            kept.add(_key(change), change)
        for n, commits in self._tools(groups, traffic):
            count += n  # those past MAX_MEMBER_COMMITS counted, not listed (`overflow`)
            for change in commits:
                failed += 1 if _tally(change, by_operation, by_result) else 0
                kept.add(_key(change), change)
        entries = [_shown(change, self.principal(change)) for change in kept.values()]
        return {"count": count, "failed": failed, "shown": len(entries), "overflow": count - len(entries),
                "removals_not_checked": self.removal_candidates - len(self.removals.items),
                "member_commits_not_checked": self._member_commits_not_checked(traffic),
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
    return {"ts_ns": change["ts_ns"], "ts": ns_to_s(change["ts_ns"]),  # (ts: deprecated, epoch s)
            "client": change["client"], "broker": change["broker"],
            "client_id": change["client_id"], "principal": principal, "correlation_id": change["correlation_id"],
            "api": change["api"], "operation": change["operation"], "resources": change["resources"],
            "result": change["result"], "kind": change["kind"], "makes_kind": change["makes_kind"],
            "resource_count": change["resource_count"],
            "unlisted_results": change["unlisted_results"], "request_outcome": change["request_outcome"],
            "entries_not_read": change["entries_not_read"]}
