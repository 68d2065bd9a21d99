"""The exchange counts behind kwire's Prometheus metrics, kept since the start with bounded labels.

`MetricsState.add(row, observations)` takes the row kwire.native.exchange_facts makes of an exchange (and
its kwire.analytics.observe observations: throttling) - the row the Aggregator of `kwire stats`
counts - and keeps, since the start:

- per (api, api_version, client_id, broker): exchanges, failed, no_response, no_request,
  decode errors, request and response bytes (the columns of `CELL`);
- per (api, broker): served latencies and long-poll waits as counts per kwire latency bucket
  (kwire.native.distribution.bucket_of, 4 per doubling) with their sums in ns, and throttling
  (ThrottleTimeMs summed, responses throttled);
- per (api, error): error codes by Kafka's name.

The definitions are the Aggregator's (kwire.analytics.aggregate and figures): api, version and client
id of a response whose request was not seen are "(unknown)", a null client id is "(null)"; every
error code counts once per occurrence; a wait (row["wait"]) is not a served latency. The api-level
sums equal the `apis` figures of `kwire stats` on the same exchanges (tests/live/test_metrics_state).

Labels are bounded by kwire.live.labels.LabelCaps (first come, first kept). A key whose labels are all
kept is looked up once and cached; a folded one goes through the caps each time, so the folds count
observations. `caps=None` keeps every value (a capture read whole, possibly by several workers whose
states `merge`; `folded(caps)` then keeps the busiest values of each label). Owned by one thread
(the feeder's): the exporter reads it through kwire.live.metric_families on that thread.
"""

from __future__ import annotations

from kwire.analytics.aggregate import NULL_CLIENT_ID, UNKNOWN, Aggregator
from kwire.native.distribution import bucket_of
from kwire.live.labels import OTHER, LabelCaps, ranked
from kwire.model import NO_REQUEST, NO_RESPONSE

CELL = ("exchanges", "failed", "no_response", "no_request", "decode_errors", "request_bytes", "response_bytes")
EXCHANGE_LABELS = ("api", "api_version", "client_id", "broker")
LATENCY_LABELS = ("api", "broker")
ERROR_LABELS = ("api", "error")
# a latency cell: [served {bucket: n}, served sum ns, waits {bucket: n}, waits sum ns, throttle ms, throttled]


def _latency_cell() -> list:
    return [{}, 0, {}, 0, 0, 0]


