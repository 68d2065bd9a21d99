"""The figures the Aggregator keeps per group of exchanges (kwire.analytics.aggregate).

`Figures`: counts by status, bytes each way, error codes by name, body outcomes by kind (read from
the rows' kinds, kwire.outcomes), why requests went unanswered, waits and version negotiations, and
the exact latency distribution of one group (an api and version, a client id, a broker, the total).
`PartitionFigures`: fetches, produces and share-group deliveries of one topic-partition, with its lag
series. `ShareGroupFigures`: one share group's acquisitions, redeliveries and acknowledgements. Each
`add`s fact rows (kwire.native.exchange_facts), `merge`s exactly with another of its kind in any order, and
makes its part of the stats document (`document`). `add_row(figures, row)` adds one row to several
Figures, reading it once; a row that adds nothing but counts and a latency (kwire.analytics.aggregate:
a counts-only row) is counted in a cell (`new_cell`) alone, added to a Figures by `Figures.add_cell`.
"""

from __future__ import annotations

from kwire.native.distribution import merge_into, percentiles
from kwire.native.exchange_facts import ACK_COLUMNS, ACK_TYPES, ns_to_ms
from kwire.native.exchange_row import PartitionRow, row_of
from kwire.native.series import Series
from kwire.fields import reduce_by_fields, set_fields
from kwire.model import NO_REQUEST, NO_RESPONSE, PAIRED
from kwire.outcomes import DECODED, MALFORMED

_LAG_OPS = ("max",)
_LAG_SERIES_LIMIT = 256
_ACK_NAMES = tuple(ACK_TYPES.values())


def ms(ns: int | None) -> float | None:
    """kwire.native.exchange_facts.ns_to_ms, None for None."""
    return None if ns is None else ns_to_ms(ns)


class Figures:
    """Counts of one group of exchanges (one api version, client id, broker, or all)."""

    __slots__ = ("exchanges", "paired", "no_response", "no_request", "request_bytes", "response_bytes",
                 "failed", "decode_errors", "errors", "latency", "negotiations", "waits", "bodies", "unanswered")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.exchanges = self.paired = self.no_response = self.no_request = 0
        self.request_bytes = self.response_bytes = self.failed = self.decode_errors = 0
        self.negotiations = 0
        self.errors: dict[str, int] = {}  # error code name -> occurrences
        self.bodies: dict[str, int] = {}  # body outcome kind (all but decoded) -> bodies
        self.unanswered: dict[str, int] = {}  # why unanswered (kwire.outcomes.UNANSWERED_KINDS) -> exchanges
        self.latency: dict[int, int] = {}  # served exchanges
        self.waits: dict[int, int] = {}  # long polls answered empty at their MaxWaitMs

    def add(self, row) -> None:
        """One exchange's row (kwire.native.exchange_row, or a dict of its names)."""
        add_row((self,), row)

    def add_cell(self, cell: list) -> None:
        """`add` of every row a cell (`new_cell`) counted."""
        self.exchanges += cell[0]
        self.paired += cell[1]
        self.no_response += cell[2]
        self.no_request += cell[3]
        self.request_bytes += cell[4]
        self.response_bytes += cell[5]
        self.failed += cell[6]
        self.negotiations += cell[7]
        merge_into(self.latency, cell[8])
        merge_into(self.waits, cell[9])

    def _bodies(self, req: str | None, resp: str | None) -> None:
        """Count the bodies that were not simply decoded, by kind; an exchange with a malformed body
        is a decode error."""
        bodies = self.bodies
        for kind in (req, resp):
            if kind is not None and kind != DECODED:
                bodies[kind] = bodies.get(kind, 0) + 1
        if req == MALFORMED or resp == MALFORMED:
            self.decode_errors += 1

    def merge(self, other: Figures) -> None:
        for name in ("exchanges", "paired", "no_response", "no_request", "request_bytes", "response_bytes",
                     "failed", "decode_errors", "negotiations"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.errors, other.errors), (self.bodies, other.bodies),
                             (self.unanswered, other.unanswered)):
            for name, n in theirs.items():
                mine[name] = mine.get(name, 0) + n
        merge_into(self.latency, other.latency)
        merge_into(self.waits, other.waits)

    def document(self, span_s: float | None) -> dict:
        count, ps, top = percentiles(self.latency)
        waits, wait_ps, wait_top = percentiles(self.waits, (50,))
        return {
            "exchanges": self.exchanges,
            "paired": self.paired,
            "no_response": self.no_response,
            "no_request": self.no_request,
            "requests_per_s": round(self.exchanges / span_s, 3) if span_s else None,
            "request_bytes": self.request_bytes,
            "response_bytes": self.response_bytes,
            "failed": self.failed,
            "decode_errors": self.decode_errors,
            "body_outcomes": dict(self.bodies),
            "error_codes": dict(self.errors),
            "errors": dict(self.errors),  # deprecated: error_codes (docs/changes.md)
            "latency_ms": {"count": count, "p50": ms(ps.get(50)), "p90": ms(ps.get(90)),
                           "p99": ms(ps.get(99)), "max": ms(top)},
            "waits": {"count": waits, "p50_ms": ms(wait_ps.get(50)), "max_ms": ms(wait_top)},
            "negotiations": self.negotiations,
        }


