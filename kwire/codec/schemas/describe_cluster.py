"""DescribeCluster (api key 60): cluster id, controller and brokers (or controllers), for admin clients.

Versions (request / response), all flexible:
- v0: IncludeClusterAuthorizedOperations; the answer has ClusterId, ControllerId, Brokers and
  ClusterAuthorizedOperations.
- v1: adds EndpointType (1 brokers, 2 controllers, KIP-919), echoed in the response, which may now answer
  MISMATCHED_ENDPOINT_TYPE or UNSUPPORTED_ENDPOINT_TYPE.
- v2: adds IncludeFencedBrokers; the response adds IsFenced per broker (KIP-1073).
"""

from __future__ import annotations

from kwire.codec.enums import ENDPOINT_TYPE
from kwire.codec.schema import BROKER_ID, F, request, response

REQUEST = request(60, [
    F("IncludeClusterAuthorizedOperations", "bool", "0+"),
    F("EndpointType", "int8", "1+", enum=ENDPOINT_TYPE),
    F("IncludeFencedBrokers", "bool", "2+"),
])

RESPONSE = response(60, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("ErrorCode", "int16", "0+"),
    F("ErrorMessage", "string", "0+", nullable="0+"),
    F("EndpointType", "int8", "1+", enum=ENDPOINT_TYPE),
    F("ClusterId", "string", "0+"),
    F("ControllerId", "int32", "0+", entity=BROKER_ID),
    F("Brokers", "[]DescribeClusterBroker", "0+", fields=[
        F("BrokerId", "int32", "0+", entity=BROKER_ID),
        F("Host", "string", "0+"),
        F("Port", "int32", "0+"),
        F("Rack", "string", "0+", nullable="0+"),
        F("IsFenced", "bool", "2+"),
    ]),
    F("ClusterAuthorizedOperations", "int32", "0+"),
])
