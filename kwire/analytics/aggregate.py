"""The Aggregator: every figure of `kwire stats`, `kwire spark` and `kwire live`, defined once.

Feed it the rows of kwire.analytics.facts (`add(row, partitions, names)`, or `add_exchange(ex)`),
merge Aggregators built over other parts of the traffic (`merge`), and ask for `document()`: the
summary as one JSON-ready dict, whose layout README.md documents ("kwire stats --json").

Guarantees:
- Order does not matter. Every figure is a sum, a max, an exact distribution, or a choice with a
  total tie-break, so any split of the exchanges into Aggregators, merged in any order, gives the
  same document as one Aggregator fed everything in capture order.
- Memory is bounded by the number of distinct keys (apis, client ids, brokers, partitions, share
  groups, distinct latency values), not by the number of exchanges.
- Nothing here depends on connection ids, file names or packet counts: only on the exchanges.

Definitions beyond those of kwire.analytics.facts:
- span: from the earliest exchange time to the latest request or response time; rates
  (requests_per_s) are a group's exchanges divided by the whole span, null when the span is 0.
- latency percentiles: nearest rank (kwire.analytics.distribution) over every paired exchange.
- lag_last: the lag of the latest sample (ties: the larger lag); lag_max: the largest sample.
- topic ids are named when any Metadata response in the traffic names them (the smallest name if
  several do; filtered-out exchanges count, see `learn_names`); partitions seen under both the id
  and the name are counted together.
- slowest: the SLOWEST exchanges by latency (ties: earlier, then client, broker, correlation id);
  unanswered.first: the first FIRST no_response exchanges by time (same tie-break).
"""

from __future__ import annotations

from kwire.analytics.distribution import bucket_bounds, histogram, merge_into, percentiles
from kwire.analytics.facts import ACK_COLUMNS, ACK_TYPES, exchange_row, partition_rows, topic_names
from kwire.analytics.series import NS, Series
from kwire.model import NO_REQUEST, NO_RESPONSE, PAIRED, Exchange
from kwire.tls.info import TlsNotes

FORMAT = "kwire-stats/1"
SLOWEST = 20
FIRST = 20
TIMELINE_BUCKETS = 120
NULL_CLIENT_ID = "(null)"
UNKNOWN = "(unknown)"  # api, version and client id of a response whose request was not seen

_TIMELINE_OPS = ("sum", "sum", "sum", "sum")  # exchanges, failed, request bytes, response bytes
_LAG_OPS = ("max",)
_LAG_SERIES_LIMIT = 256
_ACK_NAMES = tuple(ACK_TYPES.values())


def _ms(ns: int | None) -> float | None:
    return None if ns is None else round(ns / 1e6, 6)


class Figures:
    """Counts of one group of exchanges (one api version, client id, broker, or all)."""

    __slots__ = ("exchanges", "paired", "no_response", "no_request", "request_bytes", "response_bytes",
                 "failed", "decode_errors", "errors", "latency")

    def __init__(self) -> None:
        self.exchanges = self.paired = self.no_response = self.no_request = 0
        self.request_bytes = self.response_bytes = self.failed = self.decode_errors = 0
        self.errors: dict[str, int] = {}
        self.latency: dict[int, int] = {}

    def add(self, row: dict) -> None:
        self.exchanges += 1
        status = row["status"]
        if status == PAIRED:
            self.paired += 1
        elif status == NO_RESPONSE:
            self.no_response += 1
        elif status == NO_REQUEST:
            self.no_request += 1
        self.request_bytes += row["request_bytes"] or 0
        self.response_bytes += row["response_bytes"] or 0
        if row["failed"]:
            self.failed += 1
        if row["request_error"] or row["response_error"]:
            self.decode_errors += 1
        codes = row["error_codes"]
        if codes:
            errors = self.errors
            for name in codes:
                errors[name] = errors.get(name, 0) + 1
        latency = row["latency_ns"]
        if latency is not None:
            dist = self.latency  # add_value, inline: four times per exchange
            dist[latency] = dist.get(latency, 0) + 1

    def merge(self, other: Figures) -> None:
        for name in ("exchanges", "paired", "no_response", "no_request", "request_bytes", "response_bytes",
                     "failed", "decode_errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name, n in other.errors.items():
            self.errors[name] = self.errors.get(name, 0) + n
        merge_into(self.latency, other.latency)

    def document(self, span_s: float | None) -> dict:
        count, ps, top = percentiles(self.latency)
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
            "errors": dict(self.errors),
            "latency_ms": {"count": count, "p50": _ms(ps.get(50)), "p90": _ms(ps.get(90)),
                           "p99": _ms(ps.get(99)), "max": _ms(top)},
        }


