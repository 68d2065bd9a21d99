"""What a Spark task makes of the exchanges it finishes: facts, an Aggregator, run counters, rows.

`DecodeOptions` travel with the job to the executors (port hints, the CLI's filters, `rows` for
`--out`, the TLS key log). `Facts(options)` takes exchanges wherever a task finishes them (map side:
connections wholly inside one file; reduce side: stitched ones): each exchange the filter keeps
becomes facts (kwire.native.exchange_facts) in the task's Aggregator, and with `rows` also an exchange row
and partition rows, gathered as Arrow tables (ARROW_EXCHANGES, ARROW_PARTITIONS) for the Parquet
tables. `PartitionResult` is the Aggregator plus the counters of the run, merged exactly in any order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from kwire.analytics import Aggregator
from kwire.native.exchange_enrich import Enricher
from kwire.native.exchange_facts import EXCHANGE_COLUMNS
from kwire.analytics.read import read_exchange
from kwire.group_filter import members_of, offload_all_but_groups
from kwire.native.kafka_pairing import RawExchange
from kwire.native.exchange_sink import offloadable_to_fold
from kwire.pipeline import Pipeline, RunSummary
from kwire.query import ExchangeFilter
from kwire.spark.wire import PROWS, XROWS, table_bytes
from kwire.tls import KeyLog
from kwire.net.tables import add_vxlan_ports
from kwire.vocabulary import EXCHANGE_FACTS, PARQUET, PARTITION_TABLE, Fact


@dataclass(frozen=True)
class DecodeOptions:
    port_hints: tuple[int, ...] = ()
    keep: ExchangeFilter = ExchangeFilter()
    rows: bool = False  # also gather fact rows (for --out and the data source)
    keylog: KeyLog | None = field(default=None, repr=False)  # TLS secrets, shipped with the job (never logged)
    members_of: str | None = None  # a group: gather its members (kwire.spark.group_members), count nothing
    vxlan_ports: tuple[int, ...] = ()  # UDP ports opened as VXLAN (--vxlan-port), in every task's process

    def open_tunnels(self) -> None:
        """This process's net layer opens the VXLAN ports the run was given (kwire.net.tables)."""
        if self.vxlan_ports:
            add_vxlan_ports(self.vxlan_ports)

    def pipeline(self, spread: bool = False) -> Pipeline:
        """A Pipeline whose stream layers (TLS, Kafka, decoding) a task drives connection by connection,
        each connection enriched on its own (ConnectionEnricher); gathering a group's members, only
        the group apis are decoded; `spread`: the exchanges kwire.native.exchange_sink.offloadable_to_fold picks are
        left undecoded, for the decode stage (kwire.spark.spread: every Produce exchange of a shard decoded by
        one task)."""
        self.open_tunnels()
        if self.members_of is not None:
            offload = offload_all_but_groups
        else:
            offload = offloadable_to_fold if spread else None
        pipeline = Pipeline(port_hints=self.port_hints, summary=RunSummary(), keys=self.keylog, offload=offload)
        pipeline.enricher = ConnectionEnricher()
        return pipeline


class ConnectionEnricher(Enricher):
    """kwire.native.exchange_enrich.Enricher, one per connection: a task replays connections in an order unrelated to
    capture time, so names one connection's Metadata answers teach are kept to that connection (a
    connection's fetch offsets are its own anyway). The document does not depend on it (the
    Aggregator names topic ids from every answer); `--topic NAME` matches ids only where the same
    connection's Metadata named them (docs/spark.md). An Enricher itself (its own tables unused), so
    that the pipeline's exchange sink, which types its enricher, takes it."""

    def __init__(self) -> None:
        super().__init__()
        self.by_connection: dict = {}

    def enrich(self, ex) -> None:
        enricher = self.by_connection.get(ex.connection_id)
        if enricher is None:
            enricher = self.by_connection[ex.connection_id] = Enricher()
        enricher.enrich(ex)


_ARROW_TYPES = {"int64": pa.int64(), "int32": pa.int32(), "float64": pa.float64(), "string": pa.string(),
                "bool": pa.bool_(), "strings": pa.list_(pa.string())}


