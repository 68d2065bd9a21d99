"""DeleteTopics (api key 20): delete topics by name or (v6+) by topic id.

Versions (request / response):
- v0: TopicNames, TimeoutMs; the answer is Name and ErrorCode per topic. Removed in Kafka 4.0; kept here
  for older peers.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: same fields; may answer TOPIC_DELETION_DISABLED.
- v4: first flexible version.
- v5: the response adds ErrorMessage; may answer THROTTLING_QUOTA_EXCEEDED (KIP-599).
- v6: Topics (nullable Name, TopicId) replace TopicNames; the response adds TopicId, Name becomes nullable.
"""

from __future__ import annotations

from kwire.codec.schema import TOPIC_ID, TOPIC_NAME, F, request, response

REQUEST = request(20, [
    F("Topics", "[]DeleteTopicState", "6+", fields=[
        F("Name", "string", "6+", nullable="6+", entity=TOPIC_NAME),
        F("TopicId", "uuid", "6+", entity=TOPIC_ID),
    ]),
    F("TopicNames", "[]string", "0-5", entity=TOPIC_NAME),
    F("TimeoutMs", "int32", "0+"),
])

RESPONSE = response(20, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("Responses", "[]DeletableTopicResult", "0+", fields=[
        F("Name", "string", "0+", nullable="6+", entity=TOPIC_NAME),
        F("TopicId", "uuid", "6+", entity=TOPIC_ID),
        F("ErrorCode", "int16", "0+"),
        F("ErrorMessage", "string", "5+", nullable="5+"),
    ]),
])
