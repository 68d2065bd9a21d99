"""What the protocol rules (kwire.analytics.rules) remember across exchanges: bounded, merged exactly.

`RulesState` is fed every exchange's row (`add_row`: the versions a connection used, the order of its
answers) and the observations of kwire.analytics.rules_read (`add`). It keeps:

- broken: per (rule, side, api, version) a Tally of the exchanges one exchange proves it of;
- connections (the first MAX_CONNECTIONS by key, (client, broker, connection id)): the ranges its
  ApiVersions answer advertised and when; per (api key, version) used, the first and last request
  (ts and evidence) and a count (MAX_USED pairs); the first MAX_ORDERED answered requests by request
  time (request ts, answer ts, evidence) for responses_out_of_order;
- partitions (the first MAX_PARTITIONS by (broker, topic, partition)): the first Fetch high watermark
  and the highest (each with the first time it was answered), and the first MAX_LATEST ListOffsets
  latest answers (ts, offset, evidence).

Every table keeps the smallest keys (kwire.analytics.mergeable), so `kwire stats`, `--jobs` and
`kwire spark` remember the same; responses_out_of_order says how many connections it checked in part.
"""

from __future__ import annotations

from kwire.analytics import tags as T
from kwire.analytics.mergeable import Capped, Kept, choose, keep_smallest
from kwire.analytics.row import row_of
from kwire.analytics.rules import MAX_ORDERED
from kwire.analytics.traffic import Tally, evidence_of
from kwire.model import PAIRED

MAX_CONNECTIONS = 4096
MAX_USED = 256
MAX_PARTITIONS = 4096
MAX_LATEST = 16


class RuleConnection:
    __slots__ = ("advertised", "used", "order", "answered")

    def __init__(self) -> None:
        self.advertised = None  # (answered ns, ranges, evidence) of the first ApiVersions answered ErrorCode 0
        self.used: dict[tuple, list] = {}  # (api key, version) -> [first ts, first ev, last ts, last ev, count]
        self.order = Kept(MAX_ORDERED)  # (request ts, correlation id) -> (answer ts, evidence)
        self.answered = 0

    def use(self, pair: tuple, ts: int, ev: tuple) -> None:
        have = self.used.get(pair)
        if have is None:
            if len(self.used) < MAX_USED:
                self.used[pair] = [ts, ev, ts, ev, 1]
            return
        have[4] += 1
        if ts < have[0]:
            have[0], have[1] = ts, ev
        elif ts > have[2]:
            have[2], have[3] = ts, ev

    def merge(self, other: RuleConnection) -> None:
        if other.advertised is not None and (self.advertised is None or other.advertised < self.advertised):
            self.advertised = other.advertised
        for pair, theirs in other.used.items():
            have = self.used.get(pair)
            if have is None:
                if len(self.used) < MAX_USED:
                    self.used[pair] = list(theirs)
                continue
            have[4] += theirs[4]
            if theirs[0] < have[0]:
                have[0], have[1] = theirs[0], theirs[1]
            if theirs[2] > have[2]:
                have[2], have[3] = theirs[2], theirs[3]
        self.order.merge(other.order)
        self.answered += other.answered


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
    __slots__ = ("broken", "connections", "partitions")

    def __init__(self) -> None:
        self.broken: dict[tuple, Tally] = {}
        self.connections: dict[tuple, RuleConnection] = Capped()
        self.partitions: dict[tuple, Marks] = Capped()

    def add_row(self, given) -> None:
        """An exchange's row (kwire.analytics.row, or a dict of its names, made into one)."""
        row = row_of(given)
        key = (row.client, row.broker, row.connection_id)
        conn = self.connections.get(key)
        if conn is None:
            conn = self._table(self.connections, key, RuleConnection, MAX_CONNECTIONS)
            if conn is None:
                return
        ts = row.ts_ns
        ev = row.evidence or evidence_of(row)
        version = row.api_version
        if version is not None and row.api_key is not None:
            pair = (row.api_key, version)
            have = conn.used.get(pair)
            if have is None:
                conn.use(pair, ts, ev)
            else:  # RuleConnection.use, inline: once per exchange
                have[4] += 1
                if ts > have[2]:
                    have[2], have[3] = ts, ev
                elif ts < have[0]:
                    have[0], have[1] = ts, ev
        answered = row.response_ts_ns
        if row.status == PAIRED and answered is not None:
            conn.answered += 1
            order = conn.order
            if len(order.items) < MAX_ORDERED or (ts, row.correlation_id) < order.items[-1][0]:
                order.add((ts, row.correlation_id), (answered, ev))

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
            key = (ob[1], ob[2], row.get("connection_id"))
            conn = self.connections.get(key) or self._table(self.connections, key, RuleConnection, MAX_CONNECTIONS)
            if conn is not None and (conn.advertised is None or ob[3] < conn.advertised[0]):
                conn.advertised = (ob[3], ob[4], ob[5])
        elif tag == T.HIGH_WATERMARK:
            _, broker, ts, marks, ev = ob
            table = self.partitions
            for topic, partition, hw in marks:  # Marks.mark, inline: once per partition of every Fetch
                key = (broker, topic, partition)
                part = table.get(key)
                if part is None:
                    part = self._marks(key)
                    if part is None:
                        continue
                first = part.first
                if first is None or ts < first[0]:
                    part.first = (ts, hw, ev)
                highest = part.highest
                if highest is None or hw > highest[0] or (hw == highest[0] and -ts > highest[1]):
                    part.highest = (hw, -ts, ev)
        elif tag == T.LATEST_OFFSET:
            _, broker, ts, offsets, ev = ob
            for topic, partition, offset in offsets:
                part = self._marks((broker, topic, partition))
                if part is not None:
                    part.latest.add((ts, ev[:4]), (offset, ev))

    def _marks(self, key: tuple) -> Marks | None:
        part = self.partitions.get(key)
        return part if part is not None else self._table(self.partitions, key, Marks, MAX_PARTITIONS)

    def merge(self, other: RulesState) -> None:
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
