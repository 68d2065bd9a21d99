"""Consumer groups as the wire shows them: protocol, coordinator, generations, members, commits.

`GroupsState` keeps the group observations of kwire.analytics.observe_groups in mergeable form and
`document(names)` turns them into the `groups` key of the stats document (docs/groups.md):

    {group: {protocol, coordinator, generations: [{generation, start_ts_ns, end_ts_ns, leader, protocol_name,
     rebalance_ms, joined, gone, members: [{member_id, client_id, client, assignment: {topic: [partitions]}}]}],
     members: {member_id: {client_id, client, first_seen_ts_ns, last_seen_ts_ns, left}}, commits: {topic:
     {partition: offset}}, rebalance_in_progress}}

(and, deprecated for one release, each instant in epoch seconds beside it: a generation's `start`, `end`, a
member's `first_seen`, `last_seen`; `rebalance_s` beside `rebalance_ms`: docs/vocabulary.md).

Definitions:
- protocol: "classic" (JoinGroup/SyncGroup/Heartbeat), "consumer" (KIP-848 ConsumerGroupHeartbeat)
  or "share" (ShareGroupHeartbeat); the one most requests used (ties: the first by name).
- coordinator: the broker that answered most of the group's coordinator requests (ties: smallest).
- generation: the classic GenerationId, or the KIP-848 / share member epoch. start: its first
  sign on the wire (the JoinGroup answer that gave it, the first heartbeat answer with that epoch, or
  else the first request naming it); end: the next generation's start (null for the last).
  protocol_name: the JoinGroup answer's ProtocolName (the assignor: range, cooperative-sticky, ...);
  rebalance_ms: how long the group was without a stable assignment before it (`rebalance_ns`);
  joined / gone: member ids in it and not in the generation before / in that one and not in it (what
  changed: why it rebalanced, as far as the wire shows; null for the first generation seen).
- a member's assignment in a generation: classic, what SyncGroup gave it for that generation;
  KIP-848 and share, the last assignment a heartbeat answer gave it up to that epoch.
- left: "leave" (LeaveGroup, or a heartbeat with epoch -1 or -2), "expired" (it was in a
  generation, stopped sending, and a later generation started without it while nobody at its
  address rejoined), else null.
- commits: the latest committed offset per partition (OffsetCommit, TxnOffsetCommit answered
  without error; ties: the larger offset).

Caps (bounded memory, exact merges): MAX_GROUPS groups, MAX_MEMBERS members per group and per
generation, the MAX_GENERATIONS newest generations, MAX_ASSIGNMENTS newest assignments per member,
MAX_COMMITS partitions per group, MAX_CLIENTS connections per member (the smallest addresses),
MAX_STUCK and MAX_WAITS JoinGroups per group (waits: the unanswered first, then the earliest); each
keeps the smallest keys (group ids, member ids, partitions) or the newest (generations, assignments).
"""

from __future__ import annotations

from kwire.analytics.figures import ms
from kwire.native.mergeable import Capped, Kept, choose, first_ns, keep_smallest, last_ns
from kwire.analytics import tags as T

MAX_GROUPS = 1024
MAX_MEMBERS = 512
MAX_GENERATIONS = 256
MAX_ASSIGNMENTS = 64
MAX_COMMITS = 4096
MAX_STUCK = 20
MAX_WAITS = 64
MAX_CLIENTS = 8
NS = 1_000_000_000


def _s(ns: int | None) -> float | None:
    return None if ns is None else round(ns / 1e9, 6)


def _count(table: dict, key, n: int = 1) -> None:
    table[key] = table.get(key, 0) + n


