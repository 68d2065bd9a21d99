"""What the rules over topics, committed offsets and groups remember (kwire.analytics.rules: validate_only_created,
offset_metadata_not_kept, consumer_group_describe_classic): bounded, merged exactly.

Fed the observations of kwire.analytics.rules_read_admin by kwire.analytics.rules_state (`RulesState.add`):

- topics (the first MAX_TOPICS by name): the first MAX_EVENTS validate-only creates answered ErrorCode 0 and
  answers saying the topic exists, by time; the first create without validateOnly and the first Metadata
  request that may create it;
- offsets (the first MAX_OFFSETS by (group, topic, partition)): the first MAX_COMMITS commits and MAX_EVENTS
  OffsetFetch answers, by request time;
- groups (the first MAX_GROUPS by group id): the first MAX_EVENTS ListGroups types, ConsumerGroupHeartbeat joins
  and ConsumerGroupDescribe answers, by time.

Each list keeps the smallest keys (kwire.native.mergeable.Kept), so what was dropped came after what was kept:
the findings (kwire.analytics.findings_rules_admin) stay silent where a dropped item could have been between.
"""

from __future__ import annotations

from kwire.native.mergeable import Capped, Kept, choose, keep_smallest

MAX_TOPICS = MAX_OFFSETS = MAX_GROUPS = 4096
MAX_EVENTS = 8
MAX_COMMITS = 16


class TopicHistory:
    __slots__ = ("validated", "exists", "created", "auto")

    def __init__(self) -> None:
        self.validated = Kept(MAX_EVENTS)  # (answered ns, evidence key) -> evidence
        self.exists = Kept(MAX_EVENTS)  # (asked ns, evidence key) -> (answered ns, evidence)
        self.created = None  # (asked ns, evidence) of the first CreateTopics without validateOnly
        self.auto = None  # (asked ns, evidence) of the first Metadata request that may create it

    def merge(self, other: TopicHistory) -> None:
        self.validated.merge(other.validated)
        self.exists.merge(other.exists)
        self.created = choose(self.created, other.created)
        self.auto = choose(self.auto, other.auto)


class OffsetHistory:
    __slots__ = ("commits", "reads")

    def __init__(self) -> None:
        self.commits = Kept(MAX_COMMITS)  # (asked ns, evidence key) -> (answered ns or None, what, offset, metadata, ev)
        self.reads = Kept(MAX_EVENTS)  # (asked ns, evidence key) -> (answered ns, offset, metadata, evidence)

    def merge(self, other: OffsetHistory) -> None:
        self.commits.merge(other.commits)
        self.reads.merge(other.reads)


class GroupHistory:
    __slots__ = ("said", "joins", "described")

    def __init__(self) -> None:
        self.said = Kept(MAX_EVENTS)  # (answered ns, evidence key) -> (type, asked ns, evidence)
        self.joins = Kept(MAX_EVENTS)  # (asked ns, evidence key) -> evidence
        self.described = Kept(MAX_EVENTS)  # (asked ns, evidence key) -> (answered ns, GroupState, evidence)

    def merge(self, other: GroupHistory) -> None:
        self.said.merge(other.said)
        self.joins.merge(other.joins)
        self.described.merge(other.described)


TABLES = (("topics", TopicHistory, MAX_TOPICS), ("offsets", OffsetHistory, MAX_OFFSETS),
          ("groups", GroupHistory, MAX_GROUPS))


class History:
    """The three tables; `add_topics`, `add_offsets`, `add_groups` take one observation each."""

    __slots__ = ("topics", "offsets", "groups")

    def __init__(self) -> None:
        self.topics: dict[str, TopicHistory] = Capped()
        self.offsets: dict[tuple, OffsetHistory] = Capped()
        self.groups: dict[str, GroupHistory] = Capped()

    @staticmethod
    def _entry(table: dict, key, make, limit: int):
        value = table.get(key)
        if value is None:
            value = table[key] = make()
            if len(table) > limit:
                keep_smallest(table, limit)
                return table.get(key)
        return value

    def add_topics(self, ob: tuple) -> None:
        _, what, asked, answered, names, ev = ob
        for name in names:
            topic = self._entry(self.topics, name, TopicHistory, MAX_TOPICS)
            if topic is None:
                continue
            if what == "validated":
                topic.validated.add((answered, ev[:4]), ev)
            elif what == "exists":
                topic.exists.add((asked, ev[:4]), (answered, ev))
            elif what == "created":
                topic.created = choose(topic.created, (asked, ev))
            else:
                topic.auto = choose(topic.auto, (asked, ev))

    def add_offsets(self, ob: tuple) -> None:
        _, what, group, asked, answered, items, ev = ob
        for topic, partition, offset, metadata in items:
            part = self._entry(self.offsets, (group, topic, partition), OffsetHistory, MAX_OFFSETS)
            if part is None:
                continue
            if what == "read":
                part.reads.add((asked, ev[:4]), (answered, offset, metadata, ev))
            else:
                part.commits.add((asked, ev[:4]), (answered, what, offset, metadata, ev))

    def add_groups(self, ob: tuple) -> None:
        _, what, asked, answered, items, ev = ob
        for group, value in items:
            entry = self._entry(self.groups, group, GroupHistory, MAX_GROUPS)
            if entry is None:
                continue
            if what == "said":
                entry.said.add((answered, ev[:4]), (value, asked, ev))
            elif what == "joined":
                entry.joins.add((asked, ev[:4]), ev)
            else:
                entry.described.add((asked, ev[:4]), (answered, value, ev))

    def merge(self, other: History) -> None:
        for name, make, limit in TABLES:
            table = getattr(self, name)
            for key, value in getattr(other, name).items():
                mine = table.get(key)
                if mine is None:
                    mine = table[key] = make()
                mine.merge(value)
            keep_smallest(table, limit)
