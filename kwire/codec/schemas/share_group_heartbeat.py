"""ShareGroupHeartbeat (api key 76): joins, keeps alive and leaves a share group (KIP-932).

Versions (request / response), all flexible:
- v0: early access of KIP-932 in Kafka 4.0, removed in 4.1: GroupId, MemberId, MemberEpoch, RackId,
  SubscribedTopicNames; the answer has MemberId, MemberEpoch, HeartbeatIntervalMs, Assignment.
- v1: first GA version of KIP-932 (Kafka 4.1): the same fields; the consumer generates its member id.
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, TOPIC_ID, TOPIC_NAME, F, request, response

# Kafka's common struct TopicPartitions (response).
TOPIC_PARTITIONS = [
    F("TopicId", "uuid", "0+", entity=TOPIC_ID),
    F("Partitions", "[]int32", "0+"),
]

REQUEST = request(76, [
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("MemberId", "string", "0+"),
    F("MemberEpoch", "int32", "0+"),
    F("RackId", "string", "0+", nullable="0+"),
    F("SubscribedTopicNames", "[]string", "0+", nullable="0+", entity=TOPIC_NAME),
])

RESPONSE = response(76, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
    F("ErrorMessage", "string", "0+", nullable="0+"),
    F("MemberId", "string", "0+", nullable="0+"),
    F("MemberEpoch", "int32", "0+"),
    F("HeartbeatIntervalMs", "int32", "0+"),
    F("Assignment", "Assignment", "0+", nullable="0+", fields=[
        F("TopicPartitions", "[]TopicPartitions", "0+", fields=TOPIC_PARTITIONS),
    ]),
])
