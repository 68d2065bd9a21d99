"""AddPartitionsToTxn (api key 24): add partitions to a transaction, or (v4+, broker to coordinator) verify them.

The message changes shape at v4. Up to v3 (spoken by clients) the request carries one transaction in
V3AndBelowTransactionalId / V3AndBelowProducerId / V3AndBelowProducerEpoch / V3AndBelowTopics and the
response ResultsByTopicV3AndBelow. From v4 (spoken by brokers) the request batches Transactions, each with
VerifyOnly, and the response carries a top-level ErrorCode and ResultsByTransaction.

Versions (request / response):
- v0: one transaction and its topics; the answer is per-partition error codes.
- v1: same as v0 (on quota violation brokers answer before throttling).
- v2: adds the PRODUCER_FENCED error code.
- v3: first flexible version.
- v4: batches several transactions, adds VerifyOnly; the response adds a top-level ErrorCode.
- v5: adds the TRANSACTION_ABORTABLE error code (KIP-890).
"""

from __future__ import annotations

from kwire.codec.schema import PRODUCER_ID, TOPIC_NAME, TRANSACTIONAL_ID, F, request, response

# Kafka's common struct AddPartitionsToTxnTopic (request).
ADD_PARTITIONS_TO_TXN_TOPIC = [
    F("Name", "string", "0+", entity=TOPIC_NAME),
    F("Partitions", "[]int32", "0+"),
]

# Kafka's common structs AddPartitionsToTxnTopicResult and AddPartitionsToTxnPartitionResult (response).
ADD_PARTITIONS_TO_TXN_PARTITION_RESULT = [
    F("PartitionIndex", "int32", "0+"),
    F("PartitionErrorCode", "int16", "0+"),
]
ADD_PARTITIONS_TO_TXN_TOPIC_RESULT = [
    F("Name", "string", "0+", entity=TOPIC_NAME),
    F("ResultsByPartition", "[]AddPartitionsToTxnPartitionResult", "0+",
      fields=ADD_PARTITIONS_TO_TXN_PARTITION_RESULT),
]

REQUEST = request(24, [
    F("Transactions", "[]AddPartitionsToTxnTransaction", "4+", fields=[
        F("TransactionalId", "string", "4+", entity=TRANSACTIONAL_ID),
        F("ProducerId", "int64", "4+", entity=PRODUCER_ID),
        F("ProducerEpoch", "int16", "4+"),
        F("VerifyOnly", "bool", "4+"),
        F("Topics", "[]AddPartitionsToTxnTopic", "4+", fields=ADD_PARTITIONS_TO_TXN_TOPIC),
    ]),
    F("V3AndBelowTransactionalId", "string", "0-3", entity=TRANSACTIONAL_ID),
    F("V3AndBelowProducerId", "int64", "0-3", entity=PRODUCER_ID),
    F("V3AndBelowProducerEpoch", "int16", "0-3"),
    F("V3AndBelowTopics", "[]AddPartitionsToTxnTopic", "0-3", fields=ADD_PARTITIONS_TO_TXN_TOPIC),
])

RESPONSE = response(24, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "4+"),
    F("ResultsByTransaction", "[]AddPartitionsToTxnResult", "4+", fields=[
        F("TransactionalId", "string", "4+", entity=TRANSACTIONAL_ID),
        F("TopicResults", "[]AddPartitionsToTxnTopicResult", "4+", fields=ADD_PARTITIONS_TO_TXN_TOPIC_RESULT),
    ]),
    F("ResultsByTopicV3AndBelow", "[]AddPartitionsToTxnTopicResult", "0-3", fields=ADD_PARTITIONS_TO_TXN_TOPIC_RESULT),
])
