"""Produce (api key 0): producers append record batches to partition leaders.

Versions 0-13; flexible from v9. Kafka 4.0 dropped v0-v2, which old clients still speak.
- v0: the original request: Acks, TimeoutMs, records per partition.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same request; the response adds LogAppendTimeMs.
- v3: adds TransactionalId (for authorising transactional writes); message format v2.
- v4: same as v3; the requester must handle KAFKA_STORAGE_ERROR.
- v5: same request; the response adds LogStartOffset.
- v6: same as v5.
- v7: records may be zstd-compressed (KIP-110).
- v8: the response adds RecordErrors and ErrorMessage (KIP-467).
- v9: first flexible version.
- v10: same request; the response adds CurrentLeader and NodeEndpoints as tagged fields (KIP-951).
- v11: may answer TRANSACTION_ABORTABLE (KIP-890).
- v12: same as v11; with transactions v2 partitions join the transaction implicitly (KIP-890).
- v13: topic ids replace topic names (KIP-516).
"""

from kwire.codec.enums import ACKS
from kwire.codec.schema import BROKER_ID, TOPIC_ID, TOPIC_NAME, TRANSACTIONAL_ID, F, request, response

REQUEST = request(0, [
    F("TransactionalId", "string", "3+", nullable="3+", entity=TRANSACTIONAL_ID),
    F("Acks", "int16", "0+", enum=ACKS),
    F("TimeoutMs", "int32", "0+"),
    F("TopicData", "[]TopicProduceData", "0+", fields=[
        F("Name", "string", "0-12", entity=TOPIC_NAME),
        F("TopicId", "uuid", "13+", entity=TOPIC_ID),
        F("PartitionData", "[]PartitionProduceData", "0+", fields=[
            F("Index", "int32", "0+"),
            F("Records", "records", "0+", nullable="0+"),
        ]),
    ]),
])

RESPONSE = response(0, [
    F("Responses", "[]TopicProduceResponse", "0+", fields=[
        F("Name", "string", "0-12", entity=TOPIC_NAME),
        F("TopicId", "uuid", "13+", entity=TOPIC_ID),
        F("PartitionResponses", "[]PartitionProduceResponse", "0+", fields=[
            F("Index", "int32", "0+"),
            F("ErrorCode", "int16", "0+"),
            F("BaseOffset", "int64", "0+"),
            F("LogAppendTimeMs", "int64", "2+"),
            F("LogStartOffset", "int64", "5+"),
            F("RecordErrors", "[]BatchIndexAndErrorMessage", "8+", fields=[
                F("BatchIndex", "int32", "8+"),
                F("BatchIndexErrorMessage", "string", "8+", nullable="8+"),
            ]),
            F("ErrorMessage", "string", "8+", nullable="8+"),
            F("CurrentLeader", "LeaderIdAndEpoch", "10+", tag=0, fields=[
                F("LeaderId", "int32", "10+", entity=BROKER_ID),
                F("LeaderEpoch", "int32", "10+"),
            ]),
        ]),
    ]),
    F("ThrottleTimeMs", "int32", "1+"),
    F("NodeEndpoints", "[]NodeEndpoint", "10+", tag=0, fields=[
        F("NodeId", "int32", "10+", entity=BROKER_ID),
        F("Host", "string", "10+"),
        F("Port", "int32", "10+"),
        F("Rack", "string", "10+", nullable="10+"),
    ]),
])
