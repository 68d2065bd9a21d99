"""ShareAcknowledge (api key 79): share-group consumers acknowledge records outside a fetch (KIP-932).

Versions 0-2; flexible from v0.
- v0: early access in Kafka 4.0 (removed in 4.1).
- v1: the first stable version; same fields as v0.
- v2: adds IsRenewAck (renew acknowledgements, KIP-1222); the response adds AcquisitionLockTimeoutMs.
"""

from kwire.codec.enums import ACKNOWLEDGE_TYPE
from kwire.codec.schema import BROKER_ID, GROUP_ID, TOPIC_ID, F, request, response

REQUEST = request(79, [
    F("GroupId", "string", "0+", nullable="0+", entity=GROUP_ID),
    F("MemberId", "string", "0+", nullable="0+"),
    F("ShareSessionEpoch", "int32", "0+"),
    F("IsRenewAck", "bool", "2+"),
    F("Topics", "[]AcknowledgeTopic", "0+", fields=[
        F("TopicId", "uuid", "0+", entity=TOPIC_ID),
        F("Partitions", "[]AcknowledgePartition", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("AcknowledgementBatches", "[]AcknowledgementBatch", "0+", fields=[
                F("FirstOffset", "int64", "0+"),
                F("LastOffset", "int64", "0+"),
                F("AcknowledgeTypes", "[]int8", "0+", enum=ACKNOWLEDGE_TYPE),
            ]),
        ]),
    ]),
])

RESPONSE = response(79, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
    F("ErrorMessage", "string", "0+", nullable="0+"),
    F("AcquisitionLockTimeoutMs", "int32", "2+"),
    F("Responses", "[]ShareAcknowledgeTopicResponse", "0+", fields=[
        F("TopicId", "uuid", "0+", entity=TOPIC_ID),
        F("Partitions", "[]PartitionData", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("ErrorCode", "int16", "0+"),
            F("ErrorMessage", "string", "0+", nullable="0+"),
            F("CurrentLeader", "LeaderIdAndEpoch", "0+", fields=[
                F("LeaderId", "int32", "0+", entity=BROKER_ID),
                F("LeaderEpoch", "int32", "0+"),
            ]),
        ]),
    ]),
    F("NodeEndpoints", "[]NodeEndpoint", "0+", fields=[
        F("NodeId", "int32", "0+", entity=BROKER_ID),
        F("Host", "string", "0+"),
        F("Port", "int32", "0+"),
        F("Rack", "string", "0+", nullable="0+"),
    ]),
])
