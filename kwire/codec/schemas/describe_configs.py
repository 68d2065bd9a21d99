"""DescribeConfigs (api key 32): the configuration of topics, brokers, broker loggers, groups, ...

Versions (request / response):
- v0: Resources (type, name, keys); the answer lists each config with Value, ReadOnly, IsDefault and
  IsSensitive. Removed in Kafka 4.0; kept here for older peers.
- v1: adds IncludeSynonyms; the response replaces IsDefault with ConfigSource and adds Synonyms.
- v2: same as v1 (on quota violation brokers answer before throttling).
- v3: adds IncludeDocumentation; the response adds ConfigType and Documentation.
- v4: first flexible version.

Secret-bearing fields: none on the wire: brokers send a null Value (and synonym Value) for configs marked
IsSensitive.
"""

from __future__ import annotations

from kwire.codec.enums import CONFIG_RESOURCE_TYPE, CONFIG_SOURCE, CONFIG_TYPE
from kwire.codec.schema import F, request, response

REQUEST = request(32, [
    F("Resources", "[]DescribeConfigsResource", "0+", fields=[
        F("ResourceType", "int8", "0+", enum=CONFIG_RESOURCE_TYPE),
        F("ResourceName", "string", "0+"),
        F("ConfigurationKeys", "[]string", "0+", nullable="0+"),
    ]),
    F("IncludeSynonyms", "bool", "1+"),
    F("IncludeDocumentation", "bool", "3+"),
])

RESPONSE = response(32, [
    F("ThrottleTimeMs", "int32", "0+"),
    F("Results", "[]DescribeConfigsResult", "0+", fields=[
        F("ErrorCode", "int16", "0+"),
        F("ErrorMessage", "string", "0+", nullable="0+"),
        F("ResourceType", "int8", "0+", enum=CONFIG_RESOURCE_TYPE),
        F("ResourceName", "string", "0+"),
        F("Configs", "[]DescribeConfigsResourceResult", "0+", fields=[
            F("Name", "string", "0+"),
            F("Value", "string", "0+", nullable="0+"),
            F("ReadOnly", "bool", "0+"),
            F("IsDefault", "bool", "0"),
            F("ConfigSource", "int8", "1+", enum=CONFIG_SOURCE),
            F("IsSensitive", "bool", "0+"),
            F("Synonyms", "[]DescribeConfigsSynonym", "1+", fields=[
                F("Name", "string", "1+"),
                F("Value", "string", "1+", nullable="0+"),
                F("Source", "int8", "1+", enum=CONFIG_SOURCE),
            ]),
            F("ConfigType", "int8", "3+", enum=CONFIG_TYPE),
            F("Documentation", "string", "3+", nullable="0+"),
        ]),
    ]),
])
