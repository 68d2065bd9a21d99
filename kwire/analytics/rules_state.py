"""What the protocol rules (kwire.analytics.rules) remember across exchanges: bounded, merged exactly.

`RulesState` is fed the observations of kwire.analytics.rules_read (`add`). It keeps:

- broken: per (rule, side, api, version) a Tally of the exchanges one exchange proves it of;
- connections (the first MAX_CONNECTIONS by key, (client, broker, connection id)): the ranges its
  ApiVersions answer advertised and when, and its first MAX_WINDOWS answers with a throttle (when each
  was answered, its request's time, the throttle, the api and version). What every exchange's row
  shows (per (api key, version) used, the first and last request and a count; the first MAX_ORDERED
  answered requests by request time) is kept with the connection's traffic, where the row is read in C
  already (kwire.analytics.traffic);
- partitions (the first MAX_PARTITIONS by (broker, topic, partition)): the first Fetch high watermark
  and the highest (each with the first time it was answered), and the first MAX_LATEST ListOffsets
  latest answers (ts, offset, evidence);
- history: what the rules over topics, committed offsets and groups remember (kwire.analytics.rules_history);
- closes: the first MAX_CLOSES requests left unanswered by a connection its broker closed first, by the time it
  closed (closed_instead_of_answering's candidates).

Every table keeps the smallest keys (kwire.native.mergeable), so `kwire stats`, `--jobs` and
`kwire spark` remember the same; responses_out_of_order says how many connections it checked in part.
"""

from __future__ import annotations

from kwire.analytics import tags as T
from kwire.analytics.rules_history import History
from kwire.native.mergeable import Capped, Kept, choose, keep_smallest
from kwire.analytics.rules import MAX_CLOSES, MAX_WINDOWS
from kwire.analytics.traffic import Tally

MAX_CONNECTIONS = 4096
MAX_PARTITIONS = 4096
MAX_LATEST = 16


class RuleConnection:
    """What a connection's ApiVersions answer advertised, and its throttled answers (the versions it used and the
    order of its answers are kept with the connection's traffic: kwire.analytics.traffic.Connection, `used`,
    `order`, `answers`)."""

    __slots__ = ("advertised", "windows", "throttled")

    def __init__(self) -> None:
        self.advertised = None  # (answered ns, ranges, evidence) of the first ApiVersions answered ErrorCode 0
        # (answered ns, correlation id) -> (request ns, throttle ms, version, evidence)
        self.windows = Kept(MAX_WINDOWS)
        self.throttled = 0  # answers with a throttle (those past the windows kept say it was checked in part)

    def merge(self, other: RuleConnection) -> None:
        if other.advertised is not None and (self.advertised is None or other.advertised < self.advertised):
            self.advertised = other.advertised
        self.windows.merge(other.windows)
        self.throttled += other.throttled


class Marks:
    """A partition's Fetch high watermarks (first, highest) and ListOffsets latest answers on one broker."""

    __slots__ = ("first", "highest", "latest")

    def __init__(self) -> None:
        self.first = None  # (ts, hw, evidence) of the first Fetch answer
        self.highest = None  # (hw, -ts of its first answer, evidence): the highest, first seen
        self.latest = Kept(MAX_LATEST)  # (ts, evidence key) -> (offset, evidence)

    def mark(self, ts: int, hw: int, ev: tuple) -> None:
        first = self.first
        if first is None or ts < first[0]:
            self.first = (ts, hw, ev)
        highest = self.highest
        if highest is None or hw > highest[0] or (hw == highest[0] and -ts > highest[1]):
            self.highest = (hw, -ts, ev)

    def merge(self, other: Marks) -> None:
        self.first = choose(self.first, other.first)
        if other.highest is not None and (self.highest is None or other.highest[:2] > self.highest[:2]):
            self.highest = other.highest
        self.latest.merge(other.latest)


class RulesState:
    __slots__ = ("broken", "connections", "partitions", "history", "closes")

    def __init__(self) -> None:
        self.broken: dict[tuple, Tally] = {}
        self.connections: dict[tuple, RuleConnection] = Capped()
        self.partitions: dict[tuple, Marks] = Capped()
        self.history = History()
        # (closed ns, evidence key) -> (api key, version, decoded, evidence, connection key)
        self.closes = Kept(MAX_CLOSES)

    @staticmethod
    def _table(table: dict, key: tuple, make, limit: int):
        value = table[key] = make()
        if len(table) > limit:
            keep_smallest(table, limit)
            return table.get(key)
        return value

    def add(self, ob: tuple, row) -> None:
        tag = ob[0]
        if tag == T.RULE_BROKEN:
            _, rule, side, api, version, client, broker, ev, detail = ob
            self.broken.setdefault((rule, side, api, version), Tally()).add(
                1, ev, (client, broker, row.get("connection_id")), detail)
        elif tag == T.ADVERTISED:
            conn = self._connection((ob[1], ob[2], row.get("connection_id")))
            if conn is not None and (conn.advertised is None or ob[3] < conn.advertised[0]):
                conn.advertised = (ob[3], ob[4], ob[5])
        elif tag == T.THROTTLE_WINDOW:
            _, request_ns, answered, throttle, version, ev = ob
            conn = self._connection((ev[1], ev[2], row.get("connection_id")))
            if conn is not None:
                conn.throttled += 1
                conn.windows.add((answered, ev[3]), (request_ns, throttle, version, ev))
        elif tag == T.HIGH_WATERMARK:
            _, broker, ts, marks, ev = ob
            for topic, partition, hw in marks:
                key = (broker, topic, partition)
                part = self._marks(key)
                if part is not None:
                    part.mark(ts, hw, ev)
        elif tag == T.RULE_OFFSET:
            self.history.add_offsets(ob)
        elif tag == T.RULE_TOPIC:
            self.history.add_topics(ob)
        elif tag == T.RULE_GROUP:
            self.history.add_groups(ob)
        elif tag == T.BROKER_CLOSED:
            _, closed, api_key, version, decoded, ev = ob
            self.closes.add((closed, ev[:4]), (api_key, version, decoded, ev, (ev[1], ev[2], row.get("connection_id"))))
        elif tag == T.LATEST_OFFSET:
            _, broker, ts, offsets, ev = ob
            for topic, partition, offset in offsets:
                part = self._marks((broker, topic, partition))
                if part is not None:
                    part.latest.add((ts, ev[:4]), (offset, ev))

    def _connection(self, key: tuple) -> RuleConnection | None:
        conn = self.connections.get(key)
        return conn if conn is not None else self._table(self.connections, key, RuleConnection, MAX_CONNECTIONS)

    def _marks(self, key: tuple) -> Marks | None:
        part = self.partitions.get(key)
        return part if part is not None else self._table(self.partitions, key, Marks, MAX_PARTITIONS)

    def merge(self, other: RulesState) -> None:
        self.history.merge(other.history)
        self.closes.merge(other.closes)
        for key, tally in other.broken.items():
            self.broken.setdefault(key, Tally()).merge(tally)
        for table, theirs, make, limit in ((self.connections, other.connections, RuleConnection, MAX_CONNECTIONS),
                                           (self.partitions, other.partitions, Marks, MAX_PARTITIONS)):
            for key, value in theirs.items():
                mine = table.get(key)
                if mine is None:
                    mine = table[key] = make()
                mine.merge(value)
            keep_smallest(table, limit)
