"""The Aggregator: every figure of `kwire stats`, `kwire spark` and `kwire live`, defined once.

Feed it the rows of kwire.native.exchange_facts (`add(row, partitions, names)`, or `add_exchange(ex)`),
merge Aggregators built over other parts of the traffic (`merge`), and ask for `document()`: the
summary as one JSON-ready dict, whose layout docs/stats-document.md documents.

Guarantees:
- Order does not matter. Every figure is a sum, a max, an exact distribution, or a choice with a
  total tie-break, so any split of the exchanges into Aggregators, merged in any order, gives the
  same document as one Aggregator fed everything in capture order.
- Memory is bounded by the number of distinct keys (apis, client ids, brokers, partitions, share
  groups, distinct latency values), not by the number of exchanges; every table keyed by a name
  from the wire is capped by kwire.native.caps (the smallest keys kept, the rest folded into one
  "(others)" row, listed in the document's `caps`).
- Nothing here depends on connection ids, file names or packet counts: only on the exchanges.
- Each exchange's row is read once for the four Figures it counts in (the total, its api version,
  client id and broker: figures.add_row); one that adds only counts and latencies (a counts-only
  row: no error code, no unanswered reason, no body outcome but decoded; most exchanges) is counted
  once, in a cell per (api, version, client id, broker), and the cells are merged into the four when
  anything reads them (`total`, `by_*`, `merge`, `document`, the state sent to another process): the
  same figures, the tables' rows in the same order.

Definitions beyond those of kwire.native.exchange_facts:
- span: from the earliest exchange time to the latest request or response time; rates
  (requests_per_s) are a group's exchanges divided by the whole span, null when the span is 0.
- latency percentiles: nearest rank (kwire.native.distribution) over every paired exchange.
- lag_last: the lag of the latest sample (ties: the larger lag); lag_max: the largest sample.
- topic ids are named when any Metadata response in the traffic names them (the smallest name if
  several do; filtered-out exchanges count, see `learn_names`); partitions seen under both the id
  and the name are counted together.
- slowest: the SLOWEST exchanges by latency (ties: earlier, then client, broker, correlation id);
  unanswered.first: the first FIRST no_response exchanges by time (same tie-break).
"""

from __future__ import annotations

from bisect import insort
from operator import itemgetter

from kwire.analytics.analysis import Analysis
from kwire.native.caps import OTHERS, FoldedTable, NameTable
from kwire.native.distribution import bucket_bounds, histogram
from kwire.analytics.figures import Figures, PartitionFigures, ShareGroupFigures, add_row, ms, new_cell
from kwire.native.exchange_facts import ns_to_s, topic_names
from kwire.analytics.observe import sasl_principal
from kwire.analytics.read import read_exchange
from kwire.native.exchange_row import ExchangeRow, row_of
from kwire.native.series import NS, Series
from kwire.fields import reduce_by_fields, set_fields
from kwire.model import NO_REQUEST, NO_RESPONSE, PAIRED, Exchange
from kwire.outcomes import DECODED
from kwire.tls.info import TlsNotes

FORMAT = "kwire-stats/1"
SLOWEST = 20
FIRST = 20
_KEY = itemgetter(0)  # a kept list's order: (key, brief row) pairs by key
TIMELINE_BUCKETS = 120
NULL_CLIENT_ID = "(null)"
UNKNOWN = "(unknown)"  # api, version and client id of a response whose request was not seen

CELLS = 1024  # (api version, client id, broker) cells of exchanges not yet in the tables
_TIMELINE_OPS = ("sum", "sum", "sum", "sum")  # exchanges, failed, request bytes, response bytes


def _brief(row: ExchangeRow) -> dict:
    """An exchange in `slowest` and `unanswered.first`: its facts under the names of every output
    (docs/vocabulary.md); `ts` and `errors` are the deprecated names of ts_ns and error_codes. Its fields read
    as attributes (a row's mapping protocol is a look-up by name more); `ts` is ts_ns / 1e9, which is
    round(ts_ns / 1e9, 9) for every integer (kwire.native.exchange_facts.ns_to_s)."""
    codes = list(row.error_codes)
    ts_ns = row.ts_ns
    return {"ts_ns": ts_ns, "ts": ns_to_s(ts_ns), "api": row.api,
            "api_version": row.api_version, "client_id": row.client_id, "client": row.client,
            "broker": row.broker, "correlation_id": row.correlation_id, "latency_ms": ms(row.latency_ns),
            "request_bytes": row.request_bytes, "response_bytes": row.response_bytes,
            "status": row.status, "unanswered": row.unanswered, "error_codes": codes, "errors": codes}


