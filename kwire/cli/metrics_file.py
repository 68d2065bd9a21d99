"""`kwire stats --metrics FILE`: the exporter's metric families for a capture, written to a file.

The families are kwire live's (kwire.live.metric_families), made from the capture's Aggregator and
MetricsState (kwire.live.metrics_state.MeteredAggregator), with label caps keeping the busiest
values. Two layouts:
- textfile (default): Prometheus' text format as node_exporter's textfile collector reads it, which
  refuses samples with timestamps: the capture's time is in kwire_capture_start_timestamp_seconds
  and kwire_capture_end_timestamp_seconds;
- timestamped (`--metrics-timestamps`): OpenMetrics with the capture's end time on every sample,
  what `promtool tsdb create-blocks-from openmetrics` backfills into Prometheus at that time.
The file is written next to its place and renamed over it, so a collector never reads half of one.
"""

from __future__ import annotations

import os

from kwire.errors import KwireError


def metrics_text(agg, summary, caps: dict[str, int], timestamped: bool) -> bytes:
    """The metric families of the capture's Aggregator (a MeteredAggregator) as the file holds them."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

    from kwire.live.labels import LabelCaps
    from kwire.live.metric_families import MetricsView, epoch_seconds, families

    labels = LabelCaps(caps, sticky=False)
    document_end = epoch_seconds(agg.last_ns)
    view = MetricsView(agg.metrics.folded(labels), labels, [agg], *_analysis(agg), health=_health(summary),
                       report=_report(summary, agg), timestamp=document_end if timestamped else None,
                       start_s=epoch_seconds(agg.first_ns), end_s=document_end)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(families(view)))
    return (generate_openmetrics if timestamped else generate_latest)(registry)


def write_text(path: str, text: bytes) -> None:
    """`text` written next to `path` and renamed over it."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as f:
            f.write(text)
        os.replace(temporary, path)
    except OSError as exc:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise KwireError(f"cannot write {path}: {exc.strerror or exc}") from None


class _Fixed:
    def __init__(self, families: list):
        self.families = families

    def collect(self):
        return self.families


def _analysis(agg) -> tuple[list, dict]:
    return (agg.analysis.findings(agg.names, agg.first_ns, agg.last_ns), agg.analysis.groups_document(agg.names))


def _health(summary) -> dict:
    c = summary.capture
    return {"packets": c.packets, "bytes": c.wire_bytes, "truncated": c.truncated}


def _report(summary, agg) -> dict:
    return {"gaps": summary.tcp.get("gaps", 0), "gap_bytes": summary.tcp.get("gap_bytes", 0),
            "kafka_connections": len(summary.connections), "tls_connections": agg.tls.connections,
            "tls_decrypted": agg.tls.decrypted}
