"""What the findings need of the traffic at large: connections, errors, reactions, latency over time.

`TrafficState` is fed one exchange row (kwire.native.exchange_facts) and its observations at a time
(`add_row`, `add`) and merges exactly (kwire.native.mergeable). It keeps:

- connections: per TCP connection (client and broker endpoints, and kwire's connection id: a busy
  client reuses its local ports, and two connections on one pair of endpoints are two), its first
  and last times, exchanges, the last exchange, the latest request that was answered, the client
  id and the client software its ApiVersions request named, whether it carried a Fetch
  (MAX_CONNECTIONS, the smallest kept);
- errors: per (api, error name) a count, the client ids (MAX_IDS), the first MAX_EVIDENCE
  exchanges, and per client (host, client id) the moments they came (Instants);
- activity: per client (host, client id) and api, the moments it sent a request of that api, for
  the apis that say what a client did after an error (every api but the steady ones: Fetch,
  ShareFetch, Produce, Heartbeat, ConsumerGroupHeartbeat, ShareGroupHeartbeat; their rejoins
  count as JoinGroup);
- unanswered: the first MAX_UNANSWERED requests never answered (acks=0 Produce aside);
- latency: per broker, histograms over time of the requests that are not long polls (Fetch,
  ShareFetch, JoinGroup and SyncGroup wait by design): a kwire.native.caps FoldedTable, the
  CAPS["broker_latency"] smallest brokers kept, the others' histograms merged into one (the baseline
  of slow_broker still counts them; a broker folded is not looked at on its own);
- throttles and protocol violations as observed; the first MAX_SILENCING answers whose throttle would
  silence a client that honours it (`silencing`, kwire.analytics.findings_silenced).
"""

from __future__ import annotations

from kwire.native.caps import FoldedTable
from kwire.native.mergeable import (Capped, Instants, Kept, TimeHistograms, capped_get, choose, first_ns,
                                       keep_smallest, last_ns)
from kwire.fields import reduce_by_fields, set_fields
from kwire.native.exchange_row import row_of
from kwire.analytics.rules import MAX_ORDERED  # answered requests per connection kept for responses_out_of_order
from kwire.model import NO_RESPONSE, PAIRED
from kwire.analytics import tags as T

MAX_CONNECTIONS = 65536
# What a connection's exchanges show the protocol rules (kwire.analytics.rules, read by kwire.analytics.findings_rules):
# kept here, where every exchange's row is read in C already (a second state read per exchange, in Python, cost
# `kwire stats -j 0` 7 % of its CPU on many small exchanges).
MAX_USED = 256     # (api key, version) pairs a connection used, kept with their first and last request
MAX_CLIENTS = 1024
MAX_IDS = 20
MAX_EVIDENCE = 10
MAX_UNANSWERED = 4096
MAX_VIOLATION_CONNECTIONS = 64
MAX_SILENCING = 64
STEADY_APIS = frozenset({"Fetch", "ShareFetch", "Produce", "Heartbeat", "ConsumerGroupHeartbeat",
                         "ShareGroupHeartbeat"})
LONG_POLLS = frozenset({"Fetch", "ShareFetch", "JoinGroup", "SyncGroup"})


_HOSTS: dict[str, str] = {}


def host_of(endpoint: str) -> str:
    """The host of an "ip:port" endpoint (cached: every exchange asks for its client's)."""
    host = _HOSTS.get(endpoint)
    if host is None:
        host = endpoint.rsplit(":", 1)[0]
        if len(_HOSTS) >= 65536:  # endpoints come off the wire: bounded
            _HOSTS.clear()
        _HOSTS[endpoint] = host
    return host


def evidence_of(row: dict) -> tuple:
    """(ts_ns, client, broker, correlation_id, api) of a row: its "evidence", made by
    kwire.native.exchange_facts.exchange_row (or made here for a row made elsewhere)."""
    return row.get("evidence") or (row["ts_ns"], row["client"], row["broker"], row["correlation_id"], row["api"])


