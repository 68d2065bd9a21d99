"""Exchange: one Kafka request paired with its response, the project's central type.

Everything downstream (inspect's views, stats, the live dashboard, the Spark job) consumes
Exchanges. Bodies are dicts keyed by Kafka's field names, or None when not decoded. What happened
to each body is a kwire.outcomes.BodyOutcome (`request_outcome`, `response_outcome`: None when
there was no body), what happened to the exchange its `status`, and why an unanswered one was given
up `unanswered` (kinds of kwire.outcomes); `request_error` / `response_error` are their text, derived.
A body that failed to decode leaves the exchange counted all the same.

Compiled (kwire/compiled.py), Exchange is an extension type declared in model.pxd, a dataclass all the
same (Cython's: __repr__, __eq__ and dataclasses.fields as the standard library's; __init__ written out
below), read in C by the compiled modules that cimport it. Cython's dataclass takes no `slots` argument, so the pure-Python
class keeps an instance dict; the compiled one has no room for other attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kwire.fields import reduce_by_fields, set_fields
from kwire.outcomes import NO_REQUEST, NO_RESPONSE, PAIRED, BodyOutcome, error_text, trailing_size

__all__ = ["Exchange", "PAIRED", "NO_RESPONSE", "NO_REQUEST"]


@dataclass(init=False)  # __init__ below: Cython's default_factory costs an import lookup per exchange
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

    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, connection_id: int, client: str, broker: str, status: str, correlation_id: int,
                 api_key: int | None = None, api: str | None = None, api_version: int | None = None,
                 client_id: str | None = None, request_ts_ns: int | None = None, response_ts_ns: int | None = None,
                 given_up_ts_ns: int | None = None, request_size: int | None = None,
                 response_size: int | None = None, request: dict | None = None, response: dict | None = None,
                 request_outcome: BodyOutcome | None = None, response_outcome: BodyOutcome | None = None,
                 unanswered: str | None = None, extra: dict | None = None, wire: tuple | None = None) -> None:
        """The dataclass's __init__, written out (the fields above, in their order; `extra` None: a new dict)."""
        self.connection_id = connection_id
        self.client = client
        self.broker = broker
        self.status = status
        self.correlation_id = correlation_id
        self.api_key = api_key
        self.api = api
        self.api_version = api_version
        self.client_id = client_id
        self.request_ts_ns = request_ts_ns
        self.response_ts_ns = response_ts_ns
        self.given_up_ts_ns = given_up_ts_ns
        self.request_size = request_size
        self.response_size = response_size
        self.request = request
        self.response = response
        self.request_outcome = request_outcome
        self.response_outcome = response_outcome
        self.unanswered = unanswered
        self.extra = {} if extra is None else extra
        self.wire = wire

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


def new_exchange(connection_id, client, broker, status, correlation_id, api_key, api, api_version, client_id,
                 request_ts_ns, response_ts_ns, given_up_ts_ns, request_size, response_size, request, response,
                 request_outcome, response_outcome, unanswered, extra, wire) -> Exchange:
    """Exchange(...) with every field given (`extra` a dict), made without a call of its __init__: the
    per-exchange path's maker (kwire.native.exchange_build). Compiled, a C call that sets the fields in C."""
    ex = Exchange.__new__(Exchange)
    ex.connection_id = connection_id
    ex.client = client
    ex.broker = broker
    ex.status = status
    ex.correlation_id = correlation_id
    ex.api_key = api_key
    ex.api = api
    ex.api_version = api_version
    ex.client_id = client_id
    ex.request_ts_ns = request_ts_ns
    ex.response_ts_ns = response_ts_ns
    ex.given_up_ts_ns = given_up_ts_ns
    ex.request_size = request_size
    ex.response_size = response_size
    ex.request = request
    ex.response = response
    ex.request_outcome = request_outcome
    ex.response_outcome = response_outcome
    ex.unanswered = unanswered
    ex.extra = extra
    ex.wire = wire
    return ex
