"""ConsumerGroupHeartbeat (api key 68): the heartbeat of the new consumer group protocol (KIP-848).

It joins, keeps alive and leaves a consumer group, and carries the member's subscription and assignment.

Versions (request / response), all flexible:
- v0: GroupId, MemberId, MemberEpoch, InstanceId, RackId, RebalanceTimeoutMs, SubscribedTopicNames,
  ServerAssignor, TopicPartitions; the answer has MemberId, MemberEpoch, HeartbeatIntervalMs, Assignment.
- v1: adds SubscribedTopicRegex (KIP-848); the consumer generates its own member id (KIP-1082); the
  response may answer INVALID_SUBSCRIPTION_REGEX.
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, TOPIC_ID, TOPIC_NAME, F, request, response

# Kafka's common struct TopicPartitions (response; the request defines the same shape inline).
TOPIC_PARTITIONS = [
    F("TopicId", "uuid", "0+", entity=TOPIC_ID),
    F("Partitions", "[]int32", "0+"),
]

REQUEST = request(68, [
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("MemberId", "string", "0+"),
    F("MemberEpoch", "int32", "0+"),
    F("InstanceId", "string", "0+", nullable="0+"),
    F("RackId", "string", "0+", nullable="0+"),
    F("RebalanceTimeoutMs", "int32", "0+"),
    F("SubscribedTopicNames", "[]string", "0+", nullable="0+", entity=TOPIC_NAME),
    F("SubscribedTopicRegex", "string", "1+", nullable="1+"),
    F("ServerAssignor", "string", "0+", nullable="0+"),
    F("TopicPartitions", "[]TopicPartitions", "0+", nullable="0+", fields=TOPIC_PARTITIONS),
])

RESPONSE = response(68, [
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