class PartitionFigures:
    __slots__ = ("fetches", "fetch_bytes", "fetch_records", "produces", "produce_bytes", "produce_records",
                 "lag_samples", "lag_last", "lag_max", "share_bytes", "share_records", "acquired",
                 "redelivered", "acks", "lag_series")

    def __init__(self) -> None:
        self.fetches = self.fetch_bytes = self.fetch_records = 0
        self.produces = self.produce_bytes = self.produce_records = 0
        self.lag_samples = 0
        self.lag_last: tuple[int, int] | None = None  # (ts_ns, lag)
        self.lag_max: int | None = None
        self.share_bytes = self.share_records = self.acquired = self.redelivered = 0
        self.acks = dict.fromkeys(ACK_COLUMNS, 0)
        self.lag_series = Series(_LAG_OPS, _LAG_SERIES_LIMIT)

    def add(self, row: dict) -> None:
        api = row["api"]
        if api == "Fetch":
            self.fetches += 1
            self.fetch_bytes += row["bytes"]
            self.fetch_records += row["records"]
            lag = row["lag"]
            if lag is not None:
                self._lag(row["ts_ns"], lag)
        elif api == "Produce":
            self.produces += 1
            self.produce_bytes += row["bytes"]
            self.produce_records += row["records"]
        else:
            self.share_bytes += row["bytes"]
            self.share_records += row["records"]
            self.acquired += row["acquired"]
            self.redelivered += row["redelivered"]
            for column in ACK_COLUMNS:
                self.acks[column] += row[column]

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


def _brief(row: dict) -> dict:
    return {"ts": round(row["ts_ns"] / 1e9, 9), "api": row["api"], "api_version": row["api_version"],
            "client_id": row["client_id"], "client": row["client"], "broker": row["broker"],
            "correlation_id": row["correlation_id"], "latency_ms": _ms(row["latency_ns"]),
            "request_bytes": row["request_bytes"], "response_bytes": row["response_bytes"],
            "status": row["status"], "errors": list(row["error_codes"])}


def _tie(row: dict) -> tuple:
    return (row["ts_ns"], row["client"], row["broker"], row["correlation_id"])


def _slow_key(row: dict) -> tuple:
    return (-row["latency_ns"],) + _tie(row)


