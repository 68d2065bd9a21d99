"""Exchange: one Kafka request paired with its response, the project's central type.

Everything downstream (inspect's views, stats, the live dashboard, the Spark job) consumes
Exchanges. Bodies are dicts keyed by Kafka's field names, or None when not decoded. What happened
to each body is a kwire.outcomes.BodyOutcome (`request_outcome`, `response_outcome`: None when
there was no body), what happened to the exchange its `status`, and why an unanswered one was given
up `unanswered` (kinds of kwire.outcomes); `request_error` / `response_error` are their text, derived.
A body that failed to decode leaves the exchange counted all the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kwire.outcomes import NO_REQUEST, NO_RESPONSE, PAIRED, BodyOutcome, error_text, trailing_size

__all__ = ["Exchange", "PAIRED", "NO_RESPONSE", "NO_REQUEST"]


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
    request_outcome: BodyOutcome | None = None  # None: no request body was captured
    response_outcome: BodyOutcome | None = None
    unanswered: str | None = None  # no_response: why kwire stopped waiting (kwire.outcomes.UNANSWERED_KINDS)
    extra: dict = field(default_factory=dict)  # enrichments (topic names, lag) added after pairing
    # Where the frames lie on the wire, when the run tracks it (kwire inspect -w): (client's first TCP
    # sequence number, broker's, request frame (start, end) in the client's bytes, response's in the
    # broker's); None otherwise.
    wire: tuple | None = None

    @property
    def request_error(self) -> str | None:
        """The text of a request outcome that left its body undecoded (kwire.outcomes.error_text)."""
        return error_text(self.request_outcome)

    @property
    def response_error(self) -> str | None:
        return error_text(self.response_outcome)

    @property
    def request_trailing(self) -> int:
        """Bytes left after the decoded request body."""
        return trailing_size(self.request_outcome)

    @property
    def response_trailing(self) -> int:
        return trailing_size(self.response_outcome)

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
