"""Fetch (api key 1): consumers and follower replicas read record batches from partition leaders.

Versions 0-18; flexible from v12. Kafka 4.0 dropped v0-v3, which old clients still speak.
- v0: the original request; the response carries records per partition.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1; the requester must handle message format v1.
- v3: adds MaxBytes; partitions are processed in the order they appear in the request.
- v4: adds IsolationLevel; the response adds LastStableOffset and AbortedTransactions (message format v2).
- v5: adds LogStartOffset to the request and the response partition.
- v6: same as v5 (the response may carry KAFKA_STORAGE_ERROR).
- v7: incremental fetch sessions: SessionId, SessionEpoch, ForgottenTopicsData; response ErrorCode, SessionId.
- v8: same as v7 (on quota violation the broker answers before throttling).
- v9: adds CurrentLeaderEpoch (KIP-320).
- v10: same as v9; zstd-compressed data may be returned (KIP-110).
- v11: adds RackId; the response adds PreferredReadReplica (KIP-392).
- v12: first flexible version; LastFetchedEpoch, ClusterId; response DivergingEpoch, CurrentLeader, SnapshotId.
- v13: topic ids replace topic names (KIP-516).
- v14: same as v13; may answer OFFSET_MOVED_TO_TIERED_STORAGE (KIP-405).
- v15: ReplicaState (tagged) replaces ReplicaId (KIP-903).
- v16: same request (KIP-951); the response adds NodeEndpoints (tagged).
- v17: adds ReplicaDirectoryId (tagged, KIP-853); same response.
- v18: adds the follower's HighWatermark (tagged, KIP-1166); same response.
"""

from kwire.codec.enums import ISOLATION_LEVEL
from kwire.codec.schema import BROKER_ID, PRODUCER_ID, TOPIC_ID, TOPIC_NAME, F, request, response

REQUEST = request(1, [
    F("ClusterId", "string", "12+", nullable="12+", tag=0),
    F("ReplicaId", "int32", "0-14", entity=BROKER_ID),
    F("ReplicaState", "ReplicaState", "15+", tag=1, fields=[
        F("ReplicaId", "int32", "15+", entity=BROKER_ID),
        F("ReplicaEpoch", "int64", "15+"),
    ]),
    F("MaxWaitMs", "int32", "0+"),
    F("MinBytes", "int32", "0+"),
    F("MaxBytes", "int32", "3+"),
    F("IsolationLevel", "int8", "4+", enum=ISOLATION_LEVEL),
    F("SessionId", "int32", "7+"),
    F("SessionEpoch", "int32", "7+"),
    F("Topics", "[]FetchTopic", "0+", fields=[
        F("Topic", "string", "0-12", entity=TOPIC_NAME),
        F("TopicId", "uuid", "13+", entity=TOPIC_ID),
        F("Partitions", "[]FetchPartition", "0+", fields=[
            F("Partition", "int32", "0+"),
            F("CurrentLeaderEpoch", "int32", "9+"),
            F("FetchOffset", "int64", "0+"),
            F("LastFetchedEpoch", "int32", "12+"),
            F("LogStartOffset", "int64", "5+"),
            F("PartitionMaxBytes", "int32", "0+"),
            F("ReplicaDirectoryId", "uuid", "17+", tag=0),
            F("HighWatermark", "int64", "18+", tag=1),
        ]),
    ]),
    F("ForgottenTopicsData", "[]ForgottenTopic", "7+", fields=[
        F("Topic", "string", "7-12", entity=TOPIC_NAME),
        F("TopicId", "uuid", "13+", entity=TOPIC_ID),
        F("Partitions", "[]int32", "7+"),
    ]),
    F("RackId", "string", "11+"),
])

RESPONSE = response(1, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("ErrorCode", "int16", "7+"),
    F("SessionId", "int32", "7+"),
    F("Responses", "[]FetchableTopicResponse", "0+", fields=[
        F("Topic", "string", "0-12", entity=TOPIC_NAME),
        F("TopicId", "uuid", "13+", entity=TOPIC_ID),
        F("Partitions", "[]PartitionData", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("ErrorCode", "int16", "0+"),
            F("HighWatermark", "int64", "0+"),
            F("LastStableOffset", "int64", "4+"),
            F("LogStartOffset", "int64", "5+"),
            F("DivergingEpoch", "EpochEndOffset", "12+", tag=0, fields=[
                F("Epoch", "int32", "12+"),
                F("EndOffset", "int64", "12+"),
            ]),
            F("CurrentLeader", "LeaderIdAndEpoch", "12+", tag=1, fields=[
                F("LeaderId", "int32", "12+", entity=BROKER_ID),
                F("LeaderEpoch", "int32", "12+"),
            ]),
            F("SnapshotId", "SnapshotId", "12+", tag=2, fields=[
                F("EndOffset", "int64", "0+"),
                F("Epoch", "int32", "0+"),
            ]),
            F("AbortedTransactions", "[]AbortedTransaction", "4+", nullable="4+", fields=[
                F("ProducerId", "int64", "4+", entity=PRODUCER_ID),
                F("FirstOffset", "int64", "4+"),
            ]),
            F("PreferredReadReplica", "int32", "11+", entity=BROKER_ID),
            F("Records", "records", "0+", nullable="0+"),
        ]),
    ]),
    F("NodeEndpoints", "[]NodeEndpoint", "16+", tag=0, fields=[
        F("NodeId", "int32", "16+", entity=BROKER_ID),
        F("Host", "string", "16+"),
        F("Port", "int32", "16+"),
        F("Rack", "string", "16+", nullable="16+"),
    ]),
])
