"""ConsumerGroupDescribe (api key 69): state, members and assignments of new-protocol consumer groups (KIP-848).

Versions (request / response), all flexible:
- v0: GroupIds, IncludeAuthorizedOperations; the answer describes each group, its members and their
  current and target assignments.
- v1: the response adds MemberType per member (-1 unknown, 0 classic, 1 consumer; KIP-1099).
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

REQUEST = request(69, [
    F("GroupIds", "[]string", "0+", entity=GROUP_ID),
    F("IncludeAuthorizedOperations", "bool", "0+"),
])

RESPONSE = response(69, [
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
            F("InstanceId", "string", "0+", nullable="0+"),
            F("RackId", "string", "0+", nullable="0+"),
            F("MemberEpoch", "int32", "0+"),
            F("ClientId", "string", "0+"),
            F("ClientHost", "string", "0+"),
            F("SubscribedTopicNames", "[]string", "0+", entity=TOPIC_NAME),
            F("SubscribedTopicRegex", "string", "0+", nullable="0+"),
            F("Assignment", "Assignment", "0+", fields=ASSIGNMENT),
            F("TargetAssignment", "Assignment", "0+", fields=ASSIGNMENT),
            F("MemberType", "int8", "1+"),
        ]),
        F("AuthorizedOperations", "int32", "0+"),
    ]),
])
