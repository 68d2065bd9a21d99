"""An exchange's row and its partition rows (kwire.native.exchange_facts): their columns as the fields of an object.

Every exchange gets an ExchangeRow, and every analysis reads it (kwire.analytics.aggregate's figures,
kwire.analytics.traffic, the observations' evidence); a Produce, Fetch or share exchange a PartitionRow per
partition (the partitions table, the share groups). Compiled (row.pxd) both are extension types whose fields the
compiled analyses write and read in C: a fraction of what a dict of their 29 and 17 keys costs to make, read and
free.

Each is also a Mapping (FieldRow) of its names (NAMES: an exchange row's columns, EXCHANGE_COLUMNS, then three
that are not columns; a partition row's PARTITION_COLUMNS) to their values, in that order: row["api"],
row.get("wait"), keys(), items(), dict(row), `in`, and == against a dict of the same items; row[name] = value
sets a field, a name that is not one is a KeyError. Readers that take rows as dicts keep doing so
(kwire.live.metrics_state, Spark's Arrow tables through pyarrow's from_pylist, the renderers). `row_of(mapping)`
makes an ExchangeRow of a dict (a row made elsewhere: tests, a hand-made row), its missing names at a new row's.

A new ExchangeRow holds what most exchanges hold: None everywhere but request_trailing_bytes and
response_trailing_bytes (0), wait and negotiation (False). A new PartitionRow: every count 0, the lag's three
(fetch_offset, high_watermark, lag) None.
"""
from __future__ import annotations

from collections.abc import Mapping

from kwire.fields import reduce_by_fields, set_fields
from kwire.vocabulary import ACK_TYPES, EXCHANGE_COLUMNS, PARTITION_COLUMNS

# Columns of an exchange row, in order: kwire.vocabulary's Parquet columns (the Parquet table's too:
# kwire.spark.schemas.EXCHANGE_SCHEMA).
# Not columns: which TCP connection (two connections a client made from one port, one after the other, told
# apart), the latency exactly in ns, the exchange's evidence (kwire.analytics.observe.evidence).
NAMES = EXCHANGE_COLUMNS + ("connection_id", "latency_ns", "evidence")
_KNOWN = frozenset(NAMES)
_EXCHANGE_NAMES = NAMES  # (ExchangeRow.NAMES)
# ShareAcknowledge's AcknowledgeType values (kwire.native.exchange_facts counts them), and their columns.
ACK_COLUMNS = tuple(f"ack_{name.lower()}" for name in ACK_TYPES.values())
assert set(ACK_COLUMNS) <= set(PARTITION_COLUMNS)


class FieldRow:
    """A row's fields as a Mapping of its class's NAMES (in that order) to their values, row[name] = value
    setting one; a name that is not one is a KeyError, as a dict's missing key. Its subclasses give NAMES and
    KNOWN (their set)."""

    __slots__ = ()
    NAMES = ()  # (a subclass's)
    KNOWN = frozenset()

    def __getitem__(self, name):
        if name not in type(self).KNOWN:
            raise KeyError(name)
        return getattr(self, name)

    def __setitem__(self, name, value) -> None:
        if name not in type(self).KNOWN:
            raise KeyError(name)
        setattr(self, name, value)

    def get(self, name, default=None):
        return getattr(self, name) if name in type(self).KNOWN else default

    def __contains__(self, name) -> bool:
        return name in type(self).KNOWN

    def __iter__(self):
        return iter(type(self).NAMES)

    def __len__(self) -> int:
        return len(type(self).NAMES)

    def keys(self):
        return type(self).NAMES

    def values(self) -> list:
        return [getattr(self, name) for name in type(self).NAMES]

    def items(self) -> list:
        return [(name, getattr(self, name)) for name in type(self).NAMES]

    def to_dict(self) -> dict:
        return {name: getattr(self, name) for name in type(self).NAMES}

    def __eq__(self, other):
        if isinstance(other, (FieldRow, Mapping)):
            return self.to_dict() == dict(other.items())
        return NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.to_dict()!r})"


class ExchangeRow(FieldRow):
    __slots__ = NAMES
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields
    NAMES = _EXCHANGE_NAMES
    KNOWN = _KNOWN

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


class PartitionRow(FieldRow):
    """A partition row (kwire.native.exchange_facts.partition_rows: PARTITION_COLUMNS), new: every count 0, the lag's
    three None."""

    __slots__ = PARTITION_COLUMNS
    __reduce__ = reduce_by_fields
    __setstate__ = set_fields
    NAMES = PARTITION_COLUMNS
    KNOWN = frozenset(PARTITION_COLUMNS)

    def __init__(self) -> None:
        self.ts_ns = self.api = self.group_id = self.topic = self.partition = 0
        self.bytes = self.records = 0
        self.fetch_offset = self.high_watermark = self.lag = None
        self.acquired = self.redelivered = 0
        self.ack_gap = self.ack_accept = self.ack_release = self.ack_reject = self.ack_renew = 0


Mapping.register(FieldRow)


def row_of(mapping) -> ExchangeRow:
    """An ExchangeRow of a Mapping of (some of) NAMES (the row itself when it is one); other keys are not kept."""
    if type(mapping) is ExchangeRow:
        return mapping
    row = ExchangeRow()
    for name, value in mapping.items():
        if name in _KNOWN:
            setattr(row, name, value)
    return row
