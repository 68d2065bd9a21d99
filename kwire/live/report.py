"""What a live capture reports about itself, as plain values that travel between processes.

- `pipeline_report(pipeline)`: what the dashboard reads of a Pipeline (TCP and Kafka counters,
  requests in flight, the connections that lost bytes, exchanges by status), as a dict of plain
  values; the capture process sends it with every batch (kwire.live.sniffer).
- `ReportedPipeline(report)`: that dict read back with the attributes kwire.live.state's snapshot
  reads of a Pipeline, so the dashboard's figures are made by the same code in both layouts.
- `requests_in_flight(pipeline)`: requests waiting for their answer, the oldest one's time and the
  count per broker, in one walk over the open connections (of a Pipeline, or as a report gave them).
- `lost_connections(pipeline)`: "client → broker" and the bytes lost, for the connections whose
  pairing had to resync after a gap (kwire.native.tcp_flows.FlowTable.losses).
- `final_document(...)`: the `kwire live --json` document.
"""

from __future__ import annotations

from kwire.native.kafka_connection import CONFIRMED

FORMAT = "kwire-live/1"
LOST_SHOWN = 5  # connections named in a report


def lost_connections(pipeline, limit: int = LOST_SHOWN) -> list[tuple[str, int, int]]:
    """(label, gaps, bytes lost) of the connections that lost bytes, most bytes first."""
    rows = []
    for conn, gaps, lost in pipeline.flows.losses()[:limit]:
        stream = pipeline.kafka.streams.get(conn.id)
        client_dir = stream.client_dir if stream is not None else None
        if client_dir is None:
            client_dir = 0 if conn.initiator == 0 else None
        a, b = conn.endpoint_names()
        label = f"{a} ↔ {b}" if client_dir is None else (f"{a} → {b}" if client_dir == 0 else f"{b} → {a}")
        rows.append((label, gaps, lost))
    return rows


def requests_in_flight(pipeline) -> tuple[int, int | None, dict[str, int]]:
    """(requests waiting for a response, the oldest one's capture time, broker "ip:port" -> requests
    waiting) over confirmed connections, in the one walk over the open connections (made at report or
    snapshot time, never per exchange)."""
    if isinstance(pipeline, ReportedPipeline):
        return pipeline.in_flight
    count = 0
    oldest = None
    by_broker: dict[str, int] = {}
    for stream in pipeline.kafka.streams.values():
        if stream.state != CONFIRMED:
            continue
        pairing = stream.pairing
        if not pairing.pending:
            continue
        waiting = len(pairing.pending)
        count += waiting
        first = pairing.oldest_ts_ns()
        if oldest is None or first < oldest:
            oldest = first
        conn = stream.conn
        broker = (conn.names or conn.endpoint_names())[1 - stream.client_dir]
        by_broker[broker] = by_broker.get(broker, 0) + waiting
    return count, oldest, by_broker


def pipeline_report(pipeline) -> dict:
    """What the dashboard reads of `pipeline` (kwire.pipeline.Pipeline), as plain values."""
    tcp = pipeline.flows.counters()
    in_flight, oldest, by_broker = requests_in_flight(pipeline)
    summary = pipeline.summary
    return {"gaps": tcp.get("gaps", 0), "gap_bytes": tcp.get("gap_bytes", 0),
            "connections": tcp.get("open_connections", 0),
            "kafka_connections": pipeline.kafka.counters.kafka_connections, "non_tcp": pipeline.net.total,
            "in_flight": in_flight, "oldest_in_flight_ns": oldest, "in_flight_by_broker": by_broker,
            "lost": lost_connections(pipeline),
            "tls_connections": summary.tls.connections, "tls_decrypted": summary.tls.decrypted,
            "exchanges": {"paired": summary.paired, "no_response": summary.no_response,
                          "no_request": summary.no_request, "total": summary.exchanges}}


class _Part:
    """One attribute group of ReportedPipeline."""

    def __init__(self, **attributes):
        self.__dict__.update(attributes)


class ReportedPipeline:
    """A pipeline_report read back as the parts of a Pipeline kwire.live.state reads."""

    def __init__(self, report: dict):
        counters = {"gaps": report.get("gaps", 0), "gap_bytes": report.get("gap_bytes", 0),
                    "open_connections": report.get("connections", 0)}
        self.in_flight = (report.get("in_flight", 0), report.get("oldest_in_flight_ns"),
                          dict(report.get("in_flight_by_broker") or {}))  # as requests_in_flight gives it
        self.flows = _Part(counters=lambda: counters)
        self.kafka = _Part(counters=_Part(kafka_connections=report.get("kafka_connections", 0)))
        self.net = _Part(total=report.get("non_tcp", 0))


def _ms(seconds: float | None) -> float | None:
    """A duration in seconds as the vocabulary's milliseconds (null stays null)."""
    return None if seconds is None else round(seconds * 1000, 3)


def final_document(*, where: str, expression: str | None, seconds: float, health: dict, report: dict,
                   counted: int, files: list[str], error: str | None) -> dict:
    """`kwire live --json`: the run's final figures (docs/live.md)."""
    exchanges = report.get("exchanges") or {}
    return {
        "format": FORMAT,
        "interface": where,
        "filter": expression,
        "duration_ms": _ms(seconds),
        "seconds": round(seconds, 3),  # deprecated: duration_ms in seconds, kept for one release
        "packets": health.get("packets", 0),
        "bytes": health.get("bytes", 0),
        "kernel_drops": health.get("kernel_drops"),
        "queue_drops": health.get("queue_drops", 0),
        "figures_lag_max_ms": _ms(health.get("figures_lag_max_s")),
        "figures_lag_max_s": health.get("figures_lag_max_s"),  # deprecated: the same in seconds, for one release
        "truncated": health.get("truncated", 0),
        "gaps": report.get("gaps", 0),
        "gap_bytes": report.get("gap_bytes", 0),
        "kafka_connections": report.get("kafka_connections", 0),
        "exchanges": {key: exchanges.get(key, 0) for key in ("total", "paired", "no_response", "no_request")},
        "counted": counted,
        "lost": [{"connection": label, "gaps": gaps, "bytes": lost} for label, gaps, lost in report.get("lost", ())],
        "files": list(files),
        "error": error,
    }