def _last_of(row: dict, end: int) -> tuple:
    """A Connection's `last`: (end ns, ts ns, correlation id, api, status) of an exchange."""
    return (end, row["ts_ns"], row["correlation_id"], row["api"], row["status"])


class Connection:
    __slots__ = ("first_ns", "last_ns", "exchanges", "last", "answered_ns", "client_id", "software", "fetched",
                 "used", "order", "answers")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.first_ns = self.last_ns = self.answered_ns = None
        self.exchanges = 0
        self.last = None  # (end ns, ts ns, correlation id, api, status) of the latest exchange
        self.client_id = self.software = None
        self.fetched = False  # it carried a Fetch (kwire.analytics.changes: a member that fetches is no tool's)
        self.used: dict[tuple, list] = {}  # (api key, version) -> [first ts, first ev, last ts, last ev, count]
        self.order = Kept(MAX_ORDERED)  # (request ts, correlation id) -> (answer ts, evidence): the first answered
        self.answers = 0  # exchanges answered (those past the order's sample say it was checked in part)

    def merge(self, other: Connection) -> None:
        self.first_ns = first_ns(self.first_ns, other.first_ns)
        self.last_ns = last_ns(self.last_ns, other.last_ns)
        self.answered_ns = last_ns(self.answered_ns, other.answered_ns)
        self.exchanges += other.exchanges
        if other.last is not None and (self.last is None or other.last > self.last):
            self.last = other.last
        self.client_id = choose(self.client_id, other.client_id)
        self.software = choose(self.software, other.software)
        self.fetched = self.fetched or other.fetched
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
        self.answers += other.answers


class ErrorLog:
    __slots__ = ("count", "first_ns", "last_ns", "client_ids", "evidence", "moments")

    def __init__(self) -> None:
        self.count = 0
        self.first_ns = self.last_ns = None
        self.client_ids: set = set()
        self.evidence = Kept(MAX_EVIDENCE)
        self.moments: dict[tuple, Instants] = Capped()  # (host, client id) -> when

    def merge(self, other: ErrorLog) -> None:
        self.count += other.count
        self.first_ns = first_ns(self.first_ns, other.first_ns)
        self.last_ns = last_ns(self.last_ns, other.last_ns)
        self.client_ids = set(sorted(self.client_ids | other.client_ids, key=str)[:MAX_IDS])
        self.evidence.merge(other.evidence)
        for who, moments in other.moments.items():
            self.moments.setdefault(who, Instants()).merge(moments)
        keep_smallest(self.moments, MAX_CLIENTS)


class Tally:
    """A count, a total, first and last times and the first evidence (throttles, violations)."""

    __slots__ = ("count", "total", "first_ns", "last_ns", "evidence", "connections", "note")

    def __init__(self) -> None:
        self.count = self.total = 0
        self.first_ns = self.last_ns = None
        self.evidence = Kept(MAX_EVIDENCE)
        self.connections: set = set()
        self.note = None  # (evidence key, text) of the first item that came with a note

    def add(self, amount: int, ev: tuple, connection=None, note: str | None = None) -> None:
        if note is not None:
            self.note = choose(self.note, (ev[:4], note))
        self.count += 1
        self.total += amount
        self.first_ns, self.last_ns = first_ns(self.first_ns, ev[0]), last_ns(self.last_ns, ev[0])
        self.evidence.add(ev[:4], ev)
        if connection is not None:
            self.connections.add(connection)
            self._cap()

    def _cap(self) -> None:
        if len(self.connections) > MAX_VIOLATION_CONNECTIONS:
            self.connections = set(sorted(self.connections)[:MAX_VIOLATION_CONNECTIONS])

    def merge(self, other: Tally) -> None:
        self.count += other.count
        self.total += other.total
        self.first_ns, self.last_ns = first_ns(self.first_ns, other.first_ns), last_ns(self.last_ns, other.last_ns)
        self.evidence.merge(other.evidence)
        self.connections |= other.connections
        self.note = choose(self.note, other.note)
        self._cap()


