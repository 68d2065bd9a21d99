"""Metadata (api key 3): clients learn the brokers, the controller and each topic's partition leaders.

Versions 0-13; flexible from v9.
- v0: the original request: a list of topic names (empty for all topics).
- v1: a null Topics array asks for all topics; the response adds broker Rack, ControllerId, IsInternal.
- v2: the response adds ClusterId.
- v3: the response adds ThrottleTimeMs.
- v4: adds AllowAutoTopicCreation.
- v5: the response adds per-partition OfflineReplicas.
- v6: same as v5 (on quota violation the broker answers before throttling).
- v7: the response adds the partition LeaderEpoch.
- v8: adds the Include*AuthorizedOperations flags; the response carries authorized operations.
- v9: first flexible version.
- v10: adds TopicId to request and response topics; the request topic Name becomes nullable.
- v11: drops the cluster authorized operations (now in DescribeCluster, KIP-700).
- v12: topics may be requested by TopicId alone; the response topic Name becomes nullable.
- v13: the response adds a top-level ErrorCode (REBOOTSTRAP_REQUIRED, KIP-1102).
"""

from kwire.codec.schema import BROKER_ID, TOPIC_ID, TOPIC_NAME, F, request, response

REQUEST = request(3, [
    F("Topics", "[]MetadataRequestTopic", "0+", nullable="1+", fields=[
        F("TopicId", "uuid", "10+", entity=TOPIC_ID),
        F("Name", "string", "0+", nullable="10+", entity=TOPIC_NAME),
    ]),
    F("AllowAutoTopicCreation", "bool", "4+"),
    F("IncludeClusterAuthorizedOperations", "bool", "8-10"),
    F("IncludeTopicAuthorizedOperations", "bool", "8+"),
])

RESPONSE = response(3, [
    F("ThrottleTimeMs", "int32", "3+"),
    F("Brokers", "[]MetadataResponseBroker", "0+", fields=[
        F("NodeId", "int32", "0+", entity=BROKER_ID),
        F("Host", "string", "0+"),
        F("Port", "int32", "0+"),
        F("Rack", "string", "1+", nullable="1+"),
    ]),
    F("ClusterId", "string", "2+", nullable="2+"),
    F("ControllerId", "int32", "1+", entity=BROKER_ID),
    F("Topics", "[]MetadataResponseTopic", "0+", fields=[
        F("ErrorCode", "int16", "0+"),
        F("Name", "string", "0+", nullable="12+", entity=TOPIC_NAME),
        F("TopicId", "uuid", "10+", entity=TOPIC_ID),
        F("IsInternal", "bool", "1+"),
        F("Partitions", "[]MetadataResponsePartition", "0+", fields=[
            F("ErrorCode", "int16", "0+"),
            F("PartitionIndex", "int32", "0+"),
            F("LeaderId", "int32", "0+", entity=BROKER_ID),
            F("LeaderEpoch", "int32", "7+"),
            F("ReplicaNodes", "[]int32", "0+", entity=BROKER_ID),
            F("IsrNodes", "[]int32", "0+", entity=BROKER_ID),
            F("OfflineReplicas", "[]int32", "5+", entity=BROKER_ID),
        ]),
        F("TopicAuthorizedOperations", "int32", "8+"),
    ]),
    F("ClusterAuthorizedOperations", "int32", "8-10"),
    F("ErrorCode", "int16", "13+"),
])
