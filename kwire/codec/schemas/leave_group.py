"""LeaveGroup (api key 13): members leave a classic consumer group.

Versions (request / response):
- v0: GroupId and one MemberId; the answer is an ErrorCode.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: batch mode: Members (MemberId + GroupInstanceId) replace MemberId; the response lists Members.
- v4: first flexible version.
- v5: adds a Reason per member (KIP-800); the response is the same as v4.
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, F, request, response

REQUEST = request(13, [
    F("GroupId", "string", "0+", entity=GROUP_ID),
    F("MemberId", "string", "0-2"),
    F("Members", "[]MemberIdentity", "3+", fields=[
        F("MemberId", "string", "3+"),
        F("GroupInstanceId", "string", "3+", nullable="3+"),
        F("Reason", "string", "5+", nullable="5+"),
    ]),
])

RESPONSE = response(13, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("ErrorCode", "int16", "0+"),
    F("Members", "[]MemberResponse", "3+", fields=[
        F("MemberId", "string", "3+"),
        F("GroupInstanceId", "string", "3+", nullable="3+"),
        F("ErrorCode", "int16", "3+"),
    ]),
])
