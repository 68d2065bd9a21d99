"""OffsetForLeaderEpoch (api key 23): the end offset of a leader epoch, for log truncation and consumer fencing.

Versions (request / response):
- v0: Topics -> Partitions (Partition, LeaderEpoch); the answer has ErrorCode, Partition, EndOffset.
  Removed in Kafka 4.0 with v1; kept here for older peers.
- v1: same request; the response adds LeaderEpoch.
- v2: adds CurrentLeaderEpoch to fence stale metadata; the response adds ThrottleTimeMs.
- v3: adds ReplicaId (default -2, a "debug" consumer); the response is the same as v2.
- v4: first flexible version.
"""

from __future__ import annotations

from kwire.codec.schema import BROKER_ID, TOPIC_NAME, F, request, response

REQUEST = request(23, [
    F("ReplicaId", "int32", "3+", entity=BROKER_ID),
    F("Topics", "[]OffsetForLeaderTopic", "0+", fields=[
        F("Topic", "string", "0+", entity=TOPIC_NAME),
        F("Partitions", "[]OffsetForLeaderPartition", "0+", fields=[
            F("Partition", "int32", "0+"),
            F("CurrentLeaderEpoch", "int32", "2+"),
            F("LeaderEpoch", "int32", "0+"),
        ]),
    ]),
])

RESPONSE = response(23, [
    F("ThrottleTimeMs", "int32", "2+"),
    F("Topics", "[]OffsetForLeaderTopicResult", "0+", fields=[
        F("Topic", "string", "0+", entity=TOPIC_NAME),
        F("Partitions", "[]EpochEndOffset", "0+", fields=[
            F("ErrorCode", "int16", "0+"),
            F("Partition", "int32", "0+"),
            F("LeaderEpoch", "int32", "1+"),
            F("EndOffset", "int64", "0+"),
        ]),
    ]),
])
