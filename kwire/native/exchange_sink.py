"""Where Kafka's stream layer hands each exchange it pairs, and which exchanges another process may decode.

- `ExchangeCounts`: the exchanges of a run by status, the connections that carried them and the exchanges with a
  malformed body; kwire.pipeline.RunSummary is one, with all else a run saw.
- `ExchangeSink`: a Pipeline's (kwire.pipeline), handed each RawExchange Kafka's stream layer completes
  (`on_raw`): decoded (kwire.native.exchange_build), enriched (kwire.native.exchange_enrich) and counted into
  `out`; or, when `offload(raw)` picks it, counted by status and put into `out` as it is (whoever decodes it adds
  its decode errors). It holds no reference to its Pipeline.
- `offloadable(raw)`: may this exchange be decoded (and rendered) in another process? Only when nothing but its
  own bytes is needed (the enricher leaves its api and version alone: kwire.native.exchange_enrich.enriched), and
  they are few (MAX_OFFLOADED_BYTES); `offloadable_with_records` and `offloadable_to_fold`, the choices of `inspect
  --records` and of `kwire stats` (kwire.parallel, kwire.spark).

Compiled (kwire/native/exchange_sink.pxd), the sink's work per exchange is C calls, and the choice reads the
RawExchange and its request header in C.
"""

from __future__ import annotations

from typing import Callable

from kwire.codec.marks import carries_records
from kwire.fields import reduce_by_fields, set_fields
from kwire.model import NO_REQUEST, NO_RESPONSE, PAIRED, Exchange
from kwire.native import exchange_build as _exchanges  # compiled: its cpdef functions called in C (the .pxd)
from kwire.native.exchange_build import is_malformed
from kwire.native.exchange_enrich import enriched
from kwire.native.kafka_headers import version_key
from kwire.native.kafka_pairing import RawExchange

MAX_OFFLOADED_BYTES = 64 << 10  # request + response frames of an exchange sent to a worker
PRODUCE = 0  # api key


class ExchangeCounts:
    """The exchanges a run counted: by status, the connections that carried Kafka, those with a malformed body."""

    __slots__ = ("exchanges", "paired", "no_response", "no_request", "decode_errors", "connections")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields), a subclass's fields with them
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.exchanges = self.paired = self.no_response = self.no_request = self.decode_errors = 0
        self.connections: set[int] = set()  # connections that carried Kafka

    def count(self, ex: Exchange) -> None:
        """A decoded exchange."""
        status = ex.status  # count_status, inline: once per exchange
        self.exchanges += 1
        self.connections.add(ex.connection_id)
        if status == PAIRED:
            self.paired += 1
        elif status == NO_RESPONSE:
            self.no_response += 1
        elif status == NO_REQUEST:
            self.no_request += 1
        if is_malformed(ex):
            self.decode_errors += 1

    def count_status(self, status: str, connection_id: int) -> None:
        """An exchange whose bodies are decoded elsewhere (its decode errors are added there)."""
        self.exchanges += 1
        self.connections.add(connection_id)
        if status == PAIRED:
            self.paired += 1
        elif status == NO_RESPONSE:
            self.no_response += 1
        elif status == NO_REQUEST:
            self.no_request += 1


class ExchangeSink:
    """Each exchange the Kafka layer completes: decoded, enriched and counted into `out`, or offloaded."""

    __slots__ = ("offload", "decode", "enricher", "summary", "out")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, offload: Callable[[RawExchange], bool] | None, decode: bool, enricher,
                 summary: ExchangeCounts):
        self.offload = offload
        self.decode = decode
        self.enricher = enricher
        self.summary = summary
        self.out: list = []

    def on_raw(self, raw: RawExchange) -> None:
        """The Kafka layer completed an exchange: decode, enrich, count it (or offload it)."""
        offload = self.offload
        if offload is not None and offload(raw):
            self.summary.count_status(raw.status, raw.conn.id)
            self.out.append(raw)
            return
        ex = _exchanges._build(_exchanges._plain_parts(raw, False), self.decode)  # build_exchange, in C
        if self.decode:
            self.enricher.enrich(ex)
        self.summary.count(ex)
        self.out.append(ex)


def offloadable(raw: RawExchange) -> bool:
    """Should this exchange be decoded and rendered in another process? Only when nothing but its
    own bytes is needed, and they are few: a big frame's decoding is cheap per byte (record
    batches are summarised, not decoded) while shipping it costs copies both ways."""
    req = raw.request
    if req is None or req.size + (raw.response_size or 0) > MAX_OFFLOADED_BYTES:
        return False
    header = req.header
    api_key, api_version = header.api_key, header.api_version  # compiled: read in C (the .pxd)
    key = version_key(api_key, api_version)  # both int16 off the wire: one int, not a tuple
    local = _STAYS.get(key)
    if local is None:
        local = enriched(api_key, api_version)
        if len(_STAYS) < 4096:  # bounded: the wire chooses these numbers
            _STAYS[key] = local
    return not local


_STAYS: dict[int, bool] = {}  # kwire.native.kafka_headers.version_key -> kwire.native.exchange_enrich.enriched


def offloadable_with_records(raw: RawExchange) -> bool:
    """`offloadable` when every record is decoded (`--records`): exchanges of apis that carry records
    stay here too, where the run's decompression budget is kept and charged in capture order
    (kwire.render.records_run), so what it cuts does not depend on the number of workers."""
    return offloadable(raw) and not carries_records(raw.request.header.api_key)


def offloadable_to_fold(raw: RawExchange) -> bool:
    """`offloadable`, and every Produce exchange of a version the enricher leaves alone, however big: what
    `kwire stats` sends to workers (kwire.parallel.FoldedBatches routes a producer's Produce exchanges all to one,
    where they are read for resends in their order; one counted here would be read apart)."""
    if offloadable(raw):
        return True
    req = raw.request
    if req is None:
        return False
    header = req.header
    return header.api_key == PRODUCE and not enriched(PRODUCE, header.api_version)
