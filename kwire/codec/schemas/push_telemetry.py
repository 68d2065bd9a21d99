"""PushTelemetry (api key 72): a client pushes its metrics to the broker (KIP-714).

Versions (request / response), all flexible:
- v0: ClientInstanceId, SubscriptionId, Terminating, CompressionType, Metrics (OpenTelemetry MetricsData v1
  protobuf, compressed with CompressionType); the answer is ThrottleTimeMs and ErrorCode.

Secret-bearing fields: none. Metrics is client telemetry, not a credential: do not redact it.
"""

from __future__ import annotations

from kwire.codec.schema import F, request, response

REQUEST = request(72, [
    F("ClientInstanceId", "uuid", "0+"),
    F("SubscriptionId", "int32", "0+"),
    F("Terminating", "bool", "0+"),
    F("CompressionType", "int8", "0+"),
    F("Metrics", "bytes", "0+"),
])

RESPONSE = response(72, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
])
