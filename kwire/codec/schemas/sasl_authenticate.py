"""SaslAuthenticate (api key 36): one round of a SASL exchange, wrapped in a Kafka request (after SaslHandshake v1).

Versions (request / response):
- v0: AuthBytes; the answer is ErrorCode, ErrorMessage, AuthBytes.
- v1: same request; the response adds SessionLifetimeMs (KIP-368 re-authentication).
- v2: first flexible version.

Secret-bearing fields: AuthBytes in the request (client credentials: PLAIN password, SCRAM proof, OAuth
bearer token, Kerberos token) and AuthBytes in the response (server challenge / signature). Redact both.
"""

from __future__ import annotations

from kwire.codec.schema import F, request, response

REQUEST = request(36, [
    F("AuthBytes", "bytes", "0+"),
])

RESPONSE = response(36, [
    F("ErrorCode", "int16", "0+"),
    F("ErrorMessage", "string", "0+", nullable="0+"),
    F("AuthBytes", "bytes", "0+"),
    F("SessionLifetimeMs", "int64", "1+"),
])