class Member:
    """One member: `client_id` and `client` as its own requests give them; a LeaveGroup may be a tool's, naming
    it from elsewhere, so what a LeaveGroup gives is kept apart (`named_by`) and stands in only for a member
    whose own requests the capture does not hold (`identity`)."""

    __slots__ = ("client_id", "client", "first_ns", "last_ns", "left_ns", "assignments", "last_evidence", "clients",
                 "named_by")

    def __init__(self) -> None:
        self.client_id = self.client = None
        self.named_by = None  # (client, client id) of the LeaveGroup that named it (the smallest)
        self.first_ns = self.last_ns = self.left_ns = None
        self.assignments = Kept(MAX_ASSIGNMENTS)  # key (-ts, generation, assignment): the newest
        self.last_evidence = None  # its latest request
        self.clients: set[str] = set()  # the connections of its own requests (a LeaveGroup may be a tool's)

    def seen_at(self, clients) -> None:
        self.clients |= set(clients)
        if len(self.clients) > MAX_CLIENTS:
            self.clients = set(sorted(self.clients)[:MAX_CLIENTS])

    def merge(self, other: Member) -> None:
        if other.last_evidence is not None and (self.last_evidence is None or other.last_evidence > self.last_evidence):
            self.last_evidence = other.last_evidence
        self.client_id = choose(self.client_id, other.client_id)
        self.client = choose(self.client, other.client)
        self.named_by = choose(self.named_by, other.named_by)
        self.first_ns = first_ns(self.first_ns, other.first_ns)
        self.last_ns = last_ns(self.last_ns, other.last_ns)
        self.left_ns = first_ns(self.left_ns, other.left_ns)
        self.assignments.merge(other.assignments)
        self.seen_at(other.clients)

    def identity(self) -> tuple:
        """(client id, client): its own requests', else the LeaveGroup's that named it."""
        if self.client is not None or self.named_by is None:
            return self.client_id, self.client
        return self.named_by[1] or None, self.named_by[0]

    def assignment_at(self, generation: int, exact: bool):
        """The assignment of this member in `generation` (None when none is known)."""
        for (neg_ts, gen, parts), _ in self.assignments.items:  # newest first
            if gen == generation or (not exact and gen is not None and gen <= generation):
                return parts
        return None


class Generation:
    __slots__ = ("start_ns", "leader", "join_ns", "sync_ns", "members", "evidence", "protocol")

    def __init__(self) -> None:
        self.start_ns = self.join_ns = self.sync_ns = None
        self.leader = None
        self.protocol = None  # the JoinGroup answer's ProtocolName (the assignor)
        self.evidence = None  # the first answer that gave this generation
        self.members: dict[str, list] = Capped()  # member -> [first ns, last ns] seen in this generation

    def seen(self, member: str, ts: int) -> None:
        have = self.members.get(member)
        if have is None:
            self.members[member] = [ts, ts]
            keep_smallest(self.members, MAX_MEMBERS)
        else:
            have[0], have[1] = min(have[0], ts), max(have[1], ts)

    def merge(self, other: Generation) -> None:
        self.start_ns = first_ns(self.start_ns, other.start_ns)
        self.join_ns = first_ns(self.join_ns, other.join_ns)
        self.sync_ns = last_ns(self.sync_ns, other.sync_ns)
        self.leader = choose(self.leader, other.leader)
        self.evidence = choose(self.evidence, other.evidence)
        self.protocol = choose(self.protocol, other.protocol)
        for member, (a, b) in other.members.items():
            self.seen(member, a)
            self.seen(member, b)

    @property
    def first_ns(self) -> int | None:
        starts = [a for a, _ in self.members.values()]
        return first_ns(self.start_ns, min(starts) if starts else None)


class Group:
    __slots__ = ("protocols", "coordinators", "members", "generations", "commits", "rebalancing", "stuck", "waits")

    def __init__(self) -> None:
        self.protocols: dict[str, int] = {}
        self.coordinators: dict[str, int] = {}
        self.members: dict[str, Member] = Capped()
        self.generations: dict[int, Generation] = {}
        self.commits: dict[tuple, tuple] = Capped()  # (topic, partition) -> (ts, offset)
        self.rebalancing: list = [0, None, None]  # REBALANCE_IN_PROGRESS answers: count, first, last
        self.stuck = Kept(MAX_STUCK)  # JoinGroups not answered in their rebalance timeout
        self.waits = Kept(MAX_WAITS)  # JoinGroups not answered, or answered a second or more later

    def member(self, member_id: str) -> Member | None:
        have = self.members.get(member_id)
        if have is None:
            have = self.members[member_id] = Member()
            if len(self.members) > MAX_MEMBERS:
                keep_smallest(self.members, MAX_MEMBERS)
                return self.members.get(member_id)
        return have

    def generation(self, generation) -> Generation | None:
        if not isinstance(generation, int) or generation < 0:
            return None
        have = self.generations.get(generation)
        if have is None:
            have = self.generations[generation] = Generation()
            if len(self.generations) > MAX_GENERATIONS:
                for old in sorted(self.generations)[:-MAX_GENERATIONS]:
                    del self.generations[old]
                return self.generations.get(generation)
        return have

    def commit(self, key: tuple, value: tuple) -> None:
        have = self.commits.get(key)
        if have is None or value > have:
            self.commits[key] = value
            keep_smallest(self.commits, MAX_COMMITS)

    def merge(self, other: Group) -> None:
        for mine, theirs in ((self.protocols, other.protocols), (self.coordinators, other.coordinators)):
            for key, n in theirs.items():
                _count(mine, key, n)
        for member_id, member in other.members.items():
            have = self.member(member_id)
            if have is not None:
                have.merge(member)
        for number, generation in other.generations.items():
            have = self.generation(number)
            if have is not None:
                have.merge(generation)
        for key, value in other.commits.items():
            self.commit(key, value)
        self.rebalancing = [self.rebalancing[0] + other.rebalancing[0],
                            first_ns(self.rebalancing[1], other.rebalancing[1]),
                            last_ns(self.rebalancing[2], other.rebalancing[2])]
        self.stuck.merge(other.stuck)
        self.waits.merge(other.waits)

    @property
    def protocol(self) -> str | None:
        if not self.protocols:
            return None
        return min(self.protocols.items(), key=lambda kv: (-kv[1], kv[0]))[0]

    @property
    def coordinator(self) -> str | None:
        if not self.coordinators:
            return None
        return min(self.coordinators.items(), key=lambda kv: (-kv[1], kv[0]))[0]


