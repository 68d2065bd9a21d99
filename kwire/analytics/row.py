"""An exchange's row (kwire.analytics.facts.exchange_row): its columns as the fields of one object.

Every exchange gets one, and every analysis reads it (kwire.analytics.aggregate's figures, kwire.analytics
.traffic, the observations' evidence). Compiled (row.pxd) an ExchangeRow is an extension type whose fields the
compiled analyses read and write in C: about a tenth of what a dict of its 29 keys costs to make, read and free.

It is also a read-only Mapping of its names (NAMES: the columns, EXCHANGE_COLUMNS, then three that are not
columns) to their values, in that order: row["api"], row.get("wait"), keys(), items(), dict(row), `in`, and ==
against a dict of the same items. Readers that take rows as dicts keep doing so (kwire.live.metrics_state,
Spark's Arrow tables through pyarrow's from_pylist, the renderers). `row_of(mapping)` makes one of a dict (a
row made elsewhere: tests, a hand-made row), its missing names at a new row's values.

A new row holds what most exchanges hold: None everywhere but request_trailing_bytes and
response_trailing_bytes (0), wait and negotiation (False).
"""

from __future__ import annotations

from collections.abc import Mapping

from kwire.fields import reduce_by_fields, set_fields

# Columns of an exchange row, in order (the Parquet table's too: kwire.spark.schemas.EXCHANGE_SCHEMA).
EXCHANGE_COLUMNS = ("ts_ns", "request_ts_ns", "response_ts_ns", "client", "broker", "client_id", "api_key",
                    "api", "api_version", "correlation_id", "status", "unanswered", "latency_ms", "request_bytes",
                    "response_bytes", "error_codes", "failed", "request_outcome", "response_outcome",
                    "request_error", "response_error", "request_trailing_bytes", "response_trailing_bytes",
                    "group_id", "wait", "negotiation")
# Not columns: which TCP connection (two connections a client made from one port, one after the other, told
# apart), the latency exactly in ns, the exchange's evidence (kwire.analytics.observe.evidence).
NAMES = EXCHANGE_COLUMNS + ("connection_id", "latency_ns", "evidence")
_KNOWN = frozenset(NAMES)


class ExchangeRow:
    __slots__ = NAMES
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.ts_ns = self.request_ts_ns = self.response_ts_ns = None
        self.client = self.broker = self.client_id = None
        self.api_key = self.api = self.api_version = self.correlation_id = None
        self.status = self.unanswered = self.latency_ms = None
        self.request_bytes = self.response_bytes = self.error_codes = self.failed = None
        self.request_outcome = self.response_outcome = self.request_error = self.response_error = None
        self.request_trailing_bytes = self.response_trailing_bytes = 0
        self.group_id = None
        self.wait = self.negotiation = False
        self.connection_id = self.latency_ns = self.evidence = None

    # -- the Mapping of NAMES to values ------------------------------------------------------------------------

    def __getitem__(self, name):
        if name not in _KNOWN:
            raise KeyError(name)
        return getattr(self, name)

    def __setitem__(self, name, value) -> None:
        if name not in _KNOWN:
            raise KeyError(name)
        setattr(self, name, value)

    def get(self, name, default=None):
        return getattr(self, name) if name in _KNOWN else default

    def __contains__(self, name) -> bool:
        return name in _KNOWN

    def __iter__(self):
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)

    def keys(self):
        return NAMES

    def values(self) -> list:
        return [getattr(self, name) for name in NAMES]

    def items(self) -> list:
        return [(name, getattr(self, name)) for name in NAMES]

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in NAMES}

    def __eq__(self, other):
        if isinstance(other, (ExchangeRow, Mapping)):
            return self.to_dict() == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"ExchangeRow({self.to_dict()!r})"


Mapping.register(ExchangeRow)


def row_of(mapping) -> ExchangeRow:
    """An ExchangeRow of a Mapping of (some of) NAMES (the row itself when it is one); other keys are not kept."""
    if type(mapping) is ExchangeRow:
        return mapping
    row = ExchangeRow()
    for name, value in mapping.items():
        if name in _KNOWN:
            setattr(row, name, value)
    return row
