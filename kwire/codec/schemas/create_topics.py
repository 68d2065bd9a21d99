"""CreateTopics (api key 19): create topics with partition counts, replication, assignments and configs.

Versions (request / response):
- v0: Topics (Name, NumPartitions, ReplicationFactor, Assignments, Configs), timeoutMs; the answer is
  Name and ErrorCode per topic. v0-v1 were removed in Kafka 4.0; kept here for older peers.
- v1: adds validateOnly; the response adds ErrorMessage per topic.
- v2: same request; the response adds ThrottleTimeMs.
- v3: same as v2 (on quota violation brokers answer before throttling).
- v4: partitions and replication factor may be left to broker defaults even without assignments (KIP-464).
- v5: first flexible version; the response returns NumPartitions, ReplicationFactor, Configs and the tagged
  TopicConfigErrorCode (KIP-525).
- v6: may answer THROTTLING_QUOTA_EXCEEDED (KIP-599).
- v7: the response adds the TopicId of each created topic.

Secret-bearing fields: none on the wire: brokers send a null Value for configs marked IsSensitive.
"""

from __future__ import annotations

from kwire.codec.enums import CONFIG_SOURCE
from kwire.codec.schema import BROKER_ID, TOPIC_ID, TOPIC_NAME, F, request, response

REQUEST = request(19, [
    F("Topics", "[]CreatableTopic", "0+", fields=[
        F("Name", "string", "0+", entity=TOPIC_NAME),
        F("NumPartitions", "int32", "0+"),
        F("ReplicationFactor", "int16", "0+"),
        F("Assignments", "[]CreatableReplicaAssignment", "0+", fields=[
            F("PartitionIndex", "int32", "0+"),
            F("BrokerIds", "[]int32", "0+", entity=BROKER_ID),
        ]),
        F("Configs", "[]CreatableTopicConfig", "0+", fields=[
            F("Name", "string", "0+"),
            F("Value", "string", "0+", nullable="0+"),
        ]),
    ]),
    F("timeoutMs", "int32", "0+"),
    F("validateOnly", "bool", "1+"),
])

RESPONSE = response(19, [
    F("ThrottleTimeMs", "int32", "2+"),
    F("Topics", "[]CreatableTopicResult", "0+", fields=[
        F("Name", "string", "0+", entity=TOPIC_NAME),
        F("TopicId", "uuid", "7+", entity=TOPIC_ID),
        F("ErrorCode", "int16", "0+"),
        F("ErrorMessage", "string", "1+", nullable="0+"),
        F("TopicConfigErrorCode", "int16", "5+", tag=0, tagged="5+"),
        F("NumPartitions", "int32", "5+"),
        F("ReplicationFactor", "int16", "5+"),
        F("Configs", "[]CreatableTopicConfigs", "5+", nullable="5+", fields=[
            F("Name", "string", "5+"),
            F("Value", "string", "5+", nullable="5+"),
            F("ReadOnly", "bool", "5+"),
            F("ConfigSource", "int8", "5+", enum=CONFIG_SOURCE),
            F("IsSensitive", "bool", "5+"),
        ]),
    ]),
])
