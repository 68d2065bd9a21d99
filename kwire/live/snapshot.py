"""What the dashboard shows at one instant: plain data, made by kwire.live.state, drawn by
kwire.render.dashboard.build_view. A Snapshot is built by the feeder thread and shares nothing
mutable with the state, so the screen can be drawn while the feeder goes on.

Each field says what time it covers: "over the window" (the last `window_s` seconds), "since the
start", or "now" (read at snapshot time); the dashboard titles its panels by these.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class ApiRow:
    api: str
    requests: int                 # since the start
    rate: float                   # requests/s over the window
    p50_ms: float | None          # over the window
    p99_ms: float | None
    max_ms: float | None
    errors: int                   # exchanges with an error, over the window
    bytes: int                    # request + response bytes, over the window
    history: list[float] = field(default_factory=list)            # requests/s per bucket, oldest first
    p99_history: list[float | None] = field(default_factory=list)  # p99 ms per bucket


@dataclass(slots=True)
class BrokerRow:
    broker: str                   # "ip:port" (kwire.analytics' broker key; "(others)" past its cap)
    rate: float                   # requests/s over the window
    p50_ms: float | None          # over the window
    p99_ms: float | None
    errors: int                   # exchanges with an error, over the window
    bytes: int                    # request + response bytes, over the window
    in_flight: int                # requests sent to it still waiting for an answer, now


@dataclass(slots=True)
class SlowExchange:
    ts_ns: int
    api: str
    latency_ms: float
    client: str
    broker: str
    client_id: str | None
    correlation_id: int


@dataclass(slots=True)
class LagRow:
    topic: str
    partition: int
    lag: int                      # the latest sample
    lag_max: int                  # the largest sample since the start


@dataclass(slots=True)
class EndToEndRow:
    topic: str
    consumer: str                 # a client id, or a share group (kind "share")
    kind: str                     # "fetch" or "share" (kwire.analytics.end_to_end_doc)
    deliveries: int               # writes first delivered to it, since the start
    p50_ms: float | None          # Produce request to first delivery, since the start
    p99_ms: float | None
    max_ms: float | None


@dataclass(slots=True)
class TimeLagRow:
    name: str                     # a consumer's client id, or a group (kind "commits")
    kind: str                     # "fetch" (its Fetch answers) or "commits" (its committed offsets)
    latest_ms: float | None       # the largest latest sample over its partitions
    max_ms: float | None          # the largest sample since the start


@dataclass(slots=True)
class ShareRow:
    group: str
    fetches: int                  # ShareFetch requests
    acquired: int                 # records acquired
    redelivered: int              # of which delivered before
    acknowledged: int             # records acknowledged (any type)


@dataclass(slots=True)
class FindingRow:
    severity: str                 # "critical", "warning", "info"
    kind: str                     # kwire.analytics.findings kinds
    summary: str
    start: float | None           # epoch seconds


@dataclass(slots=True)
class GroupRow:
    group: str
    protocol: str                 # "classic", "consumer", "share"
    generation: int | None        # the latest generation (or member epoch)
    members: int                  # in it
    generations: int              # seen since the start
    expired: int                  # members that vanished without leaving
    since: float | None           # when the latest generation started (epoch seconds)


@dataclass(slots=True)
class Health:
    packets: int = 0
    bytes: int = 0
    packets_per_s: float = 0.0
    kernel_drops: int | None = None   # None: the source cannot tell (a replay)
    queue_drops: int = 0
    queue: int = 0                    # packets waiting for the pipeline
    truncated: int = 0
    gaps: int = 0
    gap_bytes: int = 0
    connections: int = 0              # TCP connections open
    kafka_connections: int = 0        # connections that carried Kafka, since the start
    decode_errors: int = 0
    non_tcp: int = 0                  # packets the net layer could not use


@dataclass(slots=True)
class Snapshot:
    kind: str                          # "live" or "replay"
    where: str                         # interface (and filter) or file names
    now_ns: int
    elapsed_s: float                   # capture time covered so far
    window_s: float                    # what rates and percentiles are measured over
    exchanges: int = 0                 # since the start
    rate: float = 0.0                  # all requests/s over the window
    apis: list[ApiRow] = field(default_factory=list)
    brokers: list[BrokerRow] = field(default_factory=list)            # every broker since the start, busiest first
    errors: list[tuple[str, int]] = field(default_factory=list)       # code name -> count, since the start
    clients: list[tuple[str, int]] = field(default_factory=list)      # top clients by bytes, since the start
    topics: list[tuple[str, int]] = field(default_factory=list)       # top topics by bytes, since the start
    lag: list[LagRow] = field(default_factory=list)                   # latest lag per partition
    share: list[ShareRow] = field(default_factory=list)               # per share group, since the start
    end_to_end: list[EndToEndRow] = field(default_factory=list)       # per topic and consumer, since the start
    time_lag: list[TimeLagRow] = field(default_factory=list)          # per consumer and group, latest and max
    in_flight: int = 0
    oldest_in_flight_ms: float | None = None
    unanswered: int = 0                # requests that never got a response
    orphans: int = 0                   # responses with no request seen
    slowest: list[SlowExchange] = field(default_factory=list)         # over the window, slowest first
    findings: list[FindingRow] = field(default_factory=list)          # since the start, most severe first
    groups: list[GroupRow] = field(default_factory=list)              # consumer groups seen
    health: Health = field(default_factory=Health)
    notes: list[str] = field(default_factory=list)                    # "replay finished", errors, hints
    alarms: int = 0                    # the first `alarms` notes are alarms (what stopped the capture)
    done: int | None = None            # the index of the note that says the replay finished
    finished: bool = False