class MetricsState:
    __slots__ = ("caps", "exchanges", "latency", "errors", "_exchange_keys", "_latency_keys")

    def __init__(self, caps: LabelCaps | None = None):
        self.caps = caps
        self.exchanges: dict[tuple, list[int]] = {}
        self.latency: dict[tuple, list] = {}
        self.errors: dict[tuple, int] = {}
        self._exchange_keys: dict[tuple, list[int]] = {}  # raw key -> its cell, when no label folded
        self._latency_keys: dict[tuple, list] = {}

    # -- feeding

    def add(self, row: dict, observations=()) -> None:
        api = row["api"]
        if api is None:
            api = version = client_id = UNKNOWN
        else:
            version = row["api_version"]  # an int: made text when the families are made
            client_id = row["client_id"]
            if client_id is None:
                client_id = NULL_CLIENT_ID
        broker = row["broker"]
        raw = (api, version, client_id, broker)
        cell = self._exchange_keys.get(raw)
        if cell is None:
            cell = self._exchange_cell(raw)
        cell[0] += 1
        if row["failed"]:
            cell[1] += 1
        status = row["status"]
        if status == NO_RESPONSE:
            cell[2] += 1
        elif status == NO_REQUEST:
            cell[3] += 1
        if row["request_error"] or row["response_error"]:
            cell[4] += 1
        cell[5] += row["request_bytes"] or 0
        cell[6] += row["response_bytes"] or 0
        codes = row["error_codes"]
        if codes:
            self._add_errors(api, codes)
        latency = row["latency_ns"]
        if latency is not None or observations:
            lat = self._latency_keys.get((api, broker))
            if lat is None:
                lat = self._latency_cell(api, broker)
            if latency is not None:
                k = bucket_of(latency)
                at = 2 if row["wait"] else 0
                buckets = lat[at]
                buckets[k] = buckets.get(k, 0) + 1
                lat[at + 1] += latency
            for ob in observations:
                if ob[0] == "th":
                    lat[4] += ob[3]
                    lat[5] += 1

    def _exchange_cell(self, raw: tuple) -> list[int]:
        key = self._capped(raw, EXCHANGE_LABELS)
        cell = self.exchanges.get(key)
        if cell is None:
            cell = self.exchanges[key] = [0] * len(CELL)
        if key == raw:
            self._exchange_keys[raw] = cell
        return cell

    def _latency_cell(self, api: str, broker: str) -> list:
        raw = (api, broker)
        key = self._capped(raw, LATENCY_LABELS)
        cell = self.latency.get(key)
        if cell is None:
            cell = self.latency[key] = _latency_cell()
        if key == raw:
            self._latency_keys[raw] = cell
        return cell

    def _add_errors(self, api: str, codes) -> None:
        errors = self.errors
        for name in codes:
            key = self._capped((api, name), ERROR_LABELS)
            errors[key] = errors.get(key, 0) + 1

    def _capped(self, raw: tuple, labels: tuple) -> tuple:
        caps = self.caps
        if caps is None:
            return raw
        return tuple(caps.value(label, value) for label, value in zip(labels, raw))

    # -- merging and folding (a capture read whole)

    def merge(self, other: MetricsState) -> MetricsState:
        for key, cell in other.exchanges.items():
            have = self.exchanges.get(key)
            if have is None:
                self.exchanges[key] = list(cell)
            else:
                for i, n in enumerate(cell):
                    have[i] += n
        for key, cell in other.latency.items():
            _merge_latency(self.latency.setdefault(key, _latency_cell()), cell)
        for key, n in other.errors.items():
            self.errors[key] = self.errors.get(key, 0) + n
        return self

    def folded(self, caps: LabelCaps) -> MetricsState:
        """A new state with at most each cap's values per label: the busiest by exchanges (ties: the
        smaller), the others folded into OTHER and counted in `caps.folds` (one per exchange, error or
        latency cell folded, as live folding counts observations)."""
        weights: dict[str, dict] = {label: {} for label in EXCHANGE_LABELS + ("error",)}
        for key, cell in self.exchanges.items():
            for label, value in zip(EXCHANGE_LABELS, key):
                weights[label][value] = weights[label].get(value, 0) + cell[0]
        for (_, error), n in self.errors.items():
            weights["error"][error] = weights["error"].get(error, 0) + n
        for label, table in weights.items():
            caps.kept[label] = ranked(table, caps.caps[label])
        out = MetricsState(caps)
        for key, cell in self.exchanges.items():
            target = out.exchanges.setdefault(_fold(caps, EXCHANGE_LABELS, key, cell[0]), [0] * len(CELL))
            for i, n in enumerate(cell):
                target[i] += n
        for key, cell in self.latency.items():
            weight = sum(cell[0].values()) + sum(cell[2].values()) + cell[5]
            _merge_latency(out.latency.setdefault(_fold(caps, LATENCY_LABELS, key, weight), _latency_cell()), cell)
        for key, n in self.errors.items():
            fkey = _fold(caps, ERROR_LABELS, key, n)
            out.errors[fkey] = out.errors.get(fkey, 0) + n
        return out


def _fold(caps: LabelCaps, labels: tuple, key: tuple, weight: int) -> tuple:
    out = []
    for label, value in zip(labels, key):
        if value in caps.kept[label]:
            out.append(value)
        else:
            out.append(OTHER)
            caps.folds[label] += weight
    return tuple(out)


def _merge_latency(have: list, cell: list) -> None:
    for at in (0, 2):
        buckets = have[at]
        for k, n in cell[at].items():
            buckets[k] = buckets.get(k, 0) + n
    for i in (1, 3, 4, 5):
        have[i] += cell[i]


class MeteredAggregator(Aggregator):
    """An Aggregator that also keeps a MetricsState of every exchange it counts, with no caps (a
    capture read whole: `kwire stats --metrics`, whose workers' parts merge exactly)."""

    def __init__(self) -> None:
        super().__init__()
        self.metrics = MetricsState()

    def add(self, row: dict, partitions=(), names=(), observed=()) -> None:
        super().add(row, partitions, names, observed)
        self.metrics.add(row, observed)

    def merge(self, other: Aggregator) -> MeteredAggregator:
        super().merge(other)
        if isinstance(other, MeteredAggregator):
            self.metrics.merge(other.metrics)
        return self
