"""JoinGroup (api key 11): a member joins a classic consumer group and learns the group's leader.

Versions (request / response):
- v0: GroupId, SessionTimeoutMs, MemberId, ProtocolType, Protocols; the answer has the generation,
  the chosen protocol, the leader and (for the leader) the members' metadata.
- v1: adds RebalanceTimeoutMs.
- v2: same as v1; the response adds ThrottleTimeMs.
- v3: same as v2 (on quota violation brokers answer before throttling).
- v4: same as v3; the client must join a second time with the member id it was given.
- v5: adds GroupInstanceId (static membership, KIP-345), in the request and per member in the response.
- v6: first flexible version.
- v7: the response adds ProtocolType and makes ProtocolName nullable (KIP-559).
- v8: the request adds Reason (KIP-800).
- v9: the response adds SkipAssignment.
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, F, request, response

REQUEST = request(11, [
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("SessionTimeoutMs", "int32", "0+"),
    F("RebalanceTimeoutMs", "int32", "1+"),
    F("MemberId", "string", "0+"),
    F("GroupInstanceId", "string", "5+", nullable="5+"),
    F("ProtocolType", "string", "0+"),
    F("Protocols", "[]JoinGroupRequestProtocol", "0+", fields=[
        F("Name", "string", "0+"),
        F("Metadata", "bytes", "0+"),
    ]),
    F("Reason", "string", "8+", nullable="8+"),
])

RESPONSE = response(11, [
    F("ThrottleTimeMs", "int32", "2+"),
    F("ErrorCode", "int16", "0+"),
    F("GenerationId", "int32", "0+"),
    F("ProtocolType", "string", "7+", nullable="7+"),
    F("ProtocolName", "string", "0+", nullable="7+"),
    F("Leader", "string", "0+"),
    F("SkipAssignment", "bool", "9+"),
    F("MemberId", "string", "0+"),
    F("Members", "[]JoinGroupResponseMember", "0+", fields=[
        F("MemberId", "string", "0+"),
        F("GroupInstanceId", "string", "5+", nullable="5+"),
        F("Metadata", "bytes", "0+"),
    ]),
])