class Aggregator:
    def __init__(self) -> None:
        self.total = Figures()
        self.by_api_version: dict[tuple[str, str], Figures] = {}
        self.by_client_id: dict[str, Figures] = {}
        self.by_broker: dict[str, Figures] = {}
        self.partitions: dict[tuple[str, int], PartitionFigures] = {}
        self.share_groups: dict[str, ShareGroupFigures] = {}
        self.names: dict[str, str] = {}  # topic id -> name
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self.slowest: list[tuple[tuple, dict]] = []
        self.unanswered_first: list[tuple[tuple, dict]] = []
        self.timeline = Series(_TIMELINE_OPS)
        self.tls = TlsNotes()  # TLS connections, from the runs' summaries (kwire.pipeline)

    # -- feeding --------------------------------------------------------------------------------

    def add_exchange(self, ex: Exchange) -> None:
        self.add(exchange_row(ex), partition_rows(ex), topic_names(ex))

    def add(self, row: dict, partitions=(), names=()) -> None:
        ts = row["ts_ns"]
        end = max(ts, row["response_ts_ns"] or 0)
        if self.first_ns is None or ts < self.first_ns:
            self.first_ns = ts
        if self.last_ns is None or end > self.last_ns:
            self.last_ns = end
        self.total.add(row)
        if row["api"] is None:
            key = (UNKNOWN, UNKNOWN)
            client_id = UNKNOWN
        else:
            key = (row["api"], str(row["api_version"]))
            client_id = row["client_id"] if row["client_id"] is not None else NULL_CLIENT_ID
        for table, name in ((self.by_api_version, key), (self.by_client_id, client_id),
                            (self.by_broker, row["broker"])):
            figures = table.get(name)
            if figures is None:
                figures = table[name] = Figures()
            figures.add(row)
        self.timeline.add(ts, (1, 1 if row["failed"] else 0, row["request_bytes"] or 0, row["response_bytes"] or 0))
        latency = row["latency_ns"]
        if latency is not None:
            slowest = self.slowest
            # Most exchanges are faster than the slowest kept: no key to build for them.
            if len(slowest) < SLOWEST or -latency <= slowest[-1][0][0]:
                self._keep(slowest, _slow_key(row), row, SLOWEST)
        if row["status"] == NO_RESPONSE:
            self._keep(self.unanswered_first, _tie(row), row, FIRST)
        api = row["api"]
        if api == "ShareFetch":
            self._share_group(row["group_id"]).fetches += 1
        elif api == "ShareAcknowledge":
            self._share_group(row["group_id"]).acknowledges += 1
        for part in partitions:
            self.add_partition(part)
        for tid, name in names:
            self.add_name(tid, name)

    def add_partition(self, part: dict) -> None:
        key = (part["topic"], part["partition"])
        figures = self.partitions.get(key)
        if figures is None:
            figures = self.partitions[key] = PartitionFigures()
        figures.add(part)
        if part["api"] != "Fetch" and part["api"] != "Produce":
            self._share_group(part["group_id"]).add(part)

    def learn_names(self, ex: Exchange) -> None:
        """Topic names from an exchange that is not counted (filtered out): ids are named from every
        Metadata response in the traffic, whatever the filters."""
        for tid, name in topic_names(ex):
            self.add_name(tid, name)

    def add_name(self, tid: str, name: str) -> None:
        have = self.names.get(tid)
        if have is None or name < have:
            self.names[tid] = name

    def _share_group(self, group: str | None) -> ShareGroupFigures:
        label = group if group is not None else UNKNOWN
        figures = self.share_groups.get(label)
        if figures is None:
            figures = self.share_groups[label] = ShareGroupFigures()
        return figures

    @staticmethod
    def _keep(kept: list, key: tuple, row: dict, limit: int) -> None:
        if len(kept) >= limit and key >= kept[-1][0]:
            return
        kept.append((key, _brief(row)))
        kept.sort(key=lambda item: item[0])
        del kept[limit:]

    # -- merging --------------------------------------------------------------------------------

    def merge(self, other: Aggregator) -> Aggregator:
        self.total.merge(other.total)
        for mine, theirs in ((self.by_api_version, other.by_api_version), (self.by_client_id, other.by_client_id),
                             (self.by_broker, other.by_broker), (self.partitions, other.partitions),
                             (self.share_groups, other.share_groups)):
            for key, figures in theirs.items():
                have = mine.get(key)
                if have is None:
                    have = mine[key] = type(figures)()
                have.merge(figures)
        for tid, name in other.names.items():
            self.add_name(tid, name)
        if other.first_ns is not None and (self.first_ns is None or other.first_ns < self.first_ns):
            self.first_ns = other.first_ns
        if other.last_ns is not None and (self.last_ns is None or other.last_ns > self.last_ns):
            self.last_ns = other.last_ns
        self.slowest = sorted(self.slowest + other.slowest, key=lambda item: item[0])[:SLOWEST]
        self.unanswered_first = sorted(self.unanswered_first + other.unanswered_first,
                                       key=lambda item: item[0])[:FIRST]
        self.timeline.merge(other.timeline)
        self.tls.merge(other.tls)
        return self

    # -- the summary ----------------------------------------------------------------------------

    def document(self) -> dict:
        span_ns = (self.last_ns - self.first_ns) if self.first_ns is not None else 0
        span_s = span_ns / 1e9 if span_ns > 0 else None
        apis: dict[str, dict] = {}
        per_api: dict[str, Figures] = {}
        for (api, version), figures in self.by_api_version.items():
            merged = per_api.get(api)
            if merged is None:
                merged = per_api[api] = Figures()
            merged.merge(figures)
        for api, figures in per_api.items():
            entry = figures.document(span_s)
            entry["versions"] = {version: f.document(span_s)
                                 for (name, version), f in self.by_api_version.items() if name == api}
            entry["latency_histogram"] = _histogram(figures.latency)
            apis[api] = entry
        partitions = self._partitions_by_name()
        width, first, count = self._timeline_frame(partitions)
        return {
            "format": FORMAT,
            "span": {"start": round(self.first_ns / 1e9, 9) if self.first_ns is not None else None,
                     "end": round(self.last_ns / 1e9, 9) if self.last_ns is not None else None,
                     "seconds": round(span_ns / 1e9, 9)},
            "totals": self.total.document(span_s),
            "apis": apis,
            "client_ids": {k: f.document(span_s) for k, f in self.by_client_id.items()},
            "brokers": {k: f.document(span_s) for k, f in self.by_broker.items()},
            "partitions": _partitions_document(partitions, width, first, count),
            "share_groups": {k: f.document() for k, f in self.share_groups.items()},
            "unanswered": {
                "count": self.total.no_response,
                "by_api": {api: f.no_response for api, f in per_api.items() if f.no_response},
                "first": [brief for _, brief in self.unanswered_first],
            },
            "slowest": [brief for _, brief in self.slowest],
            "timeline": self._timeline_document(width, first, count),
            "tls": self.tls.document(),
        }

    def _timeline_frame(self, partitions: dict) -> tuple[int, int, int]:
        """(bucket width in s, first bucket index, bucket count) shared by every series: a power of
        two, at least every series' resolution, giving at most TIMELINE_BUCKETS buckets."""
        if self.first_ns is None:
            return 1, 0, 0
        start_s, end_s = self.first_ns // NS, self.last_ns // NS
        width = max(self.timeline.resolution, 1)
        for figures in partitions.values():
            width = max(width, figures.lag_series.resolution)
        while (end_s // width - start_s // width + 1) > TIMELINE_BUCKETS:
            width *= 2
        return width, start_s // width, end_s // width - start_s // width + 1

    def _timeline_document(self, width: int, first: int, count: int) -> dict:
        cells = self.timeline.rebin(width, first, count)
        columns = list(zip(*[cell or (0, 0, 0, 0) for cell in cells])) or [(), (), (), ()]
        return {"bucket_s": width, "start": first * width, "exchanges": list(columns[0]),
                "failed": list(columns[1]), "request_bytes": list(columns[2]), "response_bytes": list(columns[3])}

    def _partitions_by_name(self) -> dict[tuple[str, int], PartitionFigures]:
        """Partitions keyed by topic name where a Metadata response named the id (id and name merged)."""
        merged: dict[tuple[str, int], PartitionFigures] = {}
        for (topic, partition), figures in self.partitions.items():
            key = (self.names.get(topic, topic), partition)
            have = merged.get(key)
            if have is None:
                have = merged[key] = PartitionFigures()
            have.merge(figures)
        return merged


def _partitions_document(partitions: dict, width: int, first: int, count: int) -> dict:
    out: dict[str, dict] = {}
    for (topic, partition), figures in partitions.items():
        entry = figures.document()
        if figures.lag_samples:
            entry["lag_timeline"] = [cell[0] if cell else None
                                     for cell in figures.lag_series.rebin(width, first, count)]
        out.setdefault(topic, {})[str(partition)] = entry
    return out


def _histogram(latency: dict[int, int]) -> list[list]:
    """[[lower ms, upper ms, count], ...] for the non-empty buckets, in order."""
    out = []
    for k, n in sorted(histogram(latency).items()):
        lo, hi = bucket_bounds(k)
        out.append([_ms(lo), _ms(hi), n])
    return out
