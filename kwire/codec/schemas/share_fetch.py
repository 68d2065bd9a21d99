"""ShareFetch (api key 78): share-group consumers fetch and acknowledge records (KIP-932).

Versions 0-2; flexible from v0.
- v0: early access in Kafka 4.0 (removed in 4.1): per-partition PartitionMaxBytes, nullable Records.
- v1: the first stable version: MaxRecords and BatchSize replace PartitionMaxBytes; the response adds
  AcquisitionLockTimeoutMs and Records is no longer nullable.
- v2: adds ShareAcquireMode (KIP-1206) and IsRenewAck (renew acknowledgements, KIP-1222).
"""

from kwire.codec.enums import ACKNOWLEDGE_TYPE, SHARE_ACQUIRE_MODE
from kwire.codec.schema import BROKER_ID, GROUP_ID, TOPIC_ID, F, request, response

REQUEST = request(78, [
    F("GroupId", "string", "0+", nullable="0+", entity=GROUP_ID),
    F("MemberId", "string", "0+", nullable="0+"),
    F("ShareSessionEpoch", "int32", "0+"),
    F("MaxWaitMs", "int32", "0+"),
    F("MinBytes", "int32", "0+"),
    F("MaxBytes", "int32", "0+"),
    F("MaxRecords", "int32", "1+"),
    F("BatchSize", "int32", "1+"),
    F("ShareAcquireMode", "int8", "2+", enum=SHARE_ACQUIRE_MODE),
    F("IsRenewAck", "bool", "2+"),
    F("Topics", "[]FetchTopic", "0+", fields=[
        F("TopicId", "uuid", "0+", entity=TOPIC_ID),
        F("Partitions", "[]FetchPartition", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("PartitionMaxBytes", "int32", "0"),
            F("AcknowledgementBatches", "[]AcknowledgementBatch", "0+", fields=[
                F("FirstOffset", "int64", "0+"),
                F("LastOffset", "int64", "0+"),
                F("AcknowledgeTypes", "[]int8", "0+", enum=ACKNOWLEDGE_TYPE),
            ]),
        ]),
    ]),
    F("ForgottenTopicsData", "[]ForgottenTopic", "0+", fields=[
        F("TopicId", "uuid", "0+", entity=TOPIC_ID),
        F("Partitions", "[]int32", "0+"),
    ]),
])

RESPONSE = response(78, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
    F("ErrorMessage", "string", "0+", nullable="0+"),
    F("AcquisitionLockTimeoutMs", "int32", "1+"),
    F("Responses", "[]ShareFetchableTopicResponse", "0+", fields=[
        F("TopicId", "uuid", "0+", entity=TOPIC_ID),
        F("Partitions", "[]PartitionData", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("ErrorCode", "int16", "0+"),
            F("ErrorMessage", "string", "0+", nullable="0+"),
            F("AcknowledgeErrorCode", "int16", "0+"),
            F("AcknowledgeErrorMessage", "string", "0+", nullable="0+"),
            F("CurrentLeader", "LeaderIdAndEpoch", "0+", fields=[
                F("LeaderId", "int32", "0+", entity=BROKER_ID),
                F("LeaderEpoch", "int32", "0+"),
            ]),
            F("Records", "records", "0+", nullable="0"),
            F("AcquiredRecords", "[]AcquiredRecords", "0+", fields=[
                F("FirstOffset", "int64", "0+"),
                F("LastOffset", "int64", "0+"),
                F("DeliveryCount", "int16", "0+"),
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
