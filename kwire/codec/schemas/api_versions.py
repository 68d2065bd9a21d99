"""ApiVersions (api key 18): a client asks which api versions (and features) a broker supports.

Versions 0-4; flexible from v3. Two quirks live in kwire.kafka, not here: the response header is
always v0, and a broker that does not support the request's version answers with the v0 body.
- v0: the original request (empty); the response lists ErrorCode and ApiKeys.
- v1: same request; the response adds ThrottleTimeMs.
- v2: same as v1 (on quota violation the broker answers before throttling).
- v3: first flexible version: ClientSoftwareName/Version; the response adds the tagged
  SupportedFeatures, FinalizedFeaturesEpoch, FinalizedFeatures and ZkMigrationReady.
- v4: same fields; fixes KAFKA-17011 (SupportedFeatures.MinVersion may be 0).
"""

from kwire.codec.schema import F, request, response

REQUEST = request(18, [
    F("ClientSoftwareName", "string", "3+"),
    F("ClientSoftwareVersion", "string", "3+"),
])

RESPONSE = response(18, [
    F("ErrorCode", "int16", "0+"),
    F("ApiKeys", "[]ApiVersion", "0+", fields=[
        F("ApiKey", "int16", "0+"),
        F("MinVersion", "int16", "0+"),
        F("MaxVersion", "int16", "0+"),
    ]),
    F("ThrottleTimeMs", "int32", "1+"),
    F("SupportedFeatures", "[]SupportedFeatureKey", "3+", tag=0, fields=[
        F("Name", "string", "3+"),
        F("MinVersion", "int16", "3+"),
        F("MaxVersion", "int16", "3+"),
    ]),
    F("FinalizedFeaturesEpoch", "int64", "3+", tag=1),
    F("FinalizedFeatures", "[]FinalizedFeatureKey", "3+", tag=2, fields=[
        F("Name", "string", "3+"),
        F("MaxVersionLevel", "int16", "3+"),
        F("MinVersionLevel", "int16", "3+"),
    ]),
    F("ZkMigrationReady", "bool", "3+", tag=3),
])
