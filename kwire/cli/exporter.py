"""`kwire live --metrics [HOST:]PORT`: the Prometheus exporter, on threads of its own.

`start_exporter(address, feeder, state)` binds the address (one `kwire: error:` line when it cannot) and
serves /metrics with kwire.live.http_server (one selector thread; connections, timeouts and request size
bounded: docs/bounds.md), in Prometheus' text format or in OpenMetrics when the scraper asks for it (content
negotiation on the Accept header, prometheus_client's encoders; gzip when accepted). Each answer is made on the
server's render thread, which asks the feeder (kwire.live.feeder.SnapshotThread.call) for the metric families
(kwire.live.metric_families) between two pieces of its work, so a scrape waits for the feeder, never the other
way round, and the capture (its own process on Linux) waits for neither. Once the feeder has ended (a replay
done) the families are made on the render thread from the state as it was left: a replay keeps serving its
final figures. process_* families come from prometheus_client's ProcessCollector (memory, CPU, open files of
kwire's process), kwire_exporter_* from the server's own counts.
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


class ServiceCollector:
    """The server's counts as families (kwire_exporter_connections_total ...)."""

    def __init__(self, server):
        self.server = server

    def collect(self):
        from kwire.live.metric_families import service_families

        counts = {outcome.label: n for outcome, n in list(self.server.counts.items())}
        return service_families(counts, self.server.open, self.server.max_connections)


class Scrapes:
    """What the server asks of a request: the format it wants (the key requests share a render by), and
    the render, prometheus_client's encoder of the registry (gzip when accepted)."""

    def __init__(self, registry):
        self.registry = registry

    def negotiate(self, request):
        from prometheus_client.exposition import choose_encoder, gzip_accepted

        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        gzipped = gzip_accepted(request.headers.get("accept-encoding", ""))
        return (content_type, gzipped), lambda: self._render(encoder, content_type, gzipped)

    def _render(self, encoder, content_type: str, gzipped: bool):
        body = encoder(self.registry)
        if gzipped:
            import gzip

            return gzip.compress(body, compresslevel=6), content_type, "gzip"
        return body, content_type, None


class Exporter:
    def __init__(self, server):
        self.server = server
        self.port: int = server.sock.getsockname()[1]  # the one bound (port 0 asks the kernel for one)

    def stop(self) -> None:
        self.server.stop()


def listen(host: str, port: int):
    """A listening TCP socket on (host, port), IPv4 or IPv6 as the host is."""
    import socket

    from kwire.live.http_server import LISTEN_BACKLOG

    family, kind, proto, _, where = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(LISTEN_BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


def start_exporter(address: str, feeder, state) -> Exporter:
    from prometheus_client import CollectorRegistry
    from prometheus_client.process_collector import ProcessCollector

    from kwire.live.http_server import HttpServer

    host, port = parse_address(address)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(FeederCollector(feeder, state))
    ProcessCollector(registry=registry)
    try:
        sock = listen(host, port)
    except OSError as exc:
        raise KwireError(f"cannot listen on {address} for --metrics: {exc.strerror or exc}") from None
    server = HttpServer(sock, Scrapes(registry).negotiate)
    registry.register(ServiceCollector(server))
    server.start()
    return Exporter(server)
