"""ShareGroupDescribe (api key 77): state, members and assignments of share groups (KIP-932).

Versions (request / response), all flexible:
- v0: early access of KIP-932 in Kafka 4.0, removed in 4.1: GroupIds, IncludeAuthorizedOperations; the answer
  describes each group and its members' assignments.
- v1: first GA version of KIP-932 (Kafka 4.1), the same fields.
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, TOPIC_ID, TOPIC_NAME, F, request, response

# Kafka's common structs TopicPartitions and Assignment (response).
TOPIC_PARTITIONS = [
    F("TopicId", "uuid", "0+", entity=TOPIC_ID),
    F("TopicName", "string", "0+", entity=TOPIC_NAME),
    F("Partitions", "[]int32", "0+"),
]
ASSIGNMENT = [
    F("TopicPartitions", "[]TopicPartitions", "0+", fields=TOPIC_PARTITIONS),
]

REQUEST = request(77, [
    F("GroupIds", "[]string", "0+", entity=GROUP_ID),
    F("IncludeAuthorizedOperations", "bool", "0+"),
])

RESPONSE = response(77, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("Groups", "[]DescribedGroup", "0+", fields=[
        F("ErrorCode", "int16", "0+"),
        F("ErrorMessage", "string", "0+", nullable="0+"),
        F("GroupId", "string", "0+", entity=GROUP_ID),
        F("GroupState", "string", "0+"),
        F("GroupEpoch", "int32", "0+"),
        F("AssignmentEpoch", "int32", "0+"),
        F("AssignorName", "string", "0+"),
        F("Members", "[]Member", "0+", fields=[
            F("MemberId", "string", "0+"),
            F("RackId", "string", "0+", nullable="0+"),
            F("MemberEpoch", "int32", "0+"),
            F("ClientId", "string", "0+"),
            F("ClientHost", "string", "0+"),
            F("SubscribedTopicNames", "[]string", "0+", entity=TOPIC_NAME),
            F("Assignment", "Assignment", "0+", fields=ASSIGNMENT),
        ]),
        F("AuthorizedOperations", "int32", "0+"),
    ]),
])
