"""ListGroups (api key 16): the groups a broker coordinates.

Versions (request / response):
- v0: empty request; the answer lists GroupId and ProtocolType.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: first flexible version.
- v4: adds StatesFilter; the response adds GroupState (KIP-518).
- v5: adds TypesFilter; the response adds GroupType (KIP-848).
"""

from __future__ import annotations

from kwire.codec.schema import GROUP_ID, F, request, response

REQUEST = request(16, [
    F("StatesFilter", "[]string", "4+"),
    F("TypesFilter", "[]string", "5+"),
])

RESPONSE = response(16, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("ErrorCode", "int16", "0+"),
    F("Groups", "[]ListedGroup", "0+", fields=[
        F("GroupId", "string", "0+", entity=GROUP_ID),
        F("ProtocolType", "string", "0+"),
        F("GroupState", "string", "4+"),
        F("GroupType", "string", "5+"),
    ]),
])
