"""`--group G`: the exchanges of one consumer group, as a filter over Exchanges.

An exchange belongs to group G when
- its request names G: GroupId (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
  TxnOffsetCommit, ConsumerGroupHeartbeat, ShareGroupHeartbeat, ShareFetch, ShareAcknowledge,
  AddOffsetsToTxn, OffsetDelete), Groups / GroupIds (DescribeGroups, OffsetFetch v8+, DeleteGroups,
  ConsumerGroupDescribe, ShareGroupDescribe), or a FindCoordinator key of type group or share: the
  group's coordinator traffic; or
- it is a Fetch, ListOffsets or OffsetForLeaderEpoch of one of G's members: a client (host and
  client id) that sent G's member requests (the group apis above but FindCoordinator and the
  Describe apis, which tools send too).

Which clients are members is learnt from the traffic: `group_members(paths, group)` reads capture
files once beforehand, decoding only the group apis (a second pass over the files), and gives a
`GroupFilter` that needs no state (worker processes and Spark executors get a copy). On live
traffic `GroupFilter(group, learn=True)` learns members as they show up, in capture order: a
member's fetches count from its first group request on. Clients that share a host and a client id
are one client here.
"""

from __future__ import annotations

from typing import Iterable

from kwire.model import Exchange

FETCHING_APIS = frozenset({"Fetch", "ListOffsets", "OffsetForLeaderEpoch"})
NOT_MEMBERSHIP = frozenset({"FindCoordinator", "DescribeGroups", "ConsumerGroupDescribe", "ShareGroupDescribe",
                            "ListGroups", "DeleteGroups", "OffsetDelete"})
GROUP_API_KEYS = frozenset({8, 9, 10, 11, 12, 13, 14, 15, 25, 28, 42, 47, 68, 69, 76, 77, 78, 79})
GROUP_KEY_TYPES = (0, 2)  # FindCoordinator KeyType: group, share group (1 is a transaction)


def _host(endpoint: str) -> str:
    return endpoint.rsplit(":", 1)[0]


def names_group(ex: Exchange, group: str) -> bool:
    """Does the exchange's request name `group`?"""
    request = ex.request
    if not request:
        return False
    if request.get("GroupId") == group:
        return True
    for key in ("Groups", "GroupIds", "GroupsNames"):
        for item in request.get(key) or ():
            if item == group or (isinstance(item, dict) and item.get("GroupId") == group):
                return True
    if ex.api == "FindCoordinator" and request.get("KeyType", 0) in GROUP_KEY_TYPES:
        return request.get("Key") == group or group in (request.get("CoordinatorKeys") or ())
    return False


class GroupFilter:
    """A picklable predicate: the exchanges of `group` (see the module docstring). `members` is the
    set of (host, client id) of its members; with `learn`, members are added as they show up.
    `resolved` is False for a filter whose members are still to be read (`kwire spark` reads them
    with a Spark job first: kwire.spark.group_members)."""

    __slots__ = ("group", "members", "learn", "resolved")

    def __init__(self, group: str, members: Iterable[tuple] = (), learn: bool = False, resolved: bool = True):
        self.group = group
        self.members = set(members)
        self.learn = learn
        self.resolved = resolved

    def __call__(self, ex: Exchange) -> bool:
        if names_group(ex, self.group):
            if self.learn and ex.api not in NOT_MEMBERSHIP:
                self.members.add((_host(ex.client), ex.client_id))
            return True
        return ex.api in FETCHING_APIS and (_host(ex.client), ex.client_id) in self.members

    def __getstate__(self):
        return (self.group, sorted(self.members, key=str), self.learn, self.resolved)

    def __setstate__(self, state) -> None:
        group, members, self.learn, self.resolved = state
        self.group, self.members = group, set(map(tuple, members))


class AllOf:
    """Exchanges every one of `filters` keeps (picklable when they are)."""

    __slots__ = ("filters",)

    def __init__(self, *filters):
        self.filters = filters

    def __call__(self, ex: Exchange) -> bool:
        return all(f(ex) for f in self.filters)

    def __getstate__(self):
        return self.filters

    def __setstate__(self, state) -> None:
        self.filters = state


def unresolved_group(keep) -> str | None:
    """The group of a filter (or of an AllOf holding one) whose members are still to be read."""
    for f in getattr(keep, "filters", (keep,)):
        if isinstance(f, GroupFilter) and not f.resolved:
            return f.group
    return None


def with_members(keep, members: Iterable[tuple]):
    """`keep` with its unresolved GroupFilter given these members."""
    parts = [GroupFilter(f.group, members) if isinstance(f, GroupFilter) and not f.resolved else f
             for f in getattr(keep, "filters", (keep,))]
    return AllOf(*parts) if isinstance(keep, AllOf) else parts[0]


def offload_all_but_groups(raw) -> bool:
    """Leave every exchange but those of group apis undecoded (kwire.pipeline's offload hook)."""
    request = raw.request
    return request is None or request.header.api_key not in GROUP_API_KEYS


def members_of(exchanges: Iterable, group: str) -> set[tuple]:
    found = GroupFilter(group, learn=True)
    for ex in exchanges:
        if isinstance(ex, Exchange):
            found(ex)
    return found.members


def group_members(paths: list[str], group: str, ports: Iterable[int] = ()) -> GroupFilter:
    """The filter of `group` over these captures, its members read from them first."""
    from kwire.pipeline import analyze_files

    return GroupFilter(group, members_of(analyze_files(paths, port_hints=ports, offload=offload_all_but_groups), group))
