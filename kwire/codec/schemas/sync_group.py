"""SyncGroup (api key 14): the leader hands out assignments; every member receives its own.

Versions (request / response):
- v0: GroupId, GenerationId, MemberId, Assignments; the answer is an ErrorCode and the Assignment.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: adds GroupInstanceId (static membership).
- v4: first flexible version.
- v5: adds ProtocolType and ProtocolName in both directions (KIP-559).
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, F, request, response

REQUEST = request(14, [
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("GenerationId", "int32", "0+"),
    F("MemberId", "string", "0+"),
    F("GroupInstanceId", "string", "3+", nullable="3+"),
    F("ProtocolType", "string", "5+", nullable="5+"),
    F("ProtocolName", "string", "5+", nullable="5+"),
    F("Assignments", "[]SyncGroupRequestAssignment", "0+", fields=[
        F("MemberId", "string", "0+"),
        F("Assignment", "bytes", "0+"),
    ]),
])

RESPONSE = response(14, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("ErrorCode", "int16", "0+"),
    F("ProtocolType", "string", "5+", nullable="5+"),
    F("ProtocolName", "string", "5+", nullable="5+"),
    F("Assignment", "bytes", "0+"),
])
