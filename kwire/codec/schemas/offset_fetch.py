"""OffsetFetch (api key 9): consumers read the offsets their group committed.

Versions 0-10; flexible from v6. Two shapes: one group with Topics up to v7, many Groups from v8.
- v0: reads offsets from ZooKeeper.
- v1: reads offsets from the internal __consumer_offsets topic.
- v2: a null Topics array asks for every topic; the response adds a top-level ErrorCode.
- v3: same request; the response adds ThrottleTimeMs.
- v4: same as v3 (on quota violation the broker answers before throttling).
- v5: same request; the response adds CommittedLeaderEpoch.
- v6: first flexible version.
- v7: adds RequireStable; the response may answer UNSTABLE_OFFSET_COMMIT per partition.
- v8: fetches offsets for several groups at once (Groups replaces GroupId/Topics).
- v9: adds MemberId and MemberEpoch for the new consumer group protocol (KIP-848).
- v10: topic ids replace topic names in Groups (KIP-848).
"""

from kwire.codec.schema import GROUP_ID, TOPIC_ID, TOPIC_NAME, F, request, response

REQUEST = request(9, [
    F("GroupId", "string", "0-7", entity=GROUP_ID),
    F("Topics", "[]OffsetFetchRequestTopic", "0-7", nullable="2-7", fields=[
        F("Name", "string", "0-7", entity=TOPIC_NAME),
        F("PartitionIndexes", "[]int32", "0-7"),
    ]),
    F("Groups", "[]OffsetFetchRequestGroup", "8+", fields=[
        F("GroupId", "string", "8+", entity=GROUP_ID),
        F("MemberId", "string", "9+", nullable="9+"),
        F("MemberEpoch", "int32", "9+"),
        F("Topics", "[]OffsetFetchRequestTopics", "8+", nullable="8+", fields=[
            F("Name", "string", "8-9", entity=TOPIC_NAME),
            F("TopicId", "uuid", "10+", entity=TOPIC_ID),
            F("PartitionIndexes", "[]int32", "8+"),
        ]),
    ]),
    F("RequireStable", "bool", "7+"),
])

RESPONSE = response(9, [
    F("ThrottleTimeMs", "int32", "3+"),
    F("Topics", "[]OffsetFetchResponseTopic", "0-7", fields=[
        F("Name", "string", "0-7", entity=TOPIC_NAME),
        F("Partitions", "[]OffsetFetchResponsePartition", "0-7", fields=[
            F("PartitionIndex", "int32", "0-7"),
            F("CommittedOffset", "int64", "0-7"),
            F("CommittedLeaderEpoch", "int32", "5-7"),
            F("Metadata", "string", "0-7", nullable="0-7"),
            F("ErrorCode", "int16", "0-7"),
        ]),
    ]),
    F("ErrorCode", "int16", "2-7"),
    F("Groups", "[]OffsetFetchResponseGroup", "8+", fields=[
        F("GroupId", "string", "8+", entity=GROUP_ID),
        F("Topics", "[]OffsetFetchResponseTopics", "8+", fields=[
            F("Name", "string", "8-9", entity=TOPIC_NAME),
            F("TopicId", "uuid", "10+", entity=TOPIC_ID),
            F("Partitions", "[]OffsetFetchResponsePartitions", "8+", fields=[
                F("PartitionIndex", "int32", "8+"),
                F("CommittedOffset", "int64", "8+"),
                F("CommittedLeaderEpoch", "int32", "8+"),
                F("Metadata", "string", "8+", nullable="8+"),
                F("ErrorCode", "int16", "8+"),
            ]),
        ]),
        F("ErrorCode", "int16", "8+"),
    ]),
])
