"""AddOffsetsToTxn (api key 25): a transactional producer enrols a consumer group's offsets in its transaction.

Versions (request / response):
- v0: TransactionalId, ProducerId, ProducerEpoch, GroupId; the answer is ThrottleTimeMs and ErrorCode.
- v1: same as v0 (on quota violation brokers answer before throttling).
- v2: adds the PRODUCER_FENCED error code.
- v3: first flexible version.
- v4: adds the TRANSACTION_ABORTABLE error code (KIP-890).
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, PRODUCER_ID, TRANSACTIONAL_ID, F, request, response

REQUEST = request(25, [
    F("TransactionalId", "string", "0+", entity=TRANSACTIONAL_ID),
    F("ProducerId", "int64", "0+", entity=PRODUCER_ID),
    F("ProducerEpoch", "int16", "0+"),
    F("GroupId", "string", "0+", entity=GROUP_ID),
])

RESPONSE = response(25, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
])
