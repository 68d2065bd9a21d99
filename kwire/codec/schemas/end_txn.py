"""EndTxn (api key 26): commit or abort a transaction.

Versions (request / response):
- v0: TransactionalId, ProducerId, ProducerEpoch, Committed; the answer is ThrottleTimeMs and ErrorCode.
- v1: same as v0 (on quota violation brokers answer before throttling).
- v2: adds the PRODUCER_FENCED error code.
- v3: first flexible version.
- v4: adds the TRANSACTION_ABORTABLE error code (KIP-890).
- v5: the epoch is bumped on every transaction (KIP-890 part 2): the response adds ProducerId and ProducerEpoch.
"""

from __future__ import annotations

from kwire.codec.schema import PRODUCER_ID, TRANSACTIONAL_ID, F, request, response

REQUEST = request(26, [
    F("TransactionalId", "string", "0+", entity=TRANSACTIONAL_ID),
    F("ProducerId", "int64", "0+", entity=PRODUCER_ID),
    F("ProducerEpoch", "int16", "0+"),
    F("Committed", "bool", "0+"),
])

RESPONSE = response(26, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
    F("ProducerId", "int64", "5+", entity=PRODUCER_ID),
    F("ProducerEpoch", "int16", "5+"),
])
