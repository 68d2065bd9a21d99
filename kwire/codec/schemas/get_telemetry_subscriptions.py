"""GetTelemetrySubscriptions (api key 71): a client asks which metrics the broker wants pushed (KIP-714).

Versions (request / response), all flexible:
- v0: ClientInstanceId (zero on the first request); the answer has the assigned ClientInstanceId,
  SubscriptionId, AcceptedCompressionTypes, PushIntervalMs, TelemetryMaxBytes, DeltaTemporality and
  RequestedMetrics.
"""

from __future__ import annotations

from kwire.codec.schema import F, request, response

REQUEST = request(71, [
    F("ClientInstanceId", "uuid", "0+"),
])

RESPONSE = response(71, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
    F("ClientInstanceId", "uuid", "0+"),
    F("SubscriptionId", "int32", "0+"),
    F("AcceptedCompressionTypes", "[]int8", "0+"),
    F("PushIntervalMs", "int32", "0+"),
    F("TelemetryMaxBytes", "int32", "0+"),
    F("DeltaTemporality", "bool", "0+"),
    F("RequestedMetrics", "[]string", "0+"),
])
