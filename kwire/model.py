"""Exchange: one Kafka request paired with its response, the project's central type.

Everything downstream (inspect's views, stats, the live dashboard, the Spark job) consumes
Exchanges. Bodies are dicts keyed by Kafka's field names, or None when not decoded; a body that
failed to decode carries its error in `request_error` / `response_error` and the exchange still
counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PAIRED = "paired"
NO_RESPONSE = "no_response"
NO_REQUEST = "no_request"


@dataclass(slots=True)
class Exchange:
    connection_id: int
    client: str  # "ip:port"
    broker: str
    status: str  # PAIRED, NO_RESPONSE, NO_REQUEST
    correlation_id: int
    api_key: int | None = None
    api: str | None = None
    api_version: int | None = None
    client_id: str | None = None
    request_ts_ns: int | None = None  # capture time of the request's last segment
    response_ts_ns: int | None = None  # capture time of the response's last segment
    given_up_ts_ns: int | None = None  # no_response: capture time kwire stopped waiting (close, end)
    request_size: int | None = None  # frame size on the wire, length prefix included
    response_size: int | None = None
    request: dict | None = None
    response: dict | None = None
    request_error: str | None = None
    response_error: str | None = None
    request_trailing: int = 0  # bytes left after the decoded body
    response_trailing: int = 0
    extra: dict = field(default_factory=dict)  # enrichments (topic names, lag) added after pairing
    # Where the frames lie on the wire, when the run tracks it (kwire inspect -w): (client's first TCP
    # sequence number, broker's, request frame (start, end) in the client's bytes, response's in the
    # broker's); None otherwise.
    wire: tuple | None = None

    @property
    def ts_ns(self) -> int:
        if self.request_ts_ns is not None:
            return self.request_ts_ns
        return self.response_ts_ns or 0

    @property
    def unanswered_ms(self) -> float | None:
        """no_response: how long the request went unanswered before kwire stopped waiting."""
        if self.request_ts_ns is None or self.given_up_ts_ns is None:
            return None
        return (self.given_up_ts_ns - self.request_ts_ns) / 1e6

    @property
    def latency_ms(self) -> float | None:
        if self.request_ts_ns is None or self.response_ts_ns is None:
            return None
        return (self.response_ts_ns - self.request_ts_ns) / 1e6
