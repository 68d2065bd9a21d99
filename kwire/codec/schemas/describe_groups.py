"""DescribeGroups (api key 15): state, protocol and members of classic groups.

Versions (request / response):
- v0: Groups; the answer describes each group and its members.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: adds IncludeAuthorizedOperations; the response adds AuthorizedOperations per group.
- v4: the response adds GroupInstanceId per member.
- v5: first flexible version.
- v6: GROUP_ID_NOT_FOUND for an unknown group, with an ErrorMessage per group (KIP-1043).
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, F, request, response

REQUEST = request(15, [
    F("Groups", "[]string", "0+", entity=GROUP_ID),
    F("IncludeAuthorizedOperations", "bool", "3+"),
])

RESPONSE = response(15, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("Groups", "[]DescribedGroup", "0+", fields=[
        F("ErrorCode", "int16", "0+"),
        F("ErrorMessage", "string", "6+", nullable="6+"),
        F("GroupId", "string", "0+", entity=GROUP_ID),
        F("GroupState", "string", "0+"),
        F("ProtocolType", "string", "0+"),
        F("ProtocolData", "string", "0+"),
        F("Members", "[]DescribedGroupMember", "0+", fields=[
            F("MemberId", "string", "0+"),
            F("GroupInstanceId", "string", "4+", nullable="4+"),
            F("ClientId", "string", "0+"),
            F("ClientHost", "string", "0+"),
            F("MemberMetadata", "bytes", "0+"),
            F("MemberAssignment", "bytes", "0+"),
        ]),
        F("AuthorizedOperations", "int32", "3+"),
    ]),
])
