"""InitProducerId (api key 22): a producer obtains its producer id and epoch (idempotence, transactions).

Versions (request / response):
- v0: TransactionalId, TransactionTimeoutMs; the answer has ThrottleTimeMs, ErrorCode, ProducerId, ProducerEpoch.
- v1: same as v0 (on quota violation brokers answer before throttling).
- v2: first flexible version.
- v3: adds ProducerId and ProducerEpoch, so a producer can resume after INVALID_PRODUCER_EPOCH.
- v4: adds the PRODUCER_FENCED error code.
- v5: adds the TRANSACTION_ABORTABLE error code (KIP-890).
- v6: two-phase commit (KIP-939): Enable2Pc, KeepPreparedTxn; the response adds OngoingTxnProducerId and
  OngoingTxnProducerEpoch.
"""

from __future__ import annotations

from kwire.codec.schema import PRODUCER_ID, TRANSACTIONAL_ID, F, request, response

REQUEST = request(22, [
    F("TransactionalId", "string", "0+", nullable="0+", entity=TRANSACTIONAL_ID),
    F("TransactionTimeoutMs", "int32", "0+"),
    F("ProducerId", "int64", "3+", entity=PRODUCER_ID),
    F("ProducerEpoch", "int16", "3+"),
    F("Enable2Pc", "bool", "6+"),
    F("KeepPreparedTxn", "bool", "6+"),
])

RESPONSE = response(22, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
    F("ProducerId", "int64", "0+", entity=PRODUCER_ID),
    F("ProducerEpoch", "int16", "0+"),
    F("OngoingTxnProducerId", "int64", "6+", entity=PRODUCER_ID),
    F("OngoingTxnProducerEpoch", "int16", "6+"),
])
