"""ListOffsets (api key 2): clients look up offsets by timestamp (earliest, latest, by time, ...).

Versions 0-11; flexible from v6. Kafka 4.0 dropped v0, which old clients still speak.
- v0: MaxNumOffsets per partition; the response returns an array of offsets (OldStyleOffsets).
- v1: removes MaxNumOffsets; the response returns one Offset with its Timestamp.
- v2: adds IsolationLevel for transactional reads; the response adds ThrottleTimeMs.
- v3: same as v2 (on quota violation the broker answers before throttling).
- v4: adds CurrentLeaderEpoch for fencing; the response adds LeaderEpoch.
- v5: same as v4; the response may answer OFFSET_NOT_AVAILABLE.
- v6: first flexible version.
- v7: listing by max timestamp (KIP-734).
- v8: listing by local log start offset (KIP-405).
- v9: listing by last tiered offset (KIP-1005).
- v10: adds TimeoutMs for asynchronous remote lookups (KIP-1075).
- v11: listing by earliest pending upload offset (KIP-1023); same fields.
"""

from kwire.codec.enums import ISOLATION_LEVEL
from kwire.codec.schema import BROKER_ID, TOPIC_NAME, F, request, response

REQUEST = request(2, [
    F("ReplicaId", "int32", "0+", entity=BROKER_ID),
    F("IsolationLevel", "int8", "2+", enum=ISOLATION_LEVEL),
    F("Topics", "[]ListOffsetsTopic", "0+", fields=[
        F("Name", "string", "0+", entity=TOPIC_NAME),
        F("Partitions", "[]ListOffsetsPartition", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("CurrentLeaderEpoch", "int32", "4+"),
            F("Timestamp", "int64", "0+"),
            F("MaxNumOffsets", "int32", "0"),
        ]),
    ]),
    F("TimeoutMs", "int32", "10+"),
])

RESPONSE = response(2, [
    F("ThrottleTimeMs", "int32", "2+"),
    F("Topics", "[]ListOffsetsTopicResponse", "0+", fields=[
        F("Name", "string", "0+", entity=TOPIC_NAME),
        F("Partitions", "[]ListOffsetsPartitionResponse", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("ErrorCode", "int16", "0+"),
            F("OldStyleOffsets", "[]int64", "0"),
            F("Timestamp", "int64", "1+"),
            F("Offset", "int64", "1+"),
            F("LeaderEpoch", "int32", "4+"),
        ]),
    ]),
])