class GroupsState:
    def __init__(self) -> None:
        self.groups: dict[str, Group] = Capped()

    def group(self, group_id: str) -> Group | None:
        have = self.groups.get(group_id)
        if have is None:
            have = self.groups[group_id] = Group()
            if len(self.groups) > MAX_GROUPS:
                keep_smallest(self.groups, MAX_GROUPS)
                return self.groups.get(group_id)
        return have

    def add(self, ob: tuple) -> None:
        group = self.group(ob[1])
        if group is None:
            return
        tag = ob[0]
        if tag == T.MEMBER:
            _, _, member_id, ts, client_id, client, protocol, ev = ob
            member = group.member(member_id)
            if member is not None:
                if member.last_evidence is None or ev > member.last_evidence:
                    member.last_evidence = ev
                if ev[4] != "LeaveGroup":
                    member.client_id = choose(member.client_id, client_id)
                    member.client = choose(member.client, client)
                    if client:
                        member.seen_at((client,))
                else:  # a LeaveGroup may be a tool's, naming the member from elsewhere
                    member.named_by = choose(member.named_by, (client or "", client_id or ""))
                member.first_ns, member.last_ns = first_ns(member.first_ns, ts), last_ns(member.last_ns, ts)
            if protocol:
                _count(group.protocols, protocol)
        elif tag == T.COORDINATOR:
            _count(group.coordinators, ob[2])
        elif tag in (T.IN_GENERATION, T.GENERATION, T.JOIN, T.SYNC):
            self._generation(group, ob)
        elif tag == T.ASSIGNMENT:
            member = group.member(ob[2])
            if member is not None:
                member.assignments.add((-ob[4], ob[3], ob[5]), ob[6])
        elif tag == T.LEFT:
            member = group.member(ob[2])
            if member is not None:
                member.left_ns = first_ns(member.left_ns, ob[3])
        elif tag == T.OFFSET_COMMIT:
            group.commit((ob[2], ob[3]), (ob[4], ob[5]))
        elif tag == T.REBALANCING:
            group.rebalancing = [group.rebalancing[0] + 1, first_ns(group.rebalancing[1], ob[2]),
                                 last_ns(group.rebalancing[2], ob[2])]
        elif tag == T.JOIN_STUCK:
            group.stuck.add((ob[5], ob[4], ob[8][3]), ob[2:])
        elif tag == T.JOIN_WAIT:
            group.waits.add((ob[6] is not None, ob[5], ob[4] or "", ob[8][3]), ob[2:])

    @staticmethod
    def _generation(group: Group, ob: tuple) -> None:
        generation = group.generation(ob[2])
        if generation is None:
            return
        tag = ob[0]
        if tag == T.IN_GENERATION:
            if ob[3]:
                generation.seen(ob[3], ob[4])
        elif tag == T.GENERATION:
            generation.start_ns = first_ns(generation.start_ns, ob[3])
            generation.leader = choose(generation.leader, ob[4])
            generation.evidence = choose(generation.evidence, ob[5])
            generation.protocol = choose(generation.protocol, ob[6])
        elif tag == T.JOIN:
            generation.join_ns = first_ns(generation.join_ns, ob[3])
        else:
            generation.sync_ns = last_ns(generation.sync_ns, ob[3])

    def merge(self, other: GroupsState) -> None:
        for group_id, group in other.groups.items():
            have = self.group(group_id)
            if have is not None:
                have.merge(group)

    def document(self, names: dict[str, str]) -> dict:
        return {group_id: group_document(group, names) for group_id, group in sorted(self.groups.items())}


# ---- reading a group ---------------------------------------------------------------------------