def _merge_tables(mine: dict, theirs: dict, make) -> None:
    for key, value in theirs.items():
        have = mine.get(key)
        if have is None:
            have = mine[key] = make()
        have.merge(value)


def _version_used(conn: Connection, row, ts: int) -> int:
    """The (api key, version) of the exchange's request: its first and last time on the connection, counted."""
    version = row.api_version
    if version is None or row.api_key is None:
        return 0
    pair = (row.api_key, version)
    have = conn.used.get(pair)
    if have is None:
        if len(conn.used) < MAX_USED:
            ev = row.evidence or evidence_of(row)
            conn.used[pair] = [ts, ev, ts, ev, 1]
        return 0
    have[4] += 1
    if ts > have[2]:
        have[2], have[3] = ts, row.evidence or evidence_of(row)
    elif ts < have[0]:
        have[0], have[1] = ts, row.evidence or evidence_of(row)
    return 0


def _answer_order(conn: Connection, row, ts: int) -> int:
    """An answered request's place among the connection's first MAX_ORDERED answered, by request time."""
    answered = row.response_ts_ns
    if answered is None:
        return 0
    conn.answers += 1
    items = conn.order.items
    if len(items) < MAX_ORDERED or ts <= items[-1][0][0]:  # later than every one kept: nothing to do
        conn.order.add((ts, row.correlation_id), (answered, row.evidence or evidence_of(row)))
    return 0


