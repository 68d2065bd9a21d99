"""FindCoordinator (api key 10): which broker coordinates a group, a transaction or a share group.

Versions (request / response):
- v0: one Key; the answer is one coordinator (ErrorCode, NodeId, Host, Port).
- v1: adds KeyType (group, transaction, ...); the response adds ThrottleTimeMs and ErrorMessage.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: first flexible version.
- v4: batching (KIP-699): CoordinatorKeys replace Key, the response lists Coordinators.
- v5: adds the TRANSACTION_ABORTABLE error code (KIP-890).
- v6: share-group coordinators (KIP-932).
"""

from __future__ import annotations

from kwire.codec.enums import COORDINATOR_TYPE
from kwire.codec.schema import BROKER_ID, F, request, response

REQUEST = request(10, [
    F("Key", "string", "0-3"),
    F("KeyType", "int8", "1+", enum=COORDINATOR_TYPE),
    F("CoordinatorKeys", "[]string", "4+"),
])

RESPONSE = response(10, [
    F("ThrottleTimeMs", "int32", "1+"),
    F("ErrorCode", "int16", "0-3"),
    F("ErrorMessage", "string", "1-3", nullable="1-3"),
    F("NodeId", "int32", "0-3", entity=BROKER_ID),
    F("Host", "string", "0-3"),
    F("Port", "int32", "0-3"),
    F("Coordinators", "[]Coordinator", "4+", fields=[
        F("Key", "string", "4+"),
        F("NodeId", "int32", "4+", entity=BROKER_ID),
        F("Host", "string", "4+"),
        F("Port", "int32", "4+"),
        F("ErrorCode", "int16", "4+"),
        F("ErrorMessage", "string", "4+", nullable="4+"),
    ]),
])
