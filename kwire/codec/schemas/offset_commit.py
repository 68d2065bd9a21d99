"""OffsetCommit (api key 8): consumers store their group's consumed offsets with the coordinator.

Versions 0-10; flexible from v8. Kafka 4.0 dropped v0-v1, which old clients still speak.
- v0: the original request: GroupId and per-partition offsets with metadata.
- v1: adds group membership (GenerationIdOrMemberEpoch, MemberId) and a per-partition CommitTimestamp.
- v2: adds RetentionTimeMs and removes CommitTimestamp.
- v3: same request; the response adds ThrottleTimeMs.
- v4: same as v3 (on quota violation the broker answers before throttling).
- v5: removes RetentionTimeMs (retention is a broker setting).
- v6: adds CommittedLeaderEpoch for fencing.
- v7: adds GroupInstanceId (static membership).
- v8: first flexible version.
- v9: usable with the new consumer group protocol (KIP-848); same fields.
- v10: topic ids replace topic names (KIP-848).
"""

from kwire.codec.schema import GROUP_ID, TOPIC_ID, TOPIC_NAME, F, request, response

REQUEST = request(8, [
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("GenerationIdOrMemberEpoch", "int32", "1+"),
    F("MemberId", "string", "1+"),
    F("GroupInstanceId", "string", "7+", nullable="7+"),
    F("RetentionTimeMs", "int64", "2-4"),
    F("Topics", "[]OffsetCommitRequestTopic", "0+", fields=[
        F("Name", "string", "0-9", entity=TOPIC_NAME),
        F("TopicId", "uuid", "10+", entity=TOPIC_ID),
        F("Partitions", "[]OffsetCommitRequestPartition", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("CommittedOffset", "int64", "0+"),
            F("CommittedLeaderEpoch", "int32", "6+"),
            F("CommitTimestamp", "int64", "1"),
            F("CommittedMetadata", "string", "0+", nullable="0+"),
        ]),
    ]),
])

RESPONSE = response(8, [
    F("ThrottleTimeMs", "int32", "3+"),
    F("Topics", "[]OffsetCommitResponseTopic", "0+", fields=[
        F("Name", "string", "0-9", entity=TOPIC_NAME),
        F("TopicId", "uuid", "10+", entity=TOPIC_ID),
        F("Partitions", "[]OffsetCommitResponsePartition", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("ErrorCode", "int16", "0+"),
        ]),
    ]),
])
