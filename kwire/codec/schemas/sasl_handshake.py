"""SaslHandshake (api key 17): the client names its SASL mechanism; the broker lists the ones it enables.

Never flexible: the version cannot be bumped because clients up to 2.4 negotiate it wrongly (KAFKA-9577).

Versions (request / response):
- v0: Mechanism; the answer is ErrorCode and Mechanisms. The SASL tokens that follow travel as raw
  length-prefixed frames, not as Kafka requests.
- v1: same fields; the SASL tokens that follow travel in SaslAuthenticate requests.

Secret-bearing fields: none (mechanism names only).
"""

from __future__ import annotations

from kwire.codec.schema import F, request, response

REQUEST = request(17, [
    F("Mechanism", "string", "0+"),
])

RESPONSE = response(17, [
    F("ErrorCode", "int16", "0+"),
    F("Mechanisms", "[]string", "0+"),
])
