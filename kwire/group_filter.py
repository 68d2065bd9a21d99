"""`--group G`: the exchanges of one consumer group, as a filter over Exchanges.

An exchange belongs to group G when
- its request names G in a field the schema marks as holding a group id (Kafka's entityType
  groupId: JoinGroup, Heartbeat, OffsetCommit, OffsetFetch, DescribeGroups, DeleteGroups, the
  consumer, share and streams group apis, the share-group offset and state apis, ...; found through
  kwire.codec.marks, no list of apis or field names), or a FindCoordinator key of type group or
  share: the group's coordinator traffic; or
- it is a Fetch, ListOffsets or OffsetForLeaderEpoch of one of G's members: a client (host and
  client id) that sent G's member requests (MEMBER_APIS: what a group's members send, not the
  describe, delete and offset apis tools send too).

Which clients are members is learnt from the traffic: `group_members(paths, group)` reads capture
files once beforehand, decoding only the group apis (a second pass over the files), and gives a
`GroupFilter` that needs no state (worker processes and Spark executors get a copy). On live
traffic `GroupFilter(group, learn=True)` learns members as they show up, in capture order: a
member's fetches count from its first group request on. Clients that share a host and a client id
are one client here.
"""

from __future__ import annotations

from functools import cache
from typing import Iterable

from kwire.codec.enums import COORDINATOR_TYPE
from kwire.codec.marks import message_tree, values
from kwire.codec.schema import GROUP_ID
from kwire.codec.schemas import all_schemas
from kwire.kafka.apis import API_BY_NAME
from kwire.model import Exchange

FETCHING_APIS = frozenset({"Fetch", "ListOffsets", "OffsetForLeaderEpoch"})
# What a group's members send (classic, consumer, share and streams groups); tools send the rest
MEMBER_APIS = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
                         "TxnOffsetCommit", "AddOffsetsToTxn", "ConsumerGroupHeartbeat", "ShareGroupHeartbeat",
                         "ShareFetch", "ShareAcknowledge", "StreamsGroupHeartbeat"})
FIND_COORDINATOR = API_BY_NAME["findcoordinator"].key
GROUP_KEY_TYPES = frozenset(k for k, name in COORDINATOR_TYPE.items() if name in ("GROUP", "SHARE"))
_GROUP_IDS = frozenset({GROUP_ID})


@cache
def group_api_keys() -> frozenset[int]:
    """The apis whose requests name a group in some version (by the schemas' marks), and FindCoordinator."""
    return frozenset({key for (key, kind), schema in all_schemas().items() if kind == "request"
                      and any(message_tree(key, kind, v, _GROUP_IDS) for v in range(schema.valid.lo, schema.valid.hi + 1))}
                     | {FIND_COORDINATOR})


def _host(endpoint: str) -> str:
    return endpoint.rsplit(":", 1)[0]


def names_group(ex: Exchange, group: str) -> bool:
    """Does the exchange's request name `group`?"""
    request = ex.request
    if not request:
        return False
    if ex.api_key == FIND_COORDINATOR:  # Kafka leaves its key unmarked: a group's or a transaction's
        if request.get("KeyType", 0) in GROUP_KEY_TYPES:
            return request.get("Key") == group or group in (request.get("CoordinatorKeys") or ())
        return False
    return any(found == group for found in values(request, message_tree(ex.api_key, "request", ex.api_version,
                                                                        _GROUP_IDS)))


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
            if self.learn and ex.api in MEMBER_APIS:
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
    return request is None or request.header.api_key not in group_api_keys()


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