def _labels(api, version, client_id) -> tuple[tuple, str]:
    """(api version key, client id) an exchange is counted under in the tables."""
    if api is None:
        return (UNKNOWN, UNKNOWN), UNKNOWN
    return (api, str(version)), client_id if client_id is not None else NULL_CLIENT_ID


def _tie(row: dict) -> tuple:
    return (row["ts_ns"], row["client"], row["broker"], row["correlation_id"])


def _slow_key(row: dict) -> tuple:
    return (-row["latency_ns"],) + _tie(row)


class Aggregator:
    __slots__ = ("_total", "_by_api_version", "_by_client_id", "_by_broker", "_cells", "partitions", "share_groups",
                 "names", "first_ns", "last_ns", "slowest", "unanswered_first", "timeline", "analysis", "tls")

    def __init__(self) -> None:
        self._total = Figures()
        # Every table keyed by a name from the wire is capped and folds the rest (kwire.native.caps).
        self._by_api_version = FoldedTable("api_versions", Figures, (OTHERS, OTHERS))
        self._by_client_id = FoldedTable("client_ids", Figures)
        self._by_broker = FoldedTable("brokers", Figures)
        # (api, api version, client id, broker) -> the figures of its exchanges that only add counts and
        # latencies (counts-only rows), not yet in the four tables above: one cell (figures.new_cell, a
        # list) counted per exchange instead of four Figures; `_settle` adds them, before anything reads the tables.
        self._cells: dict[tuple, list] = {}
        self.partitions = FoldedTable("partitions", PartitionFigures, (OTHERS, -1))
        self.share_groups = FoldedTable("share_groups", ShareGroupFigures)
        self.names = NameTable()  # topic id -> name
        self.first_ns: int | None = None
        self.last_ns: int | None = None
        self.slowest: list[tuple[tuple, dict]] = []
        self.unanswered_first: list[tuple[tuple, dict]] = []
        self.timeline = Series(_TIMELINE_OPS)
        self.analysis = Analysis()  # groups and findings (kwire.analytics.analysis)
        self.tls = TlsNotes()  # TLS connections, from the runs' summaries (kwire.pipeline)

    # -- feeding --------------------------------------------------------------------------------

    def add_exchange(self, ex: Exchange) -> None:
        row, partitions, names, observed = read_exchange(ex, self.analysis.watch)
        self.add(row, partitions, names, observed)

    def add(self, row: ExchangeRow | dict, partitions=(), names=(), observed=()) -> None:
        """One exchange: its row (kwire.native.exchange_row; a dict of its names is made into one), its partition
        rows, topic names and observations (kwire.analytics.read)."""
        row = row_of(row)
        self.add_figures(row, partitions, names)
        self.analysis.add(row, observed)

    def add_figures(self, row: ExchangeRow | dict, partitions=(), names=()) -> None:
        """`add` but for the group and finding analysis (a caller that keeps one Analysis for
        several Aggregators feeds it itself: kwire.live.window)."""
        r = row_of(row)
        ts = r.ts_ns
        end = r.response_ts_ns or 0
        if end < ts:
            end = ts
        if self.first_ns is None or ts < self.first_ns:
            self.first_ns = ts
        if self.last_ns is None or end > self.last_ns:
            self.last_ns = end
        api, status, latency, wait = r.api, r.status, r.latency_ns, r.wait
        failed = 1 if r.failed else 0
        request_bytes, response_bytes = r.request_bytes or 0, r.response_bytes or 0
        req, resp = r.request_outcome, r.response_outcome
        if (not r.error_codes and r.unanswered is None and (req == DECODED or req is None)
                and (resp == DECODED or resp is None)):  # a counts-only row: counted in its cell
            key = (api, r.api_version, r.client_id, r.broker)
            cell = self._cells.get(key)
            if cell is None:
                cell = self._new_cell(key)
            cell[0] += 1  # the layout of figures.new_cell
            if status == PAIRED:
                cell[1] += 1
            elif status == NO_RESPONSE:
                cell[2] += 1
            elif status == NO_REQUEST:
                cell[3] += 1
            cell[4] += request_bytes
            cell[5] += response_bytes
            cell[6] += failed
            if r.negotiation:
                cell[7] += 1
            if latency is not None:
                dist = cell[9] if wait else cell[8]
                dist[latency] = dist.get(latency, 0) + 1
        else:
            key, client_id = _labels(api, r.api_version, r.client_id)
            add_row((self._total, self._by_api_version.row(key), self._by_client_id.row(client_id),
                     self._by_broker.row(r.broker)), r)
        self.timeline.add_sums4(ts, 1, failed, request_bytes, response_bytes)
        if latency is not None and not wait:
            slowest = self.slowest
            # Most exchanges are faster than the slowest kept: no key to build for them.
            if len(slowest) < SLOWEST or -latency <= slowest[-1][0][0]:
                self._keep(slowest, _slow_key(r), r, SLOWEST)
        if status == NO_RESPONSE:
            self._keep(self.unanswered_first, _tie(r), r, FIRST)
        if api == "ShareFetch":
            self._share_group(r.group_id).fetches += 1
        elif api == "ShareAcknowledge":
            self._share_group(r.group_id).acknowledges += 1
        if partitions:
            table = self.partitions
            for part in partitions:
                figures = table.row((part.topic, part.partition))
                figures.add(part)
                part_api = part.api
                if part_api != "Fetch" and part_api != "Produce":
                    self._share_group(part.group_id).add(part)
        for tid, name in names:
            self.add_name(tid, name)

    def _new_cell(self, key: tuple) -> list:
        cells = self._cells
        if len(cells) >= CELLS:
            self._settle()
        cell = cells[key] = new_cell()
        api, version, client_id, broker = key
        key, client_id = _labels(api, version, client_id)
        # the rows made now, as the exchange would have made them: the tables keep their order
        self._by_api_version.row(key)
        self._by_client_id.row(client_id)
        self._by_broker.row(broker)
        return cell

    def _settle(self) -> None:
        """Add the cells' figures to the total and the tables (sums and exact distributions: the same
        figures as each exchange added to each)."""
        cells = self._cells
        if not cells:
            return
        for (api, version, client_id, broker), cell in cells.items():
            key, client_id = _labels(api, version, client_id)
            self._total.add_cell(cell)
            self._by_api_version.row(key).add_cell(cell)
            self._by_client_id.row(client_id).add_cell(cell)
            self._by_broker.row(broker).add_cell(cell)
        cells.clear()

    @property
    def total(self) -> Figures:
        self._settle()
        return self._total

    @property
    def by_api_version(self) -> FoldedTable:
        self._settle()
        return self._by_api_version

    @property
    def by_client_id(self) -> FoldedTable:
        self._settle()
        return self._by_client_id

    @property
    def by_broker(self) -> FoldedTable:
        self._settle()
        return self._by_broker

    def __reduce__(self):  # pickled (worker processes, Spark) settled, the same state compiled or not
        self._settle()
        return reduce_by_fields(self)

    __setstate__ = set_fields

    def learn_names(self, ex: Exchange) -> None:
        """Topic names and SASL principals from an exchange that is not counted (filtered out): ids are
        named from every Metadata response in the traffic, changes by the principal of their connection, and
        the clients that fetch are known (no tool's transient member), whatever the filters."""
        for tid, name in topic_names(ex):
            self.add_name(tid, name)
        if ex.api == "Fetch":  # a member that fetches is no tool's, whatever the filters (kwire.analytics.changes)
            self.analysis.changes.add_fetcher(ex.client_id)
        found = sasl_principal(ex)  # a connection's principal names the changes it made, whatever the filters
        if found is not None:
            self.analysis.changes.add(found)

    def add_name(self, tid: str, name: str) -> None:
        self.names.add(tid, name)

    def _share_group(self, group: str | None) -> ShareGroupFigures:
        return self.share_groups.row(group if group is not None else UNKNOWN)

    @staticmethod
    def _keep(kept: list, key: tuple, row: dict, limit: int) -> None:
        if len(kept) >= limit and key >= kept[-1][0]:
            return
        insort(kept, (key, _brief(row)), key=_KEY)  # after its equals, as a stable sort would put it
        del kept[limit:]

    # -- merging --------------------------------------------------------------------------------

    def merge(self, other: Aggregator) -> Aggregator:
        self.total.merge(other.total)
        for mine, theirs in ((self.by_api_version, other.by_api_version), (self.by_client_id, other.by_client_id),
                             (self.by_broker, other.by_broker), (self.partitions, other.partitions),
                             (self.share_groups, other.share_groups)):
            mine.merge(theirs)
        for tid, name in other.names.items():
            self.add_name(tid, name)
        if other.first_ns is not None and (self.first_ns is None or other.first_ns < self.first_ns):
            self.first_ns = other.first_ns
        if other.last_ns is not None and (self.last_ns is None or other.last_ns > self.last_ns):
            self.last_ns = other.last_ns
        self.slowest = sorted(self.slowest + other.slowest, key=_KEY)[:SLOWEST]
        self.unanswered_first = sorted(self.unanswered_first + other.unanswered_first, key=_KEY)[:FIRST]
        self.timeline.merge(other.timeline)
        self.analysis.merge(other.analysis)
        self.tls.merge(other.tls)
        return self

    def successor(self) -> Aggregator:
        """A fresh Aggregator of this one's kind that reads Produce batches for resends as this one would from
        here on (kwire.analytics.resend_state.ResendState.watch_copy) and holds nothing else: what goes on
        counting a producer's exchanges once this one is handed over (`kwire stats --jobs`)."""
        nxt = type(self)()
        nxt.analysis.delivery.resends = self.analysis.delivery.resends.watch_copy()
        return nxt

    # -- the summary ----------------------------------------------------------------------------

    def document(self) -> dict:
        span_ns = (self.last_ns - self.first_ns) if self.first_ns is not None else 0
        span_s = span_ns / 1e9 if span_ns > 0 else None
        found, found_total = self.analysis.findings_and_total(self.names, self.first_ns, self.last_ns)
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
            "span": self._span_document(span_ns),
            "totals": self.total.document(span_s),
            "apis": apis,
            "client_ids": {k: f.document(span_s) for k, f in self.by_client_id.items()},
            "brokers": {k: f.document(span_s) for k, f in self.by_broker.items()},
            "partitions": _partitions_document(partitions, width, first, count),
            "share_groups": {k: f.document() for k, f in self.share_groups.items()},
            "unanswered": {
                "count": self.total.no_response,
                "by_api": {api: f.no_response for api, f in per_api.items() if f.no_response},
                "by_reason": dict(self.total.unanswered),
                "first": [brief for _, brief in self.unanswered_first],
            },
            "slowest": [brief for _, brief in self.slowest],
            "timeline": self._timeline_document(width, first, count),
            "groups": self.analysis.groups_document(self.names),
            "findings": found,
            "findings_total": found_total,
            "changes": self.analysis.changes.document(self.analysis.groups, self.analysis.traffic),
            "quorum": self.analysis.quorum.document(),
            "end_to_end": self.analysis.end_to_end.document(self.names),
            "tls": self.tls.document(),
            "caps": {table.kind: table.note() for table in (self.by_api_version, self.by_client_id,
                                                              self.by_broker, self.partitions, self.share_groups,
                                                              self.analysis.traffic.latency)}
            | {"topic_names": {"cap": self.names.cap, "folded": self.names.refused}},
        }

    def _span_document(self, span_ns: int) -> dict:
        """`span`; `start`, `end` (epoch s) and `seconds` are the deprecated names of its instants and duration."""
        first, last = self.first_ns, self.last_ns
        return {"start_ts_ns": first, "end_ts_ns": last, "duration_ms": ms(span_ns),
                "start": ns_to_s(first) if first is not None else None,
                "end": ns_to_s(last) if last is not None else None, "seconds": ns_to_s(span_ns)}

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
        return {"start_ts_ns": first * width * NS, "bucket_ms": width * 1000, "exchanges": list(columns[0]),
                "failed": list(columns[1]), "request_bytes": list(columns[2]), "response_bytes": list(columns[3]),
                "bucket_s": width, "start": first * width}  # (the last two deprecated: epoch s, s)

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
        out.append([ms(lo), ms(hi), n])
    return out
