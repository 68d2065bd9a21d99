"""TxnOffsetCommit (api key 28): a transactional producer commits consumer offsets inside its transaction.

Versions (request / response):
- v0: TransactionalId, GroupId, ProducerId, ProducerEpoch, Topics -> Partitions (offset, metadata);
  the answer is per-partition error codes.
- v1: same as v0 (on quota violation brokers answer before throttling).
- v2: adds CommittedLeaderEpoch per partition.
- v3: first flexible version; adds GenerationId, MemberId, GroupInstanceId (KIP-447) and the errors
  ILLEGAL_GENERATION, FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID.
- v4: adds the TRANSACTION_ABORTABLE error code (KIP-890).
- v5: same fields as v4; with transactions V2 (KIP-890 part 2) it also does AddOffsetsToTxn's work.
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, PRODUCER_ID, TOPIC_NAME, TRANSACTIONAL_ID, F, request, response

REQUEST = request(28, [
    F("TransactionalId", "string", "0+", entity=TRANSACTIONAL_ID),
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("ProducerId", "int64", "0+", entity=PRODUCER_ID),
    F("ProducerEpoch", "int16", "0+"),
    F("GenerationId", "int32", "3+"),
    F("MemberId", "string", "3+"),
    F("GroupInstanceId", "string", "3+", nullable="3+"),
    F("Topics", "[]TxnOffsetCommitRequestTopic", "0+", fields=[
        F("Name", "string", "0+", entity=TOPIC_NAME),
        F("Partitions", "[]TxnOffsetCommitRequestPartition", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("CommittedOffset", "int64", "0+"),
            F("CommittedLeaderEpoch", "int32", "2+"),
            F("CommittedMetadata", "string", "0+", nullable="0+"),
        ]),
    ]),
])

RESPONSE = response(28, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("Topics", "[]TxnOffsetCommitResponseTopic", "0+", fields=[
        F("Name", "string", "0+", entity=TOPIC_NAME),
        F("Partitions", "[]TxnOffsetCommitResponsePartition", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("ErrorCode", "int16", "0+"),
        ]),
    ]),
])