class TrafficState:
    __slots__ = ("connections", "errors", "activity", "unanswered", "latency", "throttles", "violations",
                 "silencing")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.connections: dict[tuple, Connection] = Capped()
        self.errors: dict[tuple, ErrorLog] = {}
        self.activity: dict[tuple, dict[str, Instants]] = Capped()
        self.unanswered = Kept(MAX_UNANSWERED)
        self.latency = FoldedTable("broker_latency", TimeHistograms)
        self.throttles: dict[tuple, Tally] = {}
        self.violations: dict[tuple, Tally] = {}
        self.silencing = Kept(MAX_SILENCING)  # answers with a silencing throttle: (evidence, connection key, ...)

    # -- feeding

    def add_row(self, given, acks0: bool = False) -> None:
        """An exchange's row (kwire.native.exchange_row, or a dict of its names, made into one)."""
        row = row_of(given)
        client, broker, api, ts = row.client, row.broker, row.api, row.ts_ns
        status, client_id = row.status, row.client_id
        key = (client, broker, row.connection_id)
        conn = capped_get(self.connections, key)
        if conn is None:
            conn = self._connection(key)
        if conn is not None:
            end = row.response_ts_ns or 0
            if end < ts:
                end = ts
            first, latest = conn.first_ns, conn.last_ns
            if first is None or ts < first:
                conn.first_ns = ts
            if latest is None or end > latest:
                conn.last_ns = end
            conn.exchanges += 1
            last = conn.last  # the latest exchange: _last_of, its tuple made only when this one is later
            if last is None or end > last[0] or (end == last[0] and _last_of(row, end) > last):
                conn.last = (end, ts, row.correlation_id, api, status)
            if status == PAIRED:
                answered = conn.answered_ns
                if answered is None or ts > answered:
                    conn.answered_ns = ts
                _answer_order(conn, row, ts)
            _version_used(conn, row, ts)
            if conn.client_id != client_id:
                conn.client_id = choose(conn.client_id, client_id)
            if api == "Fetch":
                conn.fetched = True
        if api is None:
            return
        if api not in STEADY_APIS or row.error_codes:
            who = (host_of(client), client_id or "")
            if api not in STEADY_APIS:
                self.note_activity(who, api, ts)
            for name in row.error_codes:
                self._error((api, name), row, who)
        ev = None
        if status == NO_RESPONSE and not acks0:
            ev = evidence_of(row)
            self.unanswered.add(ev[:4], (ev, client_id, row.connection_id))
        latency = row.latency_ns
        if latency is not None and api not in LONG_POLLS:
            series = self.latency.row(broker)
            series.add(ts, latency, api, ev or row.evidence or evidence_of(row))

    def note_activity(self, who: tuple, api: str, ts: int) -> None:
        apis = self.activity.get(who)
        if apis is None:
            apis = self.activity[who] = {}
            if len(self.activity) > MAX_CLIENTS:
                keep_smallest(self.activity, MAX_CLIENTS)
                apis = self.activity.get(who)
                if apis is None:
                    return
        moments = apis.get(api)
        if moments is None:
            moments = apis[api] = Instants()
        moments.add(ts)

    def _connection(self, key: tuple) -> Connection | None:
        conn = self.connections.get(key)
        if conn is None:
            conn = self.connections[key] = Connection()
            if len(self.connections) > MAX_CONNECTIONS:
                keep_smallest(self.connections, MAX_CONNECTIONS)
                conn = self.connections.get(key)
        return conn

    def _error(self, key: tuple, row: dict, who: tuple) -> None:
        log = self.errors.get(key)
        if log is None:
            log = self.errors[key] = ErrorLog()
        ts = row["ts_ns"]
        log.count += 1
        log.first_ns, log.last_ns = first_ns(log.first_ns, ts), last_ns(log.last_ns, ts)
        log.client_ids.add(row["client_id"])
        if len(log.client_ids) > MAX_IDS:
            log.client_ids = set(sorted(log.client_ids, key=str)[:MAX_IDS])
        ev = evidence_of(row)
        log.evidence.add(ev[:4], ev)
        log.moments.setdefault(who, Instants()).add(ts)
        if len(log.moments) > MAX_CLIENTS:
            keep_smallest(log.moments, MAX_CLIENTS)

    def add(self, ob: tuple, row: dict) -> None:
        tag = ob[0]
        if tag == T.SOFTWARE:
            conn = self._connection((ob[1], ob[2], row.get("connection_id")))
            if conn is not None:
                conn.software = choose(conn.software, ob[3])
        elif tag == T.THROTTLED:
            self.throttles.setdefault((ob[1], ob[2]), Tally()).add(ob[3], ob[4])
        elif tag == T.SILENCING:
            _, client_id, throttle, layout, ev, answered, version = ob
            self.silencing.add(ev[:4], (ev, (ev[1], ev[2], row.get("connection_id")), client_id, throttle, layout,
                                        answered, version))
        elif tag == T.VIOLATION:
            _, side, kind, api, version, client, broker, ev, where = ob
            self.violations.setdefault((side, kind, api, version), Tally()).add(
                1, ev, (client, broker, row.get("connection_id")), where)
        elif tag == T.REJOIN:
            self.note_activity((host_of(row["client"]), row["client_id"] or ""), "JoinGroup", row["ts_ns"])

    # -- merging

    def merge(self, other: TrafficState) -> None:
        _merge_tables(self.connections, other.connections, Connection)
        keep_smallest(self.connections, MAX_CONNECTIONS)
        _merge_tables(self.errors, other.errors, ErrorLog)
        for who, apis in other.activity.items():
            mine = self.activity.setdefault(who, {})
            for api, moments in apis.items():
                mine.setdefault(api, Instants()).merge(moments)
        keep_smallest(self.activity, MAX_CLIENTS)
        self.unanswered.merge(other.unanswered)
        self.latency.merge(other.latency)
        _merge_tables(self.throttles, other.throttles, Tally)
        _merge_tables(self.violations, other.violations, Tally)
        self.silencing.merge(other.silencing)

    # -- reading

    def next_moment(self, who: tuple, api: str, after_ns: int) -> int | None:
        """The start of the first kept moment after `after_ns` this client sent `api`, or None."""
        moments = self.activity.get(who, {}).get(api)
        if moments is None:
            return None
        return next((t for t in moments.sorted_ns() if t > after_ns), None)

    def did(self, who: tuple, api: str, after_ns: int, within_ns: int) -> bool:
        moments = self.activity.get(who, {}).get(api)
        return moments is not None and moments.any_between(after_ns, after_ns + within_ns)