def arrow_schema(facts: tuple[Fact, ...]) -> pa.Schema:
    """The Arrow schema of a table of `facts` (kwire.vocabulary, its Parquet columns), every field nullable as
    pyarrow makes them by default: the Spark schemas (kwire.spark.schemas) state which are never null."""
    return pa.schema([(f.name, _ARROW_TYPES[f.type]) for f in facts if PARQUET in f.outputs])


ARROW_EXCHANGES = arrow_schema(EXCHANGE_FACTS)
ARROW_PARTITIONS = arrow_schema(PARTITION_TABLE)
assert tuple(ARROW_EXCHANGES.names) == EXCHANGE_COLUMNS


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
    files: list = field(default_factory=list)  # kwire.spark.mapside.FileReport, on the driver's result only
    members: set = field(default_factory=set)  # DecodeOptions.members_of: the group's (host, client id)s

    def merge(self, other: PartitionResult) -> PartitionResult:
        self.aggregator.merge(other.aggregator)
        for name in ("connections", "exchanges", "paired", "no_response", "no_request", "decode_errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        add_counts(self.tcp, other.tcp)
        add_counts(self.kafka, other.kafka)
        self.files += other.files
        self.members |= other.members
        return self

    def add_run(self, pipeline: Pipeline) -> None:
        """What a Pipeline whose stream layers a task drove counted (TCP is counted by the task)."""
        summary = pipeline.summary
        self.connections += len(summary.connections)
        self.exchanges += summary.exchanges
        self.paired += summary.paired
        self.no_response += summary.no_response
        self.no_request += summary.no_request
        self.decode_errors += summary.decode_errors
        self.aggregator.tls.merge(summary.tls)
        add_counts(self.kafka, pipeline.kafka.counters.closed)


def add_counts(mine: dict, theirs: dict) -> None:
    for key, value in theirs.items():
        mine[key] = mine.get(key, 0) + value


class Facts:
    """Exchanges -> the task's Aggregator (and fact rows with options.rows); see the module docstring.
    RawExchanges (a Pipeline with `spread`) go to `raws` (kwire.spark.spread.RawBatches), undecoded."""

    def __init__(self, options: DecodeOptions, raws=None):
        self.raws = raws
        self.keep = options.keep
        self.rows = options.rows
        self.group = options.members_of
        self.members: set[tuple] = set()
        self.aggregator = Aggregator()
        self.exchange_rows: list[dict] = []
        self.partition_rows: list[dict] = []

    def add(self, exchanges) -> None:
        if self.group is not None:
            self.members |= members_of(exchanges, self.group)
            return
        agg = self.aggregator
        keep = self.keep
        for ex in exchanges:
            if type(ex) is RawExchange:
                self.raws.add(ex)
                continue
            if not keep(ex):
                agg.learn_names(ex)
                continue
            row, parts, names, observed = read_exchange(ex, agg.analysis.watch)
            agg.add(row, parts, names, observed)
            if self.rows:
                self.exchange_rows.append(row)
                for part in parts:
                    self.partition_rows.append(dict(part, client=row["client"], broker=row["broker"],
                                                     correlation_id=row["correlation_id"]))

    def take_out(self, end: bool = False) -> list[tuple[int, bytes]]:
        """What was gathered since the last take, as (kind, blob) rows of kwire.spark.wire: the fact rows
        (XROWS, PROWS) and the full batches of RawExchanges (RAWS; at the `end`, the last one too)."""
        out = []
        exchanges, partitions = self.take_tables()
        if exchanges is not None:
            out.append((XROWS, table_bytes(exchanges)))
        if partitions is not None:
            out.append((PROWS, table_bytes(partitions)))
        if self.raws is not None:
            if end:
                self.raws.flush()
            out += self.raws.take()
        return out

    def take_tables(self) -> tuple[pa.Table | None, pa.Table | None]:
        """The fact rows gathered since the last take, as Arrow tables (None when there are none)."""
        ex = pa.Table.from_pylist(self.exchange_rows, schema=ARROW_EXCHANGES) if self.exchange_rows else None
        parts = (pa.Table.from_pylist(self.partition_rows, schema=ARROW_PARTITIONS) if self.partition_rows
                 else None)
        self.exchange_rows, self.partition_rows = [], []
        return ex, parts