def add_row(figures: tuple, given) -> None:
    """Figures.add of one exchange's row (kwire.native.exchange_row, or a dict of its names, made into one) to each
    of `figures` (the total and the groups it falls in): the row read once, each figure then counted."""
    row = row_of(given)
    status = row.status
    paired, no_response = status == PAIRED, status == NO_RESPONSE
    no_request = status == NO_REQUEST
    why = row.unanswered if no_response else None
    request_bytes = row.request_bytes or 0
    response_bytes = row.response_bytes or 0
    failed = 1 if row.failed else 0
    req, resp = row.request_outcome, row.response_outcome
    plain = req == DECODED and resp == DECODED
    codes = row.error_codes
    negotiation = 1 if row.negotiation else 0
    latency = row.latency_ns
    wait = row.wait
    for f in figures:
        f.exchanges += 1
        if paired:
            f.paired += 1
        elif no_response:
            f.no_response += 1
            if why is not None:
                f.unanswered[why] = f.unanswered.get(why, 0) + 1
        elif no_request:
            f.no_request += 1
        f.request_bytes += request_bytes
        f.response_bytes += response_bytes
        f.failed += failed
        if not plain:
            f._bodies(req, resp)
        if codes:
            errors = f.errors
            for name in codes:
                errors[name] = errors.get(name, 0) + 1
        f.negotiations += negotiation
        if latency is not None:
            dist = f.waits if wait else f.latency
            dist[latency] = dist.get(latency, 0) + 1  # distribution.add_value, inline


def new_cell() -> list:
    """The counts of counts-only rows, kept in a list (kwire.analytics.aggregate counts a row in it
    without an attribute looked up): [exchanges, paired, no_response, no_request, request bytes,
    response bytes, failed, negotiations, latency distribution, waits distribution]; `Figures.add_cell`
    adds them to a Figures."""
    return [0, 0, 0, 0, 0, 0, 0, 0, {}, {}]


class PartitionFigures:
    __slots__ = ("fetches", "fetch_bytes", "fetch_records", "produces", "produce_bytes", "produce_records",
                 "lag_samples", "lag_last", "lag_max", "share_bytes", "share_records", "acquired",
                 "redelivered", "acks", "lag_series")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.fetches = self.fetch_bytes = self.fetch_records = 0
        self.produces = self.produce_bytes = self.produce_records = 0
        self.lag_samples = 0
        self.lag_last: tuple[int, int] | None = None  # (ts_ns, lag)
        self.lag_max: int | None = None
        self.share_bytes = self.share_records = self.acquired = self.redelivered = 0
        self.acks = dict.fromkeys(ACK_COLUMNS, 0)
        self.lag_series = Series(_LAG_OPS, _LAG_SERIES_LIMIT)

    def add(self, row: PartitionRow) -> None:
        api = row.api
        if api == "Fetch":
            self.fetches += 1
            self.fetch_bytes += row.bytes
            self.fetch_records += row.records
            lag = row.lag
            if lag is not None:
                self._lag(row.ts_ns, lag)
        elif api == "Produce":
            self.produces += 1
            self.produce_bytes += row.bytes
            self.produce_records += row.records
        else:
            self.share_bytes += row.bytes
            self.share_records += row.records
            self.acquired += row.acquired
            self.redelivered += row.redelivered
            for column in ACK_COLUMNS:
                self.acks[column] += getattr(row, column)

    def _lag(self, ts_ns: int, lag: int) -> None:
        self.lag_samples += 1
        sample = (ts_ns, lag)
        if self.lag_last is None or sample > self.lag_last:
            self.lag_last = sample
        if self.lag_max is None or lag > self.lag_max:
            self.lag_max = lag
        self.lag_series.add(ts_ns, (lag,))

    def merge(self, other: PartitionFigures) -> None:
        for name in ("fetches", "fetch_bytes", "fetch_records", "produces", "produce_bytes", "produce_records",
                     "lag_samples", "share_bytes", "share_records", "acquired", "redelivered"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.lag_last is not None and (self.lag_last is None or other.lag_last > self.lag_last):
            self.lag_last = other.lag_last
        if other.lag_max is not None and (self.lag_max is None or other.lag_max > self.lag_max):
            self.lag_max = other.lag_max
        for column in ACK_COLUMNS:
            self.acks[column] += other.acks[column]
        self.lag_series.merge(other.lag_series)

    def document(self) -> dict:
        return {
            "fetches": self.fetches,
            "fetch_bytes": self.fetch_bytes,
            "fetch_records": self.fetch_records,
            "produces": self.produces,
            "produce_bytes": self.produce_bytes,
            "produce_records": self.produce_records,
            "lag_samples": self.lag_samples,
            "lag_last": self.lag_last[1] if self.lag_last else None,
            "lag_max": self.lag_max,
            "share_bytes": self.share_bytes,
            "share_records": self.share_records,
            "acquired": self.acquired,
            "redelivered": self.redelivered,
            "acknowledgements": {name: self.acks["ack_" + name.lower()] for name in _ACK_NAMES},
        }


class ShareGroupFigures:
    __slots__ = ("fetches", "acknowledges", "records", "acquired", "redelivered", "acks")

    def __init__(self) -> None:
        self.fetches = self.acknowledges = self.records = self.acquired = self.redelivered = 0
        self.acks = dict.fromkeys(ACK_COLUMNS, 0)

    def add(self, row: dict) -> None:
        self.records += row["records"]
        self.acquired += row["acquired"]
        self.redelivered += row["redelivered"]
        for column in ACK_COLUMNS:
            self.acks[column] += row[column]

    def merge(self, other: ShareGroupFigures) -> None:
        for name in ("fetches", "acknowledges", "records", "acquired", "redelivered"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for column in ACK_COLUMNS:
            self.acks[column] += other.acks[column]

    def document(self) -> dict:
        return {"share_fetches": self.fetches, "share_acknowledges": self.acknowledges, "records": self.records,
                "acquired": self.acquired, "redelivered": self.redelivered,
                "acknowledgements": {name: self.acks["ack_" + name.lower()] for name in _ACK_NAMES}}
