"""kwire's one table of facts: every fact an exchange or a partition carries, and every Prometheus metric family,
declared once with its name, unit, type, nullability and meaning.

From these declarations come the columns of an exchange's and a partition's row (kwire.native.exchange_row), the Arrow
and Spark schemas of the Parquet tables and of the data source (kwire.spark.results, kwire.spark.schemas), the
families the metrics service and `stats --metrics` write (kwire.live.metric_families: name, type, unit, labels and
HELP text), and the tables of docs/vocabulary.md (scripts/gen_vocabulary.py writes them; tests/test_vocabulary.py
checks each output against them). A leaf module: it imports nothing of kwire, so every layer may read it.

- `Fact(name, unit, type, nullable, outputs, meaning)`: `type` is one of TYPES (the value's type in every output:
  int64, int32, float64, string, bool, strings (a list of text), object (JSON Lines only)); `outputs` the places
  the fact appears: "jsonl" (a key of every JSON Lines object), "parquet" (a column of the Parquet table and of
  the data source), "stats" (a key of every exchange the stats document lists).
- `Metric(name, type, unit, labels, help)`: `name` as prometheus_client is given it (a counter's samples add
  `_total`: `Metric.exposed`), `type` counter, gauge or histogram, `unit` "" or a base unit (bytes, seconds).
- `DocKey(path, unit, type, nullable, meaning, ...)`: a key of the stats document (`kwire stats --json`, `kwire spark
  --json`), at `path` (below). STATS_DOCUMENT declares every key once; an object of a `shape` (SHAPES: the *figures*
  of totals, apis, versions, client ids and brokers; an exchange row; ...) has that shape's keys below it, declared
  once for all its places (`stats_keys()` gives every path). A key kept for one release under its old name is
  declared `deprecated` (the path of the key that replaces it, beside it); one that always holds the figure of
  another place, `same_as` (that path); one no committed capture shows, `rare` (why).
  docs/vocabulary.md's "stats document" tables are made from these; tests/test_vocabulary.py walks the documents of
  every committed capture against them (every key declared, every declared key seen, types, nullability, units,
  the deprecated keys' values).
- LIVE_DOCUMENT declares the keys of `kwire live --json` (kwire.live.report.final_document) and FINDINGS_LOG those
  the findings log puts in front of a finding (kwire.live.findings_log; the finding's own keys are the stats
  document's `findings[]`): DocKeys too, `live_keys()` and `findings_log_keys()` giving every path. Their tables
  in docs/vocabulary.md come from them, and tests/live/test_vocabulary.py walks what `kwire live` writes on
  committed captures against them.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPES = ("int64", "int32", "float64", "string", "bool", "strings", "object")
# where a fact appears (docs/vocabulary.md's columns)
JSONL, PARQUET, STATS = "jsonl", "parquet", "stats"
OUTPUTS = (JSONL, PARQUET, STATS)


@dataclass(frozen=True)
class Fact:
    name: str
    unit: str
    type: str
    nullable: bool
    outputs: tuple[str, ...]
    meaning: str

    def __post_init__(self) -> None:
        assert self.type in TYPES and set(self.outputs) <= set(OUTPUTS), self


# the outputs' combinations the tables below use: all three, JSON Lines and Parquet, JSON Lines only, Parquet only
ALL, JP, J, P = (JSONL, PARQUET, STATS), (JSONL, PARQUET), (JSONL,), (PARQUET,)

# The facts of an exchange, in the order of the Parquet table's columns (those in "parquet"), then the rest.
EXCHANGE_FACTS = (
    Fact("ts_ns", "epoch ns", "int64", False, ALL,
         "the exchange's time: its request's capture time (its response's when no request was captured)"),
    Fact("request_ts_ns", "epoch ns", "int64", True, JP,
         "capture time of the request's last segment; null for `no_request`"),
    Fact("response_ts_ns", "epoch ns", "int64", True, JP,
         "capture time of the response's last segment; null when unanswered"),
    Fact("client", '`"ip:port"`', "string", False, ALL, 'the client\'s end (`"[v6]:port"` for IPv6)'),
    Fact("broker", '`"ip:port"`', "string", False, ALL, "the broker's end"),
    Fact("client_id", "text", "string", True, ALL, "from the request header"),
    Fact("api_key", "integer", "int32", True, JP, "Kafka's api key; null for `no_request`"),
    Fact("api", "text", "string", True, ALL, 'the api\'s name (`"Fetch"`); null for `no_request`'),
    Fact("api_version", "integer", "int32", True, ALL, "the version spoken; null for `no_request`"),
    Fact("correlation_id", "integer", "int32", False, ALL,
         "from the request header (the response's for `no_request`)"),
    Fact("status", "kind", "string", False, ALL,
         "what happened to the exchange: `paired`, `no_response`, `no_request`"),
    Fact("unanswered", "kind", "string", True, ALL,
         "`no_response` only: why kwire stopped waiting (kinds below); null otherwise"),
    Fact("latency_ms", "ms", "float64", True, ALL, "response time minus request time, paired exchanges only"),
    Fact("request_bytes", "bytes", "int64", True, ALL, "the request frame on the wire, length prefix included"),
    Fact("response_bytes", "bytes", "int64", True, ALL, "the response frame on the wire, length prefix included"),
    Fact("error_codes", "list of names", "strings", False, ALL,
         "Kafka's name of every non-zero `ErrorCode` anywhere in the response, sorted, one entry per occurrence; "
         "empty for a version negotiation (an ApiVersions answered UNSUPPORTED_VERSION)"),
    Fact("failed", "boolean", "bool", False, P,
         "not paired, a `malformed` body, or an error code (as `inspect --errors`)"),
    Fact("request_outcome", "kind", "string", True, JP,
         "what happened to the request body (kinds below); null when no request was captured"),
    Fact("response_outcome", "kind", "string", True, JP,
         "what happened to the response body; null when no response was captured"),
    Fact("request_error", "text", "string", True, JP,
         "the text of a request outcome that left its body undecoded (`malformed`, `cut_by_snaplen`, `not_kept`, "
         "`undecryptable`); null otherwise"),
    Fact("response_error", "text", "string", True, JP, "the same for the response"),
    Fact("request_trailing_bytes", "bytes", "int64", False, JP,
         "bytes left after the decoded request body (outcome `trailing_bytes`); 0 otherwise"),
    Fact("response_trailing_bytes", "bytes", "int64", False, JP, "the same for the response"),
    Fact("group_id", "text", "string", True, P, "the first group id the request names"),
    Fact("wait", "boolean", "bool", False, P,
         "a Fetch or ShareFetch answered empty at about its MaxWaitMs (a long poll)"),
    Fact("negotiation", "boolean", "bool", False, P,
         "an ApiVersions answered UNSUPPORTED_VERSION: version negotiation, no error"),
    Fact("closed_by", "side", "string", True, J,
         "`connection_closed` after a FIN or RST only: `broker` or `client`, the side whose FIN or RST came first "
         "(kwire.native.tcp_flows); absent otherwise"),
    Fact("request", "object", "object", True, J,
         "the decoded request body, field names exactly as in Kafka's message schemas; null when not decoded"),
    Fact("response", "object", "object", True, J, "the decoded response body"),
    Fact("connection_id", "integer", "int64", False, J, "kwire's number for the TCP connection (per run)"),
)

# ShareAcknowledge's AcknowledgeType values, and the partition columns that count records by them.
ACK_TYPES = {0: "GAP", 1: "ACCEPT", 2: "RELEASE", 3: "REJECT", 4: "RENEW"}

# The facts of a partition an exchange moved records for or measured (a partition row), in column order.
PARTITION_FACTS = (
    Fact("ts_ns", "epoch ns", "int64", False, P, "the exchange's time (its `ts_ns`)"),
    Fact("api", "text", "string", False, P, "Fetch, Produce, ShareFetch or ShareAcknowledge"),
    Fact("group_id", "text", "string", True, P, "the share group (ShareFetch, ShareAcknowledge); null otherwise"),
    Fact("topic", "text", "string", False, P,
         "the topic's name as the bodies give it (its id when no body of the capture names it)"),
    Fact("partition", "integer", "int32", True, P, "the partition index"),
    Fact("bytes", "bytes", "int64", False, P, "the size of the partition's records field"),
    Fact("records", "records", "int64", False, P,
         "records in its whole, non-control batches (a legacy compressed wrapper counts 0)"),
    Fact("fetch_offset", "offset", "int64", True, P, "the FetchOffset the Fetch asked for; null otherwise"),
    Fact("high_watermark", "offset", "int64", True, P, "the HighWatermark the Fetch response gave; null otherwise"),
    Fact("lag", "records", "int64", True, P, "HighWatermark minus the FetchOffset asked; null but for a Fetch"),
    Fact("acquired", "records", "int64", False, P, "records a ShareFetch acquired"),
    Fact("redelivered", "records", "int64", False, P, "of those, records with DeliveryCount > 1"),
    *(Fact(f"ack_{name.lower()}", "records", "int64", False, P, f"records acknowledged {name}")
      for name in ACK_TYPES.values()),
)
# The Parquet `partitions` table: a partition row's facts, then its exchange's client, broker and correlation_id,
# which with ts_ns join the row to its exchange.
PARTITION_TABLE = PARTITION_FACTS + (
    Fact("client", '`"ip:port"`', "string", False, P, "the exchange's client"),
    Fact("broker", '`"ip:port"`', "string", False, P, "the exchange's broker"),
    Fact("correlation_id", "integer", "int32", False, P, "the exchange's correlation id"),
)


def columns(facts: tuple[Fact, ...], output: str = PARQUET) -> tuple[str, ...]:
    """The names of `facts` that appear in `output`, in order."""
    return tuple(f.name for f in facts if output in f.outputs)


EXCHANGE_COLUMNS = columns(EXCHANGE_FACTS)
PARTITION_COLUMNS = columns(PARTITION_FACTS)


@dataclass(frozen=True)
class Metric:
    name: str
    type: str
    unit: str
    labels: tuple[str, ...]
    help: str

    def __post_init__(self) -> None:
        assert self.type in ("counter", "gauge", "histogram") and self.unit in ("", "bytes", "seconds"), self
        assert not self.unit or self.name.endswith("_" + self.unit), self  # Prometheus: the unit ends the name

    @property
    def exposed(self) -> str:
        """The name the samples carry (a counter's with `_total`)."""
        return self.name + "_total" if self.type == "counter" else self.name


_TRAFFIC = ("api", "api_version", "client_id", "broker")
_API_BROKER = ("api", "broker")
_GROUP = ("group", "protocol")
_FINDING = ("kind", "severity")


def _queue_dropped(unit: str) -> Metric:
    return Metric(f"kwire_queue_dropped_{unit}", "counter", "", (),
                  f"{unit.capitalize()} left out of the figures because kwire fell behind the capture")


METRIC_LIST = (
    Metric("kwire_exchanges", "counter", "", _TRAFFIC,
           "Exchanges (a request and its response, or either alone), as kwire stats counts them"),
    Metric("kwire_request_bytes", "counter", "bytes", _TRAFFIC,
           "Bytes of requests (Kafka frames, length prefix included)"),
    Metric("kwire_response_bytes", "counter", "bytes", _TRAFFIC,
           "Bytes of responses (Kafka frames, length prefix included)"),
    Metric("kwire_failed_exchanges", "counter", "", _API_BROKER,
           "Exchanges with an error code, a decode error or no partner"),
    Metric("kwire_unanswered_requests", "counter", "", _API_BROKER, "Requests never answered (no_response)"),
    Metric("kwire_orphan_responses", "counter", "", _API_BROKER,
           "Responses whose request was not captured (no_request)"),
    Metric("kwire_decode_errors", "counter", "", _API_BROKER, "Exchanges whose request or response did not decode"),
    Metric("kwire_errors", "counter", "", ("api", "error"),
           "Error codes in responses by Kafka's name, one per occurrence"),
    Metric("kwire_request_latency_seconds", "histogram", "seconds", _API_BROKER,
           "Response time minus request time of answered requests, long-poll waits left out"),
    Metric("kwire_long_poll_wait_seconds", "histogram", "seconds", _API_BROKER,
           "Fetch and ShareFetch answered empty at about their MaxWaitMs: how long the broker held them"),
    Metric("kwire_throttle_time_seconds", "counter", "seconds", _API_BROKER, "ThrottleTimeMs of responses, summed"),
    Metric("kwire_throttled_responses", "counter", "", _API_BROKER, "Responses with ThrottleTimeMs > 0"),
    Metric("kwire_fetched_bytes", "counter", "bytes", ("topic",), "Bytes of records fields in Fetch responses"),
    Metric("kwire_fetched_records", "counter", "", ("topic",),
           "Records in Fetch responses (whole, non-control batches)"),
    Metric("kwire_produced_bytes", "counter", "bytes", ("topic",), "Bytes of records fields in Produce requests"),
    Metric("kwire_produced_records", "counter", "", ("topic",),
           "Records in Produce requests (whole, non-control batches)"),
    Metric("kwire_consumer_lag", "gauge", "", ("topic", "partition"),
           "HighWatermark minus the FetchOffset asked, latest sample (records)"),
    Metric("kwire_consumer_lag_max", "gauge", "", ("topic", "partition"),
           "The largest consumer lag sample since the start (records)"),
    Metric("kwire_end_to_end_latency_seconds", "histogram", "seconds", ("topic", "client_id"),
           "From the Produce request on the wire to the answer that first delivered its offsets to the consumer"),
    Metric("kwire_consumer_time_lag_seconds", "gauge", "seconds", ("topic", "partition", "client_id"),
           "How old the oldest record not yet delivered to the consumer is, latest sample"),
    Metric("kwire_group_committed_time_lag_seconds", "gauge", "seconds", ("group", "topic", "partition"),
           "How old the record at the group's committed offset was when its latest commit was accepted"),
    Metric("kwire_share_acquired_records", "counter", "", ("group",),
           "Records acquired by share consumers (ShareFetch)"),
    Metric("kwire_share_redelivered_records", "counter", "", ("group",), "Acquired records with DeliveryCount > 1"),
    Metric("kwire_share_acknowledged_records", "counter", "", ("group", "type"),
           "Records acknowledged, by AcknowledgeType"),
    Metric("kwire_share_lock_expiries", "gauge", "", ("group",),
           "Deliveries that ended with no acknowledgement taken (share_redelivery findings' lock_expired)"),
    Metric("kwire_group_generation", "gauge", "", _GROUP,
           "The latest generation (classic) or member epoch of a group"),
    Metric("kwire_group_members", "gauge", "", _GROUP, "Members in the group's latest generation"),
    Metric("kwire_group_generations", "gauge", "", _GROUP, "Generations seen since the start (the newest 256 kept)"),
    Metric("kwire_group_members_expired", "gauge", "", _GROUP, "Members that vanished without leaving"),
    Metric("kwire_findings", "gauge", "", _FINDING, "Findings known since the start (kwire stats' findings)"),
    Metric("kwire_findings_last_timestamp_seconds", "gauge", "seconds", _FINDING,
           "The latest end (else start) of those findings, capture time"),
    Metric("kwire_packets", "counter", "", (), "Packets captured"),
    Metric("kwire_captured_bytes", "counter", "bytes", (), "Bytes of the packets captured, as on the wire"),
    Metric("kwire_truncated_packets", "counter", "", (), "Packets cut by the snap length"),
    Metric("kwire_tcp_gaps", "counter", "", (), "TCP holes (bytes never captured)"),
    Metric("kwire_tcp_gap_bytes", "counter", "bytes", (), "Bytes in TCP holes"),
    Metric("kwire_kafka_connections", "counter", "", (), "TCP connections seen to carry Kafka"),
    Metric("kwire_tls_connections", "counter", "", (), "TLS connections seen (counted when they close)"),
    Metric("kwire_tls_decrypted_connections", "counter", "", (), "TLS connections decrypted with the key log"),
    Metric("kwire_kernel_drops", "counter", "", (), "Packets the kernel dropped (capture ring full)"),
    _queue_dropped("exchanges"),
    _queue_dropped("packets"),
    Metric("kwire_tcp_connections_open", "gauge", "", (), "TCP connections open"),
    Metric("kwire_requests_in_flight", "gauge", "", (), "Requests waiting for their response"),
    Metric("kwire_figures_lag_max_seconds", "gauge", "seconds", (),
           "The longest a batch of exchanges waited between the capture and the figures"),
    Metric("kwire_capture_start_timestamp_seconds", "gauge", "seconds", (),
           "The first exchange's time (capture clock)"),
    Metric("kwire_capture_end_timestamp_seconds", "gauge", "seconds", (),
           "The last request or response time (capture clock)"),
    Metric("kwire_label_values", "gauge", "", ("label",), "Distinct values a label keeps (at most its cap)"),
    Metric("kwire_label_cap", "gauge", "", ("label",),
           "The most distinct values a label keeps; the rest are 'other'"),
    Metric("kwire_label_folds", "counter", "", ("label",),
           "Exchanges, error codes and latencies whose label value was folded into 'other' (client_id, broker, "
           "api, api_version, error)"),
    Metric("kwire_label_values_folded", "gauge", "", ("label",),
           "Distinct values folded into 'other' (topic, partition, group)"),
    Metric("kwire_exporter_connections", "counter", "", ("outcome",),
           "Connections to the metrics service, by how they ended (docs/metrics.md)"),
    Metric("kwire_exporter_connections_open", "gauge", "", (), "Connections the metrics service holds now"),
    Metric("kwire_exporter_connections_cap", "gauge", "", (),
           "The most connections the metrics service holds; one more evicts the one waiting longest for its "
           "request"),
)
METRICS = {m.name: m for m in METRIC_LIST}
assert len(METRICS) == len(METRIC_LIST)


# -- the stats document ---------------------------------------------------------------------------------------------

# A DocKey's type: the JSON value's (int, float, string, bool; object: the keys declared below it; map: keys that are
# names or numbers from the traffic, its values declared at `<name>`; list: its items declared at `[]`), or several
# joined by "|" (the key holds one of them).
DOC_TYPES = ("int", "float", "string", "bool", "object", "map", "list")


@dataclass(frozen=True)
class DocKey:
    path: str  # keys joined by "."; "<name>" stands for any key of a map, "[]" for a list's items
    unit: str
    type: str
    nullable: bool
    meaning: str
    shape: str = ""  # an object of this shape (SHAPES): its keys are declared there, below this path
    rare: str = ""  # why no committed capture's document shows this key
    deprecated: str = ""  # an old name, kept for one release: the path of the key that replaces it
    same_as: str = ""  # the path of the key this one always equals (one figure, two places)

    def __post_init__(self) -> None:
        assert all(t in DOC_TYPES for t in self.type.split("|")), self
        assert not self.shape or self.type.split("|")[0] == "object", self

    @property
    def name(self) -> str:
        """The key's own name: its last step that is not a map's key or a list's items."""
        steps = [s for s in segments(self.path) if s != "[]" and not s.startswith("<")]
        return steps[-1] if steps else ""


def segments(path: str) -> list[str]:
    """A DocKey path's steps: `findings[].evidence[].ts_ns` is findings, [], evidence, [], ts_ns."""
    out = []
    for part in path.split("."):
        name = part.rstrip("[]")
        if name:
            out.append(name)
        out += ["[]"] * ((len(part) - len(name)) // 2)
    return out


def _k(path, unit, type_, nullable, meaning, **more) -> DocKey:
    return DocKey(path, unit, type_, nullable, meaning, **more)


def _old(path, unit, type_, nullable, new, meaning) -> DocKey:
    """A deprecated key: `new` is its replacement's path."""
    return DocKey(path, unit, type_, nullable, meaning, deprecated=new)


def _ms_of(stem: str, meaning: str, *, nullable: bool = False, prefix: str = "") -> tuple[DocKey, DocKey]:
    """A duration in ms (`STEM_ms`) and its deprecated copy in seconds (`STEM_s`)."""
    new, old = f"{prefix}{stem}_ms", f"{prefix}{stem}_s"
    return (_k(new, "ms", "float", nullable, meaning),
            _old(old, "s", "float", nullable, new, f"`{stem}_ms` in seconds (to the ms)"))


def _instant(new: str, old: str, meaning: str, *, nullable: bool = False, digits: int = 9,
             old_type: str = "float") -> tuple[DocKey, DocKey]:
    """An instant in epoch ns and its deprecated copy in epoch seconds (`digits` decimals; 0: whole seconds)."""
    how = f"{digits} decimals" if digits else "whole seconds"
    return (_k(new, "epoch ns", "int", nullable, meaning),
            _old(old, "epoch s", old_type, nullable, new, f"`{new.rsplit('.', 1)[-1]}` in epoch seconds ({how})"))


_STATS_TYPES = {"int64": "int", "int32": "int", "float64": "float", "string": "string", "bool": "bool",
                "strings": "list"}


_NO_CODES = "in `unanswered.first` never: an exchange nobody answered has no error code"


def _exchange_row() -> tuple[DocKey, ...]:
    """An exchange in `slowest` and `unanswered.first`: the facts declared for the stats document (STATS)."""
    out = []
    for f in EXCHANGE_FACTS:
        if STATS in f.outputs:
            out.append(DocKey(f.name, f.unit, _STATS_TYPES[f.type], f.nullable, f.meaning))
            if f.type == "strings":
                out.append(DocKey(f.name + "[]", "name", "string", False, "one of them", rare=_NO_CODES))
    out += [_old("ts", "epoch s", "float", False, "ts_ns", "`ts_ns` in epoch seconds (9 decimals)"),
            _old("errors", "list of names", "list", False, "error_codes", "`error_codes`, in the same order"),
            DocKey("errors[]", "name", "string", False, "one of them", deprecated="error_codes[]", rare=_NO_CODES)]
    return tuple(out)


_PERCENTILES = "nearest rank; null when nothing was measured"

SHAPES: dict[str, tuple[DocKey, ...]] = {
    "figures": (
        _k("exchanges", "exchanges", "int", False, "exchanges counted"),
        _k("paired", "exchanges", "int", False, "exchanges with `status` paired"),
        _k("no_response", "exchanges", "int", False,
           "exchanges with `status` no_response: requests whose answer no capture holds, whatever the reason "
           "(`unanswered` says which: no answer expected, the connection closed, the capture ended, ...)"),
        _k("no_request", "exchanges", "int", False, "exchanges with `status` no_request: answers whose request "
                                                   "was not captured"),
        _k("requests_per_s", "exchanges per s", "float", True, "exchanges divided by the whole span (null when it "
                                                               "is 0)"),
        _k("request_bytes", "bytes", "int", False, "request frames on the wire, length prefixes included"),
        _k("response_bytes", "bytes", "int", False, "response frames on the wire, length prefixes included"),
        _k("failed", "exchanges", "int", False, "exchanges with `failed` true"),
        _k("decode_errors", "exchanges", "int", False, "exchanges with a `malformed` body"),
        _k("body_outcomes", "bodies", "map", False, "bodies not simply decoded, by outcome kind"),
        _k("body_outcomes.<kind>", "bodies", "int", False, "bodies of that kind"),
        _k("error_codes", "occurrences", "map", False,
           "every non-zero ErrorCode of the answers by Kafka's name (version negotiations left out)"),
        _k("error_codes.<error>", "occurrences", "int", False, "occurrences of that error code"),
        _old("errors", "occurrences", "map", False, "error_codes", "`error_codes`"),
        _old("errors.<error>", "occurrences", "int", False, "error_codes.<error>", "`error_codes.<error>`"),
        _k("latency_ms", "ms", "object", False, "latency of the served paired exchanges (long polls that waited "
                                                "left out)"),
        _k("latency_ms.count", "exchanges", "int", False, "exchanges measured"),
        *(_k(f"latency_ms.{p}", "ms", "float", True, f"{p}, {_PERCENTILES}") for p in ("p50", "p90", "p99", "max")),
        _k("waits", "-", "object", False, "Fetch and ShareFetch answered empty after at least 80 % of their "
                                           "MaxWaitMs (long polls)"),
        _k("waits.count", "exchanges", "int", False, "long polls"),
        _k("waits.p50_ms", "ms", "float", True, "their median wait (null when none)"),
        _k("waits.max_ms", "ms", "float", True, "their longest wait (null when none)"),
        _k("negotiations", "exchanges", "int", False, "ApiVersions answered UNSUPPORTED_VERSION alone: version "
                                                      "negotiation, neither an error nor failed"),
    ),
    "exchange row": _exchange_row(),
    "acknowledgements": tuple(_k(name, "records", "int", False, f"records acknowledged {name}")
                              for name in ACK_TYPES.values()),
    "percentiles": tuple(_k(p, "ms", "float", True, f"{p}, {_PERCENTILES}") for p in ("p50", "p90", "p99", "max")),
    "time lag": (
        _k("last", "ms", "float", True, "the latest sample"),
        _k("max", "ms", "float", True, "the largest sample"),
        _k("samples", "samples", "int", False, "how many were sampled"),
    ),
    "series": (
        _k("kind", "kind", "string", False, "`fetch` (a client id), `share` (a share group) or `commits` (a group)"),
        _k("name", "text", "string", False, "the client id, share group or group"),
        _k("values_ms", "ms", "list", False, "per bucket, the largest value (to the µs)"),
        _k("values_ms[]", "ms", "float", True, "a bucket's; null where nothing fell"),
    ),
    "bound": (
        _k("seen", "items", "int", False, "seen"),
        _k("kept", "items", "int", False, "kept"),
        _k("cap", "items", "int", False, "the most kept"),
    ),
    "cap": (
        _k("cap", "keys", "int", False, "the most keys the table keeps (the smallest)"),
        _k("folded", "boolean", "bool", False, "whether more came: their figures are merged into one `(others)` row"),
    ),
}


def _figures(path: str, meaning: str, **more) -> DocKey:
    return _k(path, "-", "object", False, meaning, shape="figures", **more)


_SPAN = (
    _k("span", "-", "object", False, "when the traffic happened"),
    *_instant("span.start_ts_ns", "span.start", "the first exchange's time (null without exchanges)", nullable=True),
    *_instant("span.end_ts_ns", "span.end", "the last request or response time (null without exchanges)",
              nullable=True),
    _k("span.duration_ms", "ms", "float", False, "`end_ts_ns - start_ts_ns`"),
    _old("span.seconds", "s", "float", False, "span.duration_ms", "`duration_ms` in seconds (9 decimals)"),
)

_TRAFFIC = (
    _figures("totals", "the *figures* of every exchange"),
    _k("apis", "-", "map", False, "api name → an api entry; answers whose request was not seen under `(unknown)`"),
    _figures("apis.<api>", "the *figures* of the api's exchanges, and:"),
    _k("apis.<api>.versions", "-", "map", False, "version (as a string) → its *figures*"),
    _figures("apis.<api>.versions.<version>", "the *figures* of that version"),
    _k("apis.<api>.latency_histogram", "-", "list", False,
       "the non-empty latency buckets of the served exchanges, 4 per doubling (upper edges round(1000·2^(k/4)) ns)"),
    _k("apis.<api>.latency_histogram[]", "[ms, ms, exchanges]", "list", False, "`[lower_ms, upper_ms, count]`"),
    _k("apis.<api>.latency_histogram[][]", "ms or exchanges", "float|int", False, "the bucket's edges, its count"),
    _k("client_ids", "-", "map", False, "client id → *figures* (`(null)`: a null client id; `(unknown)`: no "
                                        "request)"),
    _figures("client_ids.<client_id>", "the *figures* of the client id's exchanges"),
    _k("brokers", "-", "map", False, '`"ip:port"` → *figures*'),
    _figures("brokers.<broker>", "the *figures* of the broker's exchanges"),
    _k("partitions", "-", "map", False, "topic → partition (as a string) → a partition entry"),
    _k("partitions.<topic>", "-", "map", False, "the topic's partitions (its name where a Metadata answer named "
                                                "the id)"),
    _k("partitions.<topic>.<partition>", "-", "object", False, "a partition entry"),
    *(_k(f"partitions.<topic>.<partition>.{name}", unit, "int", False, meaning) for name, unit, meaning in (
        ("fetches", "responses", "Fetch responses that carried the partition"),
        ("fetch_bytes", "bytes", "their records fields"), ("fetch_records", "records", "their records"),
        ("lag_samples", "samples", "lag measurements"),
        ("produces", "requests", "Produce requests that carried the partition"),
        ("produce_bytes", "bytes", "their records fields"), ("produce_records", "records", "their records"),
        ("share_bytes", "bytes", "records fields ShareFetch answers carried"),
        ("share_records", "records", "their records"), ("acquired", "records", "records acquired by share consumers"),
        ("redelivered", "records", "of those, records with DeliveryCount > 1"))),
    _k("partitions.<topic>.<partition>.lag_last", "records", "int", True, "the latest lag (ties: the larger)"),
    _k("partitions.<topic>.<partition>.lag_max", "records", "int", True, "the largest lag"),
    _k("partitions.<topic>.<partition>.lag_timeline", "records", "list", False,
       "only when lag was measured: the highest lag per `timeline` bucket"),
    _k("partitions.<topic>.<partition>.lag_timeline[]", "records", "int", True, "a bucket's; null where none"),
    _k("partitions.<topic>.<partition>.acknowledgements", "records", "object", False,
       "records acknowledged per AcknowledgeType", shape="acknowledgements"),
    _k("share_groups", "-", "map", False, "share group id → a share group entry (`(unknown)`: no group id)"),
    _k("share_groups.<group>", "-", "object", False, "a share group entry"),
    _k("share_groups.<group>.share_fetches", "exchanges", "int", False, "ShareFetch exchanges of the group"),
    _k("share_groups.<group>.share_acknowledges", "exchanges", "int", False, "ShareAcknowledge exchanges"),
    _k("share_groups.<group>.records", "records", "int", False, "records its ShareFetch answers carried"),
    _k("share_groups.<group>.acquired", "records", "int", False, "records acquired"),
    _k("share_groups.<group>.redelivered", "records", "int", False, "of those, with DeliveryCount > 1"),
    _k("share_groups.<group>.acknowledgements", "records", "object", False, "records acknowledged per "
                                                                            "AcknowledgeType",
       shape="acknowledgements"),
    _k("unanswered", "-", "object", False, "the requests never answered (`status` no_response)"),
    _k("unanswered.count", "exchanges", "int", False, "how many", same_as="totals.no_response"),
    _k("unanswered.by_api", "exchanges", "map", False, "api → how many (`apis.<api>.no_response`, those not 0)"),
    _k("unanswered.by_api.<api>", "exchanges", "int", False, "the api's", same_as="apis.<api>.no_response"),
    _k("unanswered.by_reason", "exchanges", "map", False, "`unanswered` kind → how many"),
    _k("unanswered.by_reason.<kind>", "exchanges", "int", False, "those of that kind"),
    _k("unanswered.first", "-", "list", False, "the first 20 by time"),
    _k("unanswered.first[]", "-", "object", False, "an exchange row", shape="exchange row"),
    _k("slowest", "-", "list", False, "the 20 slowest served exchanges (ties: the earlier)"),
    _k("slowest[]", "-", "object", False, "an exchange row", shape="exchange row"),
    _k("timeline", "-", "object", False, "counts over time, in buckets"),
    *_instant("timeline.start_ts_ns", "timeline.start", "when the first bucket starts (a whole second)", digits=0,
              old_type="int"),
    _k("timeline.bucket_ms", "ms", "int", False, "the buckets' width: a power of two seconds, at most 120 buckets"),
    _old("timeline.bucket_s", "s", "int", False, "timeline.bucket_ms", "`bucket_ms` in seconds"),
    *(item for name, unit, meaning in (("exchanges", "exchanges", "exchanges"), ("failed", "exchanges", "failed "
                                                                                 "exchanges"),
                                       ("request_bytes", "bytes", "request bytes"),
                                       ("response_bytes", "bytes", "response bytes"))
      for item in (_k(f"timeline.{name}", unit, "list", False, f"{meaning} per bucket"),
                   _k(f"timeline.{name}[]", unit, "int", False, "a bucket's"))),
)

_G, _GEN, _MEMBER = "groups.<group>", "groups.<group>.generations[]", "groups.<group>.members.<member_id>"
_GROUPS = (
    _k("groups", "-", "map", False, "consumer group id → a group (docs/groups.md)"),
    _k(_G, "-", "object", False, "a group"),
    _k(f"{_G}.protocol", "kind", "string", True, "`classic`, `consumer` or `share`: what most of its requests used"),
    _k(f"{_G}.coordinator", '`"ip:port"`', "string", True, "the broker that answered most of its coordinator "
                                                          "requests"),
    _k(f"{_G}.generations", "-", "list", False, "its generations, oldest first"),
    _k(_GEN, "-", "object", False, "a generation"),
    _k(f"{_GEN}.generation", "integer", "int", False, "the classic GenerationId, or the member epoch (KIP-848, share)"),
    *_instant(f"{_GEN}.start_ts_ns", f"{_GEN}.start", "the first answer that gave it, else the first request naming "
                                                      "it", digits=6),
    *_instant(f"{_GEN}.end_ts_ns", f"{_GEN}.end", "the next generation's start (null for the last)", nullable=True,
              digits=6),
    _k(f"{_GEN}.leader", "text", "string", True, "classic: the leader's member id"),
    _k(f"{_GEN}.protocol_name", "text", "string", True, "classic: the assignor the JoinGroup answer named"),
    *_ms_of("rebalance", "how long the group was without a stable assignment before it (first JoinGroup to last "
                         "SyncGroup answer; KIP-848, share: first to last member reaching the epoch); 0 when the wire "
                         "does not show both", prefix=f"{_GEN}."),
    _k(f"{_GEN}.joined", "member ids", "list", True, "members in it and not in the one before (null for the first)"),
    _k(f"{_GEN}.joined[]", "text", "string", False, "a member id"),
    _k(f"{_GEN}.gone", "member ids", "list", True, "members in the one before and not in it (null for the first)"),
    _k(f"{_GEN}.gone[]", "text", "string", False, "a member id"),
    _k(f"{_GEN}.members", "-", "list", False, "its members, by member id"),
    _k(f"{_GEN}.members[]", "-", "object", False, "a member of the generation"),
    _k(f"{_GEN}.members[].member_id", "text", "string", False, "its member id"),
    _k(f"{_GEN}.members[].client_id", "text", "string", True, "its client id"),
    _k(f"{_GEN}.members[].client", '`"ip:port"`', "string", True, "the connection its group requests came on"),
    _k(f"{_GEN}.members[].assignment", "-", "map", False, "topic → its partitions, in that generation"),
    _k(f"{_GEN}.members[].assignment.<topic>", "partitions", "list", False, "the partitions"),
    _k(f"{_GEN}.members[].assignment.<topic>[]", "integer", "int", False, "a partition"),
    _k(f"{_G}.members", "-", "map", False, "member id → a member"),
    _k(_MEMBER, "-", "object", False, "a member"),
    _k(f"{_MEMBER}.client_id", "text", "string", True, "its client id"),
    _k(f"{_MEMBER}.client", '`"ip:port"`', "string", True, "the connection its group requests came on"),
    *_instant(f"{_MEMBER}.first_seen_ts_ns", f"{_MEMBER}.first_seen", "its first group request", nullable=True,
              digits=6),
    *_instant(f"{_MEMBER}.last_seen_ts_ns", f"{_MEMBER}.last_seen", "its last group request", nullable=True,
              digits=6),
    _k(f"{_MEMBER}.left", "kind", "string", True, "`leave`, `expired` (stopped, and a generation formed without it) "
                                                  "or null"),
    _k(f"{_G}.commits", "-", "map", False, "topic → partition → the latest offset committed"),
    _k(f"{_G}.commits.<topic>", "-", "map", False, "the topic's partitions (as strings)"),
    _k(f"{_G}.commits.<topic>.<partition>", "offset", "int", False, "the latest offset committed"),
    _k(f"{_G}.rebalance_in_progress", "answers", "int", False, "REBALANCE_IN_PROGRESS answers to its requests"),
)

_F = "findings[]"


def _f(name, unit, type_, nullable, meaning, **more) -> DocKey:
    return DocKey(f"{_F}.{name}", unit, type_, nullable, meaning, **more)


_FINDINGS = (
    _k("findings", "-", "list", False, "the diagnoses, most severe first (then by start), the first 200 "
                                       "(docs/findings.md)"),
    _k(_F, "-", "object", False, "a finding: the keys every finding has, and its kind's (finding_kinds.KINDS)"),
    _f("kind", "kind", "string", False, "which finding"),
    _f("severity", "kind", "string", False, "`critical`, `warning` or `info`"),
    _f("summary", "text", "string", False, "one sentence naming what it saw"),
    *_instant(f"{_F}.start_ts_ns", f"{_F}.start", "when it starts", nullable=True, digits=6),
    *_instant(f"{_F}.end_ts_ns", f"{_F}.end", "when it ends", nullable=True, digits=6),
    _f("evidence", "-", "list", False, "up to 10 exchanges that prove it, in time order"),
    _f("evidence[]", "-", "object", False, "an exchange to look up in `kwire inspect`"),
    *_instant(f"{_F}.evidence[].ts_ns", f"{_F}.evidence[].ts", "the exchange's time (its `ts_ns`)", digits=6),
    _f("evidence[].client", '`"ip:port"`', "string", False, "its client"),
    _f("evidence[].broker", '`"ip:port"`', "string", False, "its broker"),
    _f("evidence[].api", "text", "string", True, "its api"),
    _f("evidence[].correlation_id", "integer", "int", False, "its correlation id"),
    # the keys of the kinds (docs/findings.md says which kind has which)
    _f("after_api", "text", "string", False, "client_hangup: the api of the answer the client hung up after"),
    _f("api", "text", "string", True, "the api involved"),
    _f("api_version", "integer", "int", True, "the version involved (null for rules over many)"),
    _f("apis", "names", "list", False, "slow_broker: the apis of its slow requests"),
    _f("apis[]", "text", "string", False, "an api"),
    _f("archived", "records", "int", False, "share_redelivery: records never accepted, rejected or delivered twice"),
    _f("attempts", "sends", "int", False, "produce_retry: the most sends of one batch"),
    _f("baseline_p50_ms", "ms", "float", True, "slow_broker: the broker's median outside its slow windows"),
    _f("batches", "batches", "int", False, "produce_retry: batches sent more than once"),
    *_ms_of("behind", "metadata_behind: how long its metadata stayed behind", prefix=f"{_F}."),
    _f("broker", '`"ip:port"`', "string", False, "the broker involved"),
    _f("broker_id", "integer", "int", False, "the broker's id (KRaft)"),
    _f("brokers", "addresses", "list", False, "protocol_violation: the brokers involved"),
    _f("brokers[]", '`"ip:port"`', "string", False, "a broker"),
    _f("change", "kind", "string", False, "admin_change: the destructive kind of change"),
    _f("cites", "text", "string", False, "protocol_violation: Kafka's message definition or the KIP"),
    _f("client", '`"ip:port"`', "string", True, "the client involved"),
    _f("client_id", "text", "string", True, "the client id involved"),
    _f("client_ids", "names", "list", False, "the client ids involved"),
    _f("client_ids[]", "text", "string", True, "a client id"),
    _f("client_software", "text", "string|list", True, "the clients' ClientSoftwareName/Version (protocol_violation: "
                                                        "a list)"),
    _f("client_software[]", "text", "string", True, "one client's"),
    _f("clients", "clients", "int|list", False, "rebalance_storm: how many clients; admin_change: their addresses"),
    _f("clients[]", '`"ip:port"`', "string", False, "a client"),
    _f("correlation_id", "integer", "int", False, "client_silenced: the answer's correlation id"),
    _f("count", "items", "int", False, "how many (bodies, exchanges, answers, joins, changes: as the kind says)"),
    _f("detail", "text", "string", False, "protocol_violation: the first instance in words"),
    _f("epoch", "integer", "int", False, "quorum_leader_change: the new leader's epoch"),
    _f("error", "text", "string", False, "the error code's name (duplicate_write: or `no_response`)"),
    *_ms_of("fenced", "broker_fenced: how long until it was unfenced (null: not in the capture)", nullable=True,
            prefix=f"{_F}."),
    _f("generations", "generations", "int|list", False,
       "rebalance_storm: how many; join_left_behind: those formed without it (at most 20)"),
    _f("generations[]", "integer", "int", False, "a generation"),
    _f("group_id", "text", "string", False, "the group involved"),
    _f("high_watermark", "offset", "int", False, "transaction_stall: the partition's high watermark"),
    _f("idempotent", "boolean", "bool", False, "produce_retry: the batches carry a producer id and sequence"),
    _f("joins", "-", "list", False, "join_left_behind: its JoinGroups"),
    _f("joins[]", "-", "object", False, "a JoinGroup"),
    *_instant(f"{_F}.joins[].ts_ns", f"{_F}.joins[].ts", "its time", digits=6),
    _f("joins[].correlation_id", "integer", "int", False, "its correlation id"),
    *_ms_of("answered", "how long until its answer (null: never answered)", nullable=True, prefix=f"{_F}.joins[]."),
    _f("last_stable_offset", "offset", "int", False, "transaction_stall: where the consumers were held"),
    _f("leader_id", "integer", "int", False, "quorum_leader_change: the new leader"),
    _f("lock_expired", "deliveries", "int", False, "share_redelivery: deliveries that ended with no acknowledgement"),
    _f("max_offsets", "offsets", "int", False, "metadata_behind: the largest shortfall"),
    _f("member_id", "text", "string", True, "the member involved"),
    _f("not_read", "requests", "int", False, "admin_change: requests kwire could not read"),
    _f("offsets", "-", "list", False, "duplicate_write: `[first, second]` offsets of each record written twice"),
    _f("offsets[]", "offsets", "list", False, "a record's two offsets"),
    _f("offsets[][]", "offset", "int", True, "an offset (null: not known)"),
    _f("operations", "names", "list", False, "admin_change: the operations"),
    _f("operations[]", "kind", "string", False, "an operation"),
    _f("p50_ms", "ms", "float", True, "slow_broker: the slow window's median latency"),
    _f("partition", "integer", "int", False, "the partition involved"),
    _f("partitions", "-", "map", False, "member_expired: topic → the partitions it held"),
    _f("partitions.<topic>", "partitions", "list", False, "the partitions"),
    _f("partitions.<topic>[]", "integer", "int", False, "a partition"),
    _f("previous_epoch", "integer", "int", False, "quorum_leader_change: the leader's epoch before"),
    _f("previous_leader_id", "integer", "int", False, "quorum_leader_change: the leader before"),
    _f("principal", "text", "string", True, "admin_change: the SASL principal"),
    _f("producer_client", '`"ip:port"`', "string", True, "the connection that first used the producer id"),
    _f("producer_client_id", "text", "string", True, "the client id that first used the producer id"),
    _f("producer_id", "integer", "int", True, "the producer id involved"),
    *_ms_of("quiet", "client_silenced: how long the client stayed quiet", prefix=f"{_F}."),
    _f("reaction", "kind", "string", False, "error_burst: what the clients did after most errors"),
    _f("reactions", "-", "map", False, "error_burst: reaction → how often"),
    _f("reactions.<reaction>", "moments", "int", False, "per client and 100 ms of errors"),
    _f("read_as", "text", "string", True, "client_silenced: the layout its throttle was read in"),
    _f("read_twice", "records", "int", False, "duplicate_write: records a consumer read both copies of"),
    _f("reassigned", "boolean", "bool", False, "member_expired: all its partitions were handed on"),
    _f("rebalance_timeout_ms", "ms", "int", True, "the RebalanceTimeoutMs its JoinGroups stated"),
    *_ms_of("rebalancing", "rebalance_storm: the generations' rebalance times, summed", prefix=f"{_F}."),
    _f("records", "records", "int", False, "records involved"),
    _f("redelivered", "-", "map", False, "share_redelivery: offset → its delivery count"),
    _f("redelivered.<offset>", "deliveries", "int", False, "the delivery count"),
    _f("refused", "requests", "int", False, "admin_change: requests the broker refused"),
    _f("rejected", "records", "int", False, "share_redelivery: records acknowledged REJECT"),
    _f("released", "records", "int", False, "share_redelivery: records acknowledged RELEASE"),
    _f("requested", "boolean", "bool", False, "broker_fenced: the broker asked for it"),
    _f("requests", "requests", "int", False, "slow_broker: requests in its slow windows"),
    *_ms_of("resent_after", "duplicate_write: from the first send to the last resend", prefix=f"{_F}."),
    _f("resource_count", "resources", "int", False, "admin_change: resources named"),
    _f("resources", "names", "list", False, "admin_change: the resources"),
    _f("resources[]", "text", "string", False, "a resource"),
    _f("rule", "kind", "string", False, "protocol_violation: the rule's stable id (docs/rules.md)"),
    _f("says", "text", "string", False, "protocol_violation: the rule, one line"),
    _f("side", "kind", "string", False, "protocol_violation: `client` or `broker`, who broke it"),
    _f("software", "text", "string", True, "protocol_violation: the breaking client's software (null: a broker)"),
    *_ms_of("stalled", "transaction_stall: how long the consumers were held", prefix=f"{_F}."),
    _f("stopped_at", "text", "string", True, "protocol_violation: where decoding stopped (body rules)"),
    _f("throttle_ms", "ms", "int", False, "client_silenced: the answer's ThrottleTimeMs, as read"),
    _f("throttle_total_ms", "ms", "int", False, "throttled: the ThrottleTimeMs of its answers, summed"),
    _old(f"{_F}.throttle_ms_total", "ms", "int", False, f"{_F}.throttle_total_ms", "`throttle_total_ms`"),
    _f("topic", "text", "string", False, "the topic involved"),
    _f("transactional_id", "text", "string", True, "the producer's transactional id"),
    _f("unanswered", "requests", "int", False, "admin_change: change requests nobody answered"),
    *_ms_of("unowned", "member_expired: how long its partitions had no owner", prefix=f"{_F}."),
    _f("violation", "kind", "string", True, "protocol_violation: the body rule's outcome kind, else null"),
    *_ms_of("waited", "join_stuck, join_left_behind: how long it waited (null: still waiting)", nullable=True,
            prefix=f"{_F}."),
    _k("findings_total", "findings", "int", False, "how many findings there are in all (more than `findings` holds "
                                                   "when it was cut)"),
)

_E, _R = "changes.entries[]", "changes.entries[].resources[]"
_NO_TOKENS = "no committed capture holds a delegation token request"


def _r(name, unit, type_, nullable, meaning, **more) -> DocKey:
    return DocKey(f"{_R}.{name}", unit, type_, nullable, meaning, **more)


_CHANGES = (
    _k("changes", "-", "object", False, "who created, altered or deleted what (docs/changes-and-quorum.md)"),
    _k("changes.count", "changes", "int", False, "changes seen"),
    _k("changes.failed", "changes", "int", False, "changes with a resource whose result is neither ok nor not_kept"),
    _k("changes.shown", "changes", "int", False, "changes in `entries`"),
    _k("changes.overflow", "changes", "int", False, "`count - shown`"),
    _k("changes.removals_not_checked", "requests", "int", False, "LeaveGroups past the first 1,000 not decided"),
    _k("changes.member_commits_not_checked", "members", "int", False, "members' own commits not decided"),
    _k("changes.by_operation", "changes", "map", False, "operation → changes"),
    _k("changes.by_operation.<operation>", "changes", "int", False, "changes of it, kept or not"),
    _k("changes.by_result", "resources", "map", False, "result → resources"),
    _k("changes.by_result.<result>", "resources", "int", False, "resources with it, listed or not"),
    _k("changes.entries", "-", "list", False, "the changes kept, in time order"),
    _k(_E, "-", "object", False, "a change"),
    *_instant(f"{_E}.ts_ns", f"{_E}.ts", "its request's time (its `ts_ns`)"),
    _k(f"{_E}.client", '`"ip:port"`', "string", False, "the client that sent it"),
    _k(f"{_E}.broker", '`"ip:port"`', "string", False, "the broker it went to"),
    _k(f"{_E}.client_id", "text", "string", True, "its client id"),
    _k(f"{_E}.principal", "text", "string", True, "the SASL principal of its connection"),
    _k(f"{_E}.correlation_id", "integer", "int", False, "its correlation id"),
    _k(f"{_E}.api", "text", "string", False, "the api"),
    _k(f"{_E}.operation", "kind", "string", False, "what it did"),
    _k(f"{_E}.resources", "-", "list", False, "what it touched, at most 20 (and as many more that make `kind`)"),
    _k(f"{_E}.result", "kinds", "list", False, "one result per resource, in order"),
    _k(f"{_E}.result[]", "kind", "string", False, "a resource's result"),
    _k(f"{_E}.kind", "kind", "string", True, "the destructive kind, or null"),
    _k(f"{_E}.makes_kind", "indexes", "list", False, "the resources that make `kind` when not all do"),
    _k(f"{_E}.makes_kind[]", "integer", "int", False, "an index in `resources`",
       rare="no committed capture holds a CreateAcls with allow-all and narrower bindings together"),
    _k(f"{_E}.resource_count", "resources", "int", True, "every resource the request named (null: not read)"),
    _k(f"{_E}.unlisted_results", "resources", "map", False, "result → resources not in `resources`"),
    _k(f"{_E}.unlisted_results.<result>", "resources", "int", False, "those with it",
       rare="no committed capture holds a change of more than 20 resources"),
    _k(f"{_E}.request_outcome", "kind", "string", True, "its body's outcome when not simply decoded, else null"),
    _k(f"{_E}.entries_not_read", "entries", "int", False, "entries past the entries bound: read, not detailed"),
    _k(_R, "-", "object", False, "a resource: `type` and the keys of its api (docs/changes-and-quorum.md)"),
    _r("type", "kind", "string|int", False, "what it is: topic, acl, acl_filter, user, quota, group, ... (a config "
                                            "resource's type as the request gave it)"),
    _r("name", "text", "string|int", True, "its name (a broker's id)"),
    _r("topic", "text", "string", True, "the topic"),
    _r("topic_id", "text", "string", False, "a topic named by id only", rare="no committed capture deletes a topic "
                                                                            "by id"),
    _r("partitions", "partitions", "int|list|map", True,
       "a partition count (topic), the partitions (group_offsets, partitions), or topic → partitions (transaction)"),
    _r("partitions[]", "integer", "int", False, "a partition"),
    _r("partitions.<topic>", "partitions", "list", False, "a topic's partitions",
       rare="no committed capture aborts a transaction with WriteTxnMarkers"),
    _r("partitions.<topic>[]", "integer", "int", False, "a partition",
       rare="no committed capture aborts a transaction with WriteTxnMarkers"),
    _r("replication_factor", "integer", "int", True, "create_topics: its replication factor"),
    _r("assignments", "-", "map", False, "create_topics: partition → broker ids",
       rare="no committed capture creates a topic with manual assignments"),
    _r("assignments.<partition>", "broker ids", "list", True, "the replicas",
       rare="no committed capture creates a topic with manual assignments"),
    _r("assignments.<partition>[]", "integer", "int", False, "a broker id",
       rare="no committed capture creates a topic with manual assignments"),
    _r("configs", "-", "map|list", False, "name → value, or (incremental) `[{name, operation, value}]`"),
    _r("configs.<name>", "text", "string|object", True, "a value (`{redacted}` for a secret)"),
    _r("configs.<name>.redacted", "characters", "int", False, "a secret's length",
       rare="no committed capture creates a topic with a secret config"),
    _r("configs[]", "-", "object", False, "one config"),
    _r("configs[].name", "text", "string", True, "its name"),
    _r("configs[].operation", "kind", "string", False, "SET, DELETE, APPEND, SUBTRACT (incremental), else SET"),
    _r("configs[].value", "text", "string|object", True, "its value (`{redacted: length}` for a secret)"),
    _r("configs[].value.redacted", "characters", "int", False, "a secret's length"),
    *(_r(name, "text", "string", True, f"an ACL's {name.replace('_', ' ')}") for name in
      ("resource_type", "resource_name", "pattern", "principal", "host", "operation", "permission")),
    _r("deleted", "-", "list", False, "acl_filter: the bindings it deleted",
       rare="no committed capture's DeleteAcls answer was kept"),
    _r("deleted[]", "-", "object", False, "a binding", rare="no committed capture deletes ACLs that matched"),
    *(_r(f"deleted[].{name}", "text", "string|int", True, "as for an ACL resource",
         rare="no committed capture deletes ACLs that matched")
      for name in ("type", "resource_type", "resource_name", "pattern", "principal", "host", "operation",
                   "permission")),
    _r("mechanism", "text", "string|int", True, "user: the SCRAM mechanism"),
    _r("action", "kind", "string", False, "user: `delete` or `upsert`"),
    _r("iterations", "integer", "int", True, "user: the upsertion's iterations"),
    _r("entity", "-", "map", False, "quota: entity type → name", rare="no committed capture alters client quotas"),
    _r("entity.<type>", "text", "string", False, "a name (`(default)`)", rare="no committed capture alters client "
                                                                            "quotas"),
    _r("quotas", "-", "map", False, "quota: key → value (`(removed)`)", rare="no committed capture alters client "
                                                                           "quotas"),
    _r("quotas.<key>", "number", "float|string", True, "a value", rare="no committed capture alters client quotas"),
    _r("group", "text", "string", True, "the group"),
    _r("offsets", "-", "map", False, "group_offsets: partition → offset"),
    _r("offsets.<partition>", "offset", "int", True, "an offset"),
    _r("member_id", "text", "string", True, "group_member: its member id"),
    _r("instance_id", "text", "string", True, "group_member: its group instance id"),
    _r("client_id", "text", "string", True, "group_member: its client id (null: the capture holds none of its "
                                            "requests)"),
    _r("client", '`"ip:port"`', "string", True, "group_member: its connection"),
    _r("before", "-", "map", False, "records: partition → the offset records were deleted before"),
    _r("before.<partition>", "offset", "int", True, "an offset"),
    _r("low_watermarks", "-", "map", False, "records: partition → the answer's low watermark",
       rare="no committed capture's DeleteRecords answer was kept"),
    _r("low_watermarks.<partition>", "offset", "int", True, "a low watermark",
       rare="no committed capture's DeleteRecords answer was kept"),
    _r("election", "kind", "string", False, "partitions: the election type"),
    _r("replicas", "-", "map", False, "partitions: partition → the replicas (`(cancel)`)",
       rare="no committed capture reassigns partitions"),
    _r("replicas.<partition>", "broker ids", "list|string", False, "the replicas",
       rare="no committed capture reassigns partitions"),
    _r("replicas.<partition>[]", "integer", "int", False, "a broker id", rare="no committed capture reassigns "
                                                                            "partitions"),
    _r("max_version_level", "integer", "int", True, "feature: the level asked", rare="no committed capture updates "
                                                                                     "features"),
    _r("upgrade_type", "kind", "string", True, "feature: the upgrade type", rare="no committed capture updates "
                                                                               "features"),
    _r("owner", "text", "string", True, "delegation_token: its owner", rare=_NO_TOKENS),
    _r("renewers", "principals", "list", False, "delegation_token: its renewers", rare=_NO_TOKENS),
    _r("renewers[]", "text", "string", True, "a renewer", rare=_NO_TOKENS),
    _r("max_lifetime_ms", "ms", "int", True, "delegation_token: MaxLifetimeMs", rare=_NO_TOKENS),
    _r("token_id", "text", "string", False, "delegation_token: the answer's TokenId", rare=_NO_TOKENS),
    _r("renew_period_ms", "ms", "int", True, "delegation_token: RenewPeriodMs", rare=_NO_TOKENS),
    _r("expiry_period_ms", "ms", "int", True, "delegation_token: ExpiryTimePeriodMs", rare=_NO_TOKENS),
    _r("expiry_timestamp_ms", "epoch ms", "int", False, "delegation_token: the answer's ExpiryTimestampMs (Kafka's "
                                                        "instant)", rare=_NO_TOKENS),
    _r("producer_id", "integer", "int", True, "transaction: the producer id", rare="no committed capture aborts a "
                                                                                  "transaction with WriteTxnMarkers"),
    _r("producer_epoch", "integer", "int", True, "transaction: its epoch", rare="no committed capture aborts a "
                                                                               "transaction with WriteTxnMarkers"),
    _r("not_read", "text", "string", False, "request: why kwire could not read it",
       rare="every change request of the committed captures was read"),
    _r("unlisted", "-", "map", False, "lists and maps past 20 items: path → items left out",
       rare="no committed capture holds a resource with more than 20 items"),
    _r("unlisted.<path>", "items", "int", False, "items left out", rare="no committed capture holds a resource with "
                                                                        "more than 20 items"),
)

_Q, _B = "quorum", "quorum.brokers.<broker_id>"
_QUORUM = (
    _k(_Q, "-", "object", True, "the KRaft controllers: null without controller traffic (docs/changes-and-quorum.md)"),
    _k(f"{_Q}.events", "events", "int", False, "controller events seen"),
    _k(f"{_Q}.overflow", "events", "int", False, "events not kept"),
    _k(f"{_Q}.leaders", "-", "list", False, "each (leader, epoch) when first seen"),
    _k(f"{_Q}.leaders[]", "-", "object", False, "a leader"),
    *_instant(f"{_Q}.leaders[].ts_ns", f"{_Q}.leaders[].ts", "when it was first seen"),
    _k(f"{_Q}.leaders[].leader_id", "integer", "int", False, "the leader"),
    _k(f"{_Q}.leaders[].epoch", "integer", "int", False, "its epoch"),
    _k(f"{_Q}.leaders[].api", "text", "string", False, "where it was seen"),
    _k(f"{_Q}.elections", "-", "list", False, "Vote rounds"),
    _k(f"{_Q}.elections[]", "-", "object", False, "a round"),
    *_instant(f"{_Q}.elections[].ts_ns", f"{_Q}.elections[].ts", "its first Vote"),
    _k(f"{_Q}.elections[].candidate", "integer", "int", False, "the candidate"),
    _k(f"{_Q}.elections[].epoch", "integer", "int", False, "the epoch it asked for"),
    _k(f"{_Q}.elections[].pre_vote", "boolean", "bool", False, "a pre-vote"),
    *(item for name, did in (("granted", "granted"), ("refused", "refused"), ("unanswered", "did not answer"))
      for item in (
        _k(f"{_Q}.elections[].{name}", "voters", "list", False, f"the voters that {did}"),
        _k(f"{_Q}.elections[].{name}[]", "integer", "int|string", False, "a voter id (its address before Vote v1)",
           rare="" if name == "granted" else "the committed KRaft recording has no refused or unanswered vote"))),
    _k(f"{_Q}.resignations", "-", "list", False, "EndQuorumEpoch"),
    _k(f"{_Q}.resignations[]", "-", "object", False, "a resignation"),
    *_instant(f"{_Q}.resignations[].ts_ns", f"{_Q}.resignations[].ts", "its time"),
    _k(f"{_Q}.resignations[].leader_id", "integer", "int", False, "the leader"),
    _k(f"{_Q}.resignations[].epoch", "integer", "int", False, "its epoch"),
    _k(f"{_Q}.brokers", "-", "map", False, "broker id → a broker entry"),
    _k(_B, "-", "object", False, "a broker"),
    _k(f"{_B}.registered_ts_ns", "epoch ns", "list", False, "when it registered (BrokerRegistration)"),
    _k(f"{_B}.registered_ts_ns[]", "epoch ns", "int", False, "a registration"),
    _old(f"{_B}.registered", "epoch s", "list", False, f"{_B}.registered_ts_ns", "`registered_ts_ns` in epoch "
                                                                                 "seconds (9 decimals)"),
    _old(f"{_B}.registered[]", "epoch s", "float", False, f"{_B}.registered_ts_ns[]", "one of them"),
    _k(f"{_B}.broker_epoch", "integer", "int", True, "its latest broker epoch"),
    _k(f"{_B}.unregistered_ts_ns", "epoch ns", "list", False, "when an UnregisterBroker named it"),
    _k(f"{_B}.unregistered_ts_ns[]", "epoch ns", "int", False, "one of them"),
    _old(f"{_B}.unregistered", "epoch s", "list", False, f"{_B}.unregistered_ts_ns",
         "`unregistered_ts_ns` in epoch seconds (9 decimals)"),
    _old(f"{_B}.unregistered[]", "epoch s", "float", False, f"{_B}.unregistered_ts_ns[]", "one of them"),
    _k(f"{_B}.fenced", "-", "list", False, "the spans it was fenced after being unfenced"),
    _k(f"{_B}.fenced[]", "-", "object", False, "a span"),
    *_instant(f"{_B}.fenced[].start_ts_ns", f"{_B}.fenced[].start", "its first heartbeat answered IsFenced"),
    *_instant(f"{_B}.fenced[].end_ts_ns", f"{_B}.fenced[].end", "the next answered not fenced (null: until the "
                                                                "capture's end)", nullable=True),
    _k(f"{_B}.fenced[].requested", "boolean", "bool", False, "it asked (WantFence, WantShutDown)"),
    _k(f"{_B}.heartbeats", "requests", "int", False, "BrokerHeartbeat requests"),
    _k(f"{_B}.metadata_offset", "offset", "int", True, "the highest CurrentMetadataOffset it reported"),
    _k(f"{_B}.behind", "-", "object", True, "the longest span its metadata stayed 10 s behind, or null"),
    *_instant(f"{_B}.behind.start_ts_ns", f"{_B}.behind.start", "its start"),
    *_instant(f"{_B}.behind.end_ts_ns", f"{_B}.behind.end", "its end"),
    _k(f"{_B}.behind.max_offsets", "offsets", "int", False, "the largest shortfall"),
)

_X = "end_to_end"
_END_TO_END = (
    _k(_X, "-", "object", False, "from write to read: latency and lag in time (docs/end-to-end.md)"),
    _k(f"{_X}.consumers", "-", "list", False, "per (topic, consumer), sorted by topic, kind, consumer"),
    _k(f"{_X}.consumers[]", "-", "object", False, "a consumer row"),
    _k(f"{_X}.partitions", "-", "list", False, "per (topic, partition, consumer)"),
    _k(f"{_X}.partitions[]", "-", "object", False, "a partition row"),
    *(item for rows in ("consumers", "partitions") for item in (
        _k(f"{_X}.{rows}[].topic", "text", "string", False, "the topic"),
        _k(f"{_X}.{rows}[].kind", "kind", "string", False, "`fetch` or `share`"),
        _k(f"{_X}.{rows}[].consumer", "text", "string", False, "the client id (fetch) or share group (share)"),
        _k(f"{_X}.{rows}[].deliveries", "writes", "int", False, "writes delivered to it for the first time"),
        _k(f"{_X}.{rows}[].redeliveries", "writes", "int", False, "writes delivered again"),
        _k(f"{_X}.{rows}[].latency_ms", "ms", "object", False, "of its end-to-end latencies", shape="percentiles"))),
    _k(f"{_X}.consumers[].partitions", "partitions", "int", False, "the topic's partitions it was answered for"),
    _k(f"{_X}.consumers[].unmatched", "answers", "int", False, "answers with offsets no kept write covers"),
    _k(f"{_X}.consumers[].time_lag_max_ms", "ms", "float", True, "the largest lag in time over its partitions"),
    _k(f"{_X}.partitions[].partition", "integer", "int", False, "the partition"),
    _k(f"{_X}.partitions[].time_lag_ms", "ms", "object", False, "its lag in time, sampled on its answers",
       shape="time lag"),
    _k(f"{_X}.commits", "-", "list", False, "per (group, topic, partition) committed"),
    _k(f"{_X}.commits[]", "-", "object", False, "a commit row"),
    _k(f"{_X}.commits[].group", "text", "string", False, "the group"),
    _k(f"{_X}.commits[].topic", "text", "string", False, "the topic"),
    _k(f"{_X}.commits[].partition", "integer", "int", False, "the partition"),
    _k(f"{_X}.commits[].commits", "commits", "int", False, "commits of it accepted"),
    _k(f"{_X}.commits[].offset_last", "offset", "int", False, "the latest commit's offset"),
    _k(f"{_X}.commits[].time_lag_ms", "ms", "object", False, "lag in time at its commits", shape="time lag"),
    _k(f"{_X}.timeline", "-", "object", False, "over the capture's time"),
    *_instant(f"{_X}.timeline.start_ts_ns", f"{_X}.timeline.start", "when the first bucket starts (a whole second; "
                                                                    "null without any sample)", nullable=True,
              digits=0, old_type="int"),
    _k(f"{_X}.timeline.bucket_ms", "ms", "int", False, "the buckets' width: a power of two seconds, at most 120"),
    _old(f"{_X}.timeline.bucket_s", "s", "int", False, f"{_X}.timeline.bucket_ms", "`bucket_ms` in seconds"),
    _k(f"{_X}.timeline.latency", "-", "list", False, "the 10 series with the largest latencies"),
    _k(f"{_X}.timeline.latency[]", "-", "object", False, "a series", shape="series"),
    _k(f"{_X}.timeline.time_lag", "-", "list", False, "the 10 series with the largest lags in time"),
    _k(f"{_X}.timeline.time_lag[]", "-", "object", False, "a series", shape="series"),
    _k(f"{_X}.timeline.series", "-", "object", False, "how many series there were"),
    _k(f"{_X}.timeline.series.cap", "series", "int", False, "the most listed"),
    _k(f"{_X}.timeline.series.latency", "series", "int", False, "latency series"),
    _k(f"{_X}.timeline.series.time_lag", "series", "int", False, "time lag series"),
    _k(f"{_X}.producers", "-", "map", False, "producer (client id, else address) → its writes and clock offsets"),
    _k(f"{_X}.producers.<producer>", "-", "object", False, "a producer"),
    _k(f"{_X}.producers.<producer>.writes", "writes", "int", False, "its writes some consumer read"),
    _k(f"{_X}.producers.<producer>.clock_offset_ms", "ms", "object", False, "its clock offsets",
       shape="percentiles"),
    _k(f"{_X}.bounds", "-", "object", False, "what the caps kept"),
    *(_k(f"{_X}.bounds.{name}", "-", "object", False, f"{name}", shape="bound") for name in
      ("writes", "reads", "commits")),
    _k(f"{_X}.bounds.idle", "-", "object", False, "positions answered with nothing"),
    _k(f"{_X}.bounds.idle.kept", "positions", "int", False, "kept"),
    _k(f"{_X}.bounds.idle.cap", "positions", "int", False, "the most kept"),
    _k(f"{_X}.bounds.idle.folded", "boolean", "bool", False, "more came"),
    _k(f"{_X}.bounds.rows", "-", "object", False, "rows per table"),
    _k(f"{_X}.bounds.rows.cap", "rows", "int", False, "the most listed"),
    *(_k(f"{_X}.bounds.rows.{name}", "rows", "int", False, f"rows `{name}` had") for name in
      ("consumers", "partitions", "commits", "producers")),
)

_T = "tls.list[]"
_TLS = (
    _k("tls", "-", "object", False, "the TLS connections (docs/tls.md)"),
    _k("tls.connections", "connections", "int", False, "TLS connections seen"),
    _k("tls.decrypted", "connections", "int", False, "decrypted"),
    _k("tls.not_decrypted", "connections", "int", False, "not decrypted"),
    _k("tls.partly_decrypted", "connections", "int", False, "of those, with records decrypted"),
    _k("tls.list", "-", "list", False, "each TLS connection, the first 1,000 by time"),
    _k(_T, "-", "object", False, "a TLS connection"),
    *_instant(f"{_T}.ts_ns", f"{_T}.ts", "its first packet"),
    _k(f"{_T}.client", '`"ip:port"`', "string", False, "the client"),
    _k(f"{_T}.server", '`"ip:port"`', "string", False, "the server"),
    _k(f"{_T}.server_name", "text", "string", True, "the ClientHello's SNI"),
    _k(f"{_T}.alpn", "text", "string", True, "the ALPN chosen"),
    _k(f"{_T}.version", "text", "string", True, "the TLS version"),
    _k(f"{_T}.cipher_suite", "text", "string", True, "the cipher suite"),
    _k(f"{_T}.resumed", "boolean", "bool", False, "a resumed session"),
    _k(f"{_T}.decrypted", "boolean", "bool", False, "decrypted"),
    _k(f"{_T}.reason_kind", "kind", "string", True, "why not (docs/reasons.md), null when decrypted"),
    _k(f"{_T}.reason", "text", "string", True, "why not, in words"),
    _k(f"{_T}.to_server_bytes", "bytes", "int", False, "ciphertext bytes to the server"),
    _k(f"{_T}.to_client_bytes", "bytes", "int", False, "ciphertext bytes to the client"),
    _old(f"{_T}.bytes_to_server", "bytes", "int", False, f"{_T}.to_server_bytes", "`to_server_bytes`"),
    _old(f"{_T}.bytes_to_client", "bytes", "int", False, f"{_T}.to_client_bytes", "`to_client_bytes`"),
    _k(f"{_T}.records_decrypted", "records", "int", False, "TLS records decrypted"),
    _k(f"{_T}.records_failed", "records", "int", False, "TLS records that failed"),
)

# Every key of the stats document, in the order docs/vocabulary.md lists them.
STATS_DOCUMENT = (
    _k("format", "text", "string", False, '`"kwire-stats/1"`'),
    *_SPAN, *_TRAFFIC, *_GROUPS, *_FINDINGS, *_CHANGES, *_QUORUM, *_END_TO_END, *_TLS,
    _k("caps", "-", "map", False, "table → its cap: api_versions, client_ids, brokers, partitions, share_groups, "
                                  "topic_names, broker_latency (docs/bounds.md)"),
    _k("caps.<table>", "-", "object", False, "a table's cap", shape="cap"),
)


def _repathed(key: DocKey, path_of) -> DocKey:
    """`key` under the path `path_of` gives its path, the keys it names (deprecated, same_as) moved alike."""
    moved = {"path": path_of(key.path)}
    for name in ("deprecated", "same_as"):
        if getattr(key, name):
            moved[name] = path_of(getattr(key, name))
    return DocKey(**{**key.__dict__, **moved})


def stats_keys() -> dict[str, DocKey]:
    """Every path of the stats document, shapes expanded: path -> its DocKey (a shape's keys with full paths)."""
    out: dict[str, DocKey] = {}
    for key in STATS_DOCUMENT:
        assert key.path not in out, key.path
        out[key.path] = key
        for inner in SHAPES.get(key.shape, ()):
            full = _repathed(inner, lambda path: f"{key.path}.{path}")
            out[full.path] = full
    return out


# -- the live document and the findings log ------------------------------------------------------------------------

_NO_LOSS = "no committed capture loses bytes (no connection's pairing resyncs)"
_NO_LIVE = "a replay leaves it null; only a live capture gives a value"

# Every key of `kwire live --json` (kwire.live.report.final_document), in the order docs/vocabulary.md lists them.
LIVE_DOCUMENT = (
    _k("format", "text", "string", False, '`"kwire-live/1"`'),
    _k("interface", "text", "string", False, "what was captured: the interface, or the files replayed (joined by "
                                             "`, `)"),
    _k("filter", "text", "string", True, "the capture filter (null for a replay)"),
    _k("duration_ms", "ms", "float", False, "how long the run lasted, wall clock (to the µs)"),
    _old("seconds", "s", "float", False, "duration_ms", "`duration_ms` in seconds (to the ms)"),
    _k("packets", "packets", "int", False, "packets captured"),
    _k("bytes", "bytes", "int", False, "their bytes on the wire"),
    _k("truncated", "packets", "int", False, "packets cut by the snap length"),
    _k("kernel_drops", "packets", "int", True, f"packets the kernel dropped ({_NO_LIVE})"),
    _k("queue_drops", "exchanges", "int", False, "exchanges left out of the figures because the dashboard's process "
                                                 "fell behind (packets on the per-packet path)"),
    _k("figures_lag_max_ms", "ms", "float", True, "the longest a batch of exchanges waited between the capture and "
                                                  f"the figures ({_NO_LIVE})"),
    _old("figures_lag_max_s", "s", "float", True, "figures_lag_max_ms", "`figures_lag_max_ms` in seconds"),
    _k("gaps", "holes", "int", False, "TCP holes (bytes never captured)"),
    _k("gap_bytes", "bytes", "int", False, "the bytes in them"),
    _k("lost", "-", "list", False, "the connections that lost bytes, most first (at most 5)"),
    _k("lost[]", "-", "object", False, "a connection", rare=_NO_LOSS),
    _k("lost[].connection", "text", "string", False, '`"client → broker"` (`↔` when the roles are not known)',
       rare=_NO_LOSS),
    _k("lost[].gaps", "holes", "int", False, "its holes", rare=_NO_LOSS),
    _k("lost[].bytes", "bytes", "int", False, "the bytes in them", rare=_NO_LOSS),
    _k("kafka_connections", "connections", "int", False, "connections seen to carry Kafka"),
    _k("exchanges", "-", "object", False, "every exchange the pipeline completed, filters aside, by status"),
    *(_k(f"exchanges.{name}", "exchanges", "int", False, meaning) for name, meaning in (
        ("total", "all of them"), ("paired", "with `status` paired"), ("no_response", "with `status` no_response"),
        ("no_request", "with `status` no_request"))),
    _k("counted", "exchanges", "int", False, "exchanges the dashboard counted (after `--api` and the other "
                                             "filters, and any queue drops)"),
    _k("files", "paths", "list", False, "the `-w` files written, in order"),
    _k("files[]", "text", "string", False, "a file", rare="-w keeps what is captured live: a replay writes none"),
    _k("error", "text", "string", True, "why the capture stopped early, or null"),
)

# The findings log (kwire.live.findings_log): each line is these keys, then the finding's own, which are the keys of
# the stats document's `findings[]` (FINDING_ITEMS), declared there once for both outputs.
FINDING_ITEMS = "findings[]"
FINDINGS_LOG = (
    _k("event", "kind", "string", False, "`start` when the finding is first known (or known again after it "
                                         "ended); `end` when it ends"),
    _k("id", "text", "string", False, "the same for a finding's start and end: a hash of its kind and what it is "
                                      "about"),
    _k("at_ts_ns", "epoch ns", "int", True, "capture time of the newest exchange when the event was written (null "
                                            "before any)"),
    _old("at", "epoch s", "float", True, "at_ts_ns", "`at_ts_ns` in epoch seconds"),
    _k("reason", "kind", "string", False, "start: `new`, `again`; end: `quiet`, `gone`, `capture ended`"),
    _k("ended_by", "kind", "string", False, "only with `capture ended`: what ended the capture (`replay finished`, "
                                            "`capture stopped`, `error`, `signal`, `quit`, `duration`)"),
    _k("capture_error", "text", "string", True, "only with `ended_by` `error`: the error",
       rare="no replay of a committed capture fails"),
)


def _keyed(keys: tuple[DocKey, ...]) -> dict[str, DocKey]:
    out: dict[str, DocKey] = {}
    for key in keys:
        assert key.path not in out, key.path
        out[key.path] = key
    return out


def live_keys() -> dict[str, DocKey]:
    """Every path of the `kwire live --json` document: path -> its DocKey."""
    return _keyed(LIVE_DOCUMENT)


def findings_log_keys() -> dict[str, DocKey]:
    """Every path of a findings log line: the log's own keys, then those of a finding of the stats document
    (`FINDING_ITEMS`) with that prefix taken off (a deprecated one's replacement too)."""
    out = _keyed(FINDINGS_LOG)
    prefix = FINDING_ITEMS + "."

    def unprefixed(path: str) -> str:
        assert path.startswith(prefix), path
        return path[len(prefix):]

    for path, key in stats_keys().items():
        if path.startswith(prefix):
            moved = _repathed(key, unprefixed)
            assert moved.path not in out, path
            out[moved.path] = moved
    return out
