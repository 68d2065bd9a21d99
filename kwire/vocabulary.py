"""kwire's one table of facts: every fact an exchange or a partition carries, and every Prometheus metric family,
declared once with its name, unit, type, nullability and meaning.

From these declarations come the columns of an exchange's and a partition's row (kwire.analytics.row), the Arrow
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
         "(kwire.tcp.flows); absent otherwise"),
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
