"""Transform (runs on executors): a sorted partition of packet records -> exchanges -> facts.

`decode_partition(records, options)` receives one shuffle partition as kwire.spark.extract keyed it,
sorted by key: first the FileReports (flow b""), then each connection's packets in capture order.
It runs one fresh kwire.pipeline.Pipeline per connection (flow key), exactly the code `kwire stats`
runs, and ends each with the time the whole capture ends (the latest last-packet time of all files),
so unanswered requests and data still buffered at the end are reported as `kwire stats` reports them.

Each exchange that passes the filter becomes facts (kwire.analytics.facts) and goes into the
partition's Aggregator; with `options.rows` the facts are also yielded for the Parquet tables:
`("x", exchange row)`, `("p", partition row)`. The partition ends with one
`("a", PartitionResult)`: its Aggregator, run counters and (partition 0 only) the FileReports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kwire.analytics import Aggregator
from kwire.analytics.facts import exchange_row, partition_rows, topic_names
from kwire.analytics.observe import observations
from kwire.capture.packet import Packet
from kwire.pipeline import Pipeline, RunSummary
from kwire.query import ExchangeFilter
from kwire.spark.extract import REPORT_FLOW, FileReport
from kwire.tls import KeyLog


@dataclass(frozen=True)
class DecodeOptions:
    port_hints: tuple[int, ...] = ()
    keep: ExchangeFilter = ExchangeFilter()
    rows: bool = False  # also yield fact rows (for --out)
    keylog: KeyLog | None = field(default=None, repr=False)  # TLS secrets, shipped with the job (never logged)


@dataclass
class PartitionResult:
    aggregator: Aggregator
    connections: int = 0  # Kafka connections
    exchanges: int = 0
    paired: int = 0
    no_response: int = 0
    no_request: int = 0
    decode_errors: int = 0
    tcp: dict[str, int] = field(default_factory=dict)
    kafka: dict[str, int] = field(default_factory=dict)
    files: list[FileReport] = field(default_factory=list)

    def merge(self, other: PartitionResult) -> PartitionResult:
        self.aggregator.merge(other.aggregator)
        for name in ("connections", "exchanges", "paired", "no_response", "no_request", "decode_errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.tcp, other.tcp), (self.kafka, other.kafka)):
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0) + value
        self.files += other.files
        return self

    def add_run(self, summary: RunSummary) -> None:
        self.connections += len(summary.connections)
        self.exchanges += summary.exchanges
        self.paired += summary.paired
        self.no_response += summary.no_response
        self.no_request += summary.no_request
        self.decode_errors += summary.decode_errors
        self.aggregator.tls.merge(summary.tls)
        for mine, theirs in ((self.tcp, summary.tcp), (self.kafka, summary.kafka)):
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0) + value


def decode_partition(index: int, records, options: DecodeOptions):
    agg = Aggregator()
    result = PartitionResult(agg)
    reports: dict[int, FileReport] = {}
    end_ts = 0
    keep = options.keep
    rows = options.rows
    flow = None
    pipeline = None

    def emit(exchanges):
        for ex in exchanges:
            if not keep(ex):
                agg.learn_names(ex)
                continue
            row, parts, names = exchange_row(ex), partition_rows(ex), topic_names(ex)
            agg.add(row, parts, names, observations(ex))
            if rows:
                yield ("x", row)
                for part in parts:
                    part = dict(part, client=row["client"], broker=row["broker"],
                                correlation_id=row["correlation_id"])
                    yield ("p", part)

    def finish(p: Pipeline):
        p.last_ts_ns = max(p.last_ts_ns, end_ts)
        out = p.finish()
        result.add_run(p.summary)
        return out

    for key, value in records:
        packet_flow = key[1]
        if packet_flow == REPORT_FLOW:
            reports[value.index] = value
            if value.last_ts_ns is not None and value.last_ts_ns > end_ts:
                end_ts = value.last_ts_ns
            continue
        if packet_flow != flow:
            if pipeline is not None:
                yield from emit(finish(pipeline))
            flow = packet_flow
            pipeline = Pipeline(port_hints=options.port_hints, summary=RunSummary(), keys=options.keylog)
        yield from emit(pipeline.feed(Packet(key[2], value[0], value[1], value[2])))
    if pipeline is not None:
        yield from emit(finish(pipeline))
    if index == 0:
        result.files = [reports[i] for i in sorted(reports)]
    yield ("a", result)
