"""`kwire live --metrics [HOST:]PORT`: the Prometheus exporter, on threads of its own.

`start_exporter(address, feeder, state)` binds the address (one `kwire: error:` line when it cannot)
and serves /metrics with prometheus_client's own HTTP server, which answers in Prometheus' text
format or in OpenMetrics when the scraper asks for it (content negotiation on the Accept header).
Each scrape asks the feeder (kwire.live.feeder.SnapshotThread.call) for the metric families
(kwire.live.metric_families) between two pieces of its work, so the scrape waits for the feeder,
never the other way round, and the capture (its own process on Linux) waits for neither. Once
the feeder has ended (a replay done) the families are made on the scrape's thread from the state
as it was left: a replay keeps serving its final figures. process_* families come from
prometheus_client's ProcessCollector (memory, CPU, open files of kwire's process).
"""

from __future__ import annotations

from kwire.errors import KwireError


def parse_address(text: str) -> tuple[str, int]:
    """'[HOST:]PORT' -> (host, port); ':9464' and '9464' listen on every address, '[::1]:9464' on IPv6."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]")
    try:
        number = int(port)
    except ValueError:
        raise KwireError(f"--metrics {text}: expected [HOST:]PORT") from None
    if not 0 <= number <= 65535:
        raise KwireError(f"--metrics {text}: port out of range")
    return host or "0.0.0.0", number


class FeederCollector:
    """A prometheus_client collector whose families the feeder makes."""

    def __init__(self, feeder, state):
        self.feeder = feeder
        self.state = state

    def collect(self):
        return self.feeder.call(self._families)

    def _families(self) -> list:
        from kwire.live.metric_families import families

        health, report = self.feeder.totals()
        return families(self.state.metrics_view(health, report))


class Exporter:
    def __init__(self, server, thread):
        self.server = server
        self.thread = thread

    @property
    def port(self) -> int:
        return self.server.server_port

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5.0)


def start_exporter(address: str, feeder, state) -> Exporter:
    from prometheus_client import CollectorRegistry, start_http_server
    from prometheus_client.process_collector import ProcessCollector

    host, port = parse_address(address)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FeederCollector(feeder, state))
    ProcessCollector(registry=registry)
    try:
        server, thread = start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        raise KwireError(f"cannot listen on {address} for --metrics: {exc.strerror or exc}") from None
    return Exporter(server, thread)