def timeline(group: Group) -> list[tuple[int, Generation, int | None]]:
    """(number, generation, start ns) in order, generations with no known time left out."""
    out = []
    for number in sorted(group.generations):
        generation = group.generations[number]
        start = generation.first_ns
        if start is not None:
            out.append((number, generation, start))
    return out


def expired(group: Group) -> dict[str, tuple[int, int]]:
    """member id -> (its last generation, the later generation that started without it) for the
    members that vanished without leaving (see the module docstring)."""
    gens = timeline(group)
    out = {}
    for i, (number, generation, start) in enumerate(gens):
        for member_id in generation.members:
            member = group.members.get(member_id)
            if member is None or member.left_ns is not None or member_id in out:
                continue
            later = [(n, g, s) for n, g, s in gens[i + 1:] if member_id not in g.members]
            if any(member_id in g.members for _, g, _ in gens[i + 1:]):
                continue  # it is in a later generation: not its last one
            for n, g, s in later:
                if member.last_ns is not None and s > member.last_ns and not _rejoined(group, member, g):
                    out[member_id] = (number, n)
                    break
    return out


def _rejoined(group: Group, member: Member, generation: Generation) -> bool:
    """Does a member of `generation` use the connection the vanished member used (it rejoined
    under a new member id)?"""
    return any((group.members.get(m) or Member()).client == member.client for m in generation.members)


def rebalance_ns(generation: Generation) -> int:
    """How long the group was without a stable assignment before `generation`: its first JoinGroup to
    its last SyncGroup answer (classic), or its first to its last member reaching the epoch (KIP-848,
    share); 0 when the wire does not show both ends."""
    starts = [a for a, _ in generation.members.values()]
    begin = generation.join_ns if generation.join_ns is not None else generation.start_ns
    done = generation.sync_ns if generation.sync_ns is not None else (max(starts) if starts else None)
    if begin is None or done is None or done < begin:
        return 0
    return done - begin


def rebalance_s(generation: Generation) -> float:
    """rebalance_ns in seconds (what the deprecated `rebalance_s` and `rebalancing_s` keys say)."""
    return rebalance_ns(generation) / NS


def assignment_of(group: Group, member_id: str, number: int) -> tuple | None:
    member = group.members.get(member_id)
    if member is None:
        return None
    return member.assignment_at(number, exact=group.protocol == "classic")


def _named(assignment: tuple | None, names: dict[str, str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, parts in assignment or ():
        out.setdefault(names.get(topic, topic), []).extend(parts)
    return {topic: sorted(set(parts)) for topic, parts in sorted(out.items())}


def group_document(group: Group, names: dict[str, str]) -> dict:
    gens = timeline(group)
    gone = expired(group)
    generations = []
    for i, (number, generation, start) in enumerate(gens):
        members = []
        for member_id in sorted(generation.members):
            member = group.members.get(member_id) or Member()
            client_id, client = member.identity()
            members.append({"member_id": member_id, "client_id": client_id, "client": client,
                            "assignment": _named(assignment_of(group, member_id, number), names)})
        before = set(gens[i - 1][1].members) if i else None
        end = gens[i + 1][2] if i + 1 < len(gens) else None
        generations.append({"generation": number, "start_ts_ns": start, "end_ts_ns": end,
                            "start": _s(start), "end": _s(end),  # deprecated: epoch s
                            "leader": generation.leader, "protocol_name": generation.protocol,
                            "rebalance_ms": ms(rebalance_ns(generation)),
                            "rebalance_s": round(rebalance_s(generation), 3),  # deprecated
                            "joined": None if before is None else sorted(set(generation.members) - before),
                            "gone": None if before is None else sorted(before - set(generation.members)),
                            "members": members})
    members = {}
    for member_id, member in sorted(group.members.items()):
        left = "leave" if member.left_ns is not None else "expired" if member_id in gone else None
        client_id, client = member.identity()
        members[member_id] = {"client_id": client_id, "client": client, "first_seen_ts_ns": member.first_ns,
                              "last_seen_ts_ns": member.last_ns, "left": left,
                              "first_seen": _s(member.first_ns), "last_seen": _s(member.last_ns)}  # (deprecated)
    latest: dict[tuple, tuple] = {}  # a partition committed under its id and its name counts once
    for (topic, partition), value in group.commits.items():
        key = (names.get(topic, topic), partition)
        if key not in latest or value > latest[key]:
            latest[key] = value
    commits: dict[str, dict[str, int]] = {}
    for (topic, partition), (_, offset) in sorted(latest.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        commits.setdefault(topic, {})[str(partition)] = offset
    return {"protocol": group.protocol, "coordinator": group.coordinator, "generations": generations,
            "members": members, "commits": commits, "rebalance_in_progress": group.rebalancing[0]}
