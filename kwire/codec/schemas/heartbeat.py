"""Heartbeat (api key 12): a classic group member tells its coordinator it is alive.

Versions (request / response):
- v0: GroupId, GenerationId, MemberId; the answer is an ErrorCode.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: adds GroupInstanceId (static membership).
- v4: first flexible version.
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, F, request, response

REQUEST = request(12, [
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("GenerationId", "int32", "0+"),
    F("MemberId", "string", "0+"),
    F("GroupInstanceId", "string", "3+", nullable="3+"),
])

RESPONSE = response(12, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("ErrorCode", "int16", "0+"),
])
