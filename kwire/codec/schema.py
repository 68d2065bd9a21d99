"""The schema language: Kafka message definitions as plain Python data.

A schema mirrors the facts of Kafka's JSON message definitions, nothing more:
- `F(name, type, versions, nullable=, tag=, tagged=, fields=)` is one field. `name` is exactly
  Kafka's ("HighWatermark"). `type` is Kafka's type string: bool, int8, int16, uint16, int32, uint32,
  int64, float64, string, bytes, records, uuid; "[]T" for an array of T; a struct type name
  ("ReplicaState") or "[]StructName" together with `fields=[...]` for a struct or an array of structs.
- Version ranges are Kafka's strings: "0+", "3-7", "12", or "none".
- `tag` makes the field a tagged field in `tagged` versions (by default: all of its versions).
- `entity=` says what a field holds, as Kafka's JSON schemas mark it with `entityType`: a topic name,
  a topic id, a group id, a broker id, a producer id or a transactional id (ENTITIES). Enrichment,
  the `--topic` filter and the analytics find topics and groups by these marks (kwire.codec.marks),
  never by field names or lists of apis.
- `default=` is the value Kafka states for the field when it is absent (a tagged field not sent, a
  field of a version that lacks it); NOT_STATED where Kafka states none (the type's zero then).
- `enum=` names the values of a field whose numbers stand for something (kwire.codec.enums):
  IsolationLevel 1 is READ_COMMITTED. Decoded bodies keep the numbers; views show the names.
- `role=` is what a field is to kwire beyond Kafka's marks (ROLES): a secret kept out of the output
  unless asked, or the name and value of a configuration entry.
- `request(api_key, fields)` / `response(api_key, fields)` wrap the top-level fields; the message's
  name, valid versions and flexible versions are kwire.kafka.apis's, stated there once.

The api modules (kwire.codec.schemas) are generated from Kafka's message definitions by
scripts/gen_schemas.py and carry Kafka's marks only (entity marks from `entityType`); kwire's own
marks (`enum=`, `role=`, topic ids) come from kwire.codec.overlay, applied by request()/response().

Schemas say nothing about how to decode; kwire.codec.compiler turns one (schema, version) into a
decoder once, and caches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, NamedTuple

from kwire.kafka.apis import APIS

# What a field may hold (Kafka's entityType values, plus topic ids, which Kafka leaves unmarked).
TOPIC_NAME = "topicName"
TOPIC_ID = "topicId"
GROUP_ID = "groupId"
BROKER_ID = "brokerId"
PRODUCER_ID = "producerId"
TRANSACTIONAL_ID = "transactionalId"
ENTITIES = frozenset({TOPIC_NAME, TOPIC_ID, GROUP_ID, BROKER_ID, PRODUCER_ID, TRANSACTIONAL_ID})

# What a field is to kwire (kwire.codec.overlay marks them): a secret (SASL bytes, token HMACs, SCRAM
# salts), and the name, the value and the broker's IsSensitive flag of a configuration entry (a value is a
# secret when its name is one Kafka treats as sensitive, kwire.codec.config_secrets.sensitive_config, or
# when the broker flagged it).
SECRET = "secret"
CONFIG_NAME = "configName"
CONFIG_VALUE = "configValue"
CONFIG_SENSITIVE = "configSensitive"
ROLES = frozenset({SECRET, CONFIG_NAME, CONFIG_VALUE, CONFIG_SENSITIVE})


class _NotStated:
    """The default of a field whose definition states none."""

    def __repr__(self) -> str:
        return "NOT_STATED"


NOT_STATED = _NotStated()

PRIMITIVES = frozenset(
    {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64",
     "string", "bytes", "records", "uuid"}
)


class Versions(NamedTuple):
    """An inclusive version range; hi None means open-ended; lo > hi means empty ("none")."""

    lo: int
    hi: int | None

    @classmethod
    def parse(cls, text: str) -> "Versions":
        text = text.strip()
        if text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), None)
        if "-" in text:
            lo, hi = text.split("-", 1)
            return cls(int(lo), int(hi))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:  # type: ignore[override]
        assert isinstance(version, int)
        return version >= self.lo and (self.hi is None or version <= self.hi)


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: str
    versions: Versions
    nullable: Versions
    tag: int | None
    tagged: Versions
    fields: tuple["Field", ...] | None
    entity: str | None = None  # one of ENTITIES: what the value (or each element) holds
    enum: Mapping[int, str] | None = None  # names of the values (kwire.codec.enums)
    default: object = NOT_STATED  # Kafka's stated default, NOT_STATED where it states none
    role: str | None = None  # one of ROLES: what the field is to kwire (kwire.codec.overlay)

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def is_struct(self) -> bool:
        return self.fields is not None

    def present_in(self, version: int) -> bool:
        return version in self.versions

    def nullable_in(self, version: int) -> bool:
        return version in self.nullable

    def tagged_in(self, version: int) -> bool:
        return self.tag is not None and version in self.tagged


def F(
    name: str,
    type: str,
    versions: str,
    *,
    nullable: str = "none",
    tag: int | None = None,
    tagged: str | None = None,
    fields: Iterable[Field] | None = None,
    entity: str | None = None,
    enum: Mapping[int, str] | None = None,
    default: object = NOT_STATED,
    role: str | None = None,
) -> Field:
    element = type[2:] if type.startswith("[]") else type
    if fields is None and element not in PRIMITIVES:
        raise ValueError(f"field {name}: type {type!r} is neither primitive nor given fields")
    if fields is not None and element in PRIMITIVES:
        raise ValueError(f"field {name}: primitive type {type!r} cannot have fields")
    if entity is not None and (entity not in ENTITIES or fields is not None):
        raise ValueError(f"field {name}: entity {entity!r} must be one of {sorted(ENTITIES)}, on a value")
    if enum is not None and element not in ("int8", "int16", "int32"):
        raise ValueError(f"field {name}: enum names need an integer type, not {type!r}")
    if role is not None and (role not in ROLES or fields is not None):
        raise ValueError(f"field {name}: role {role!r} must be one of {sorted(ROLES)}, on a value")
    tagged_versions = Versions.parse(tagged if tagged is not None else (versions if tag is not None else "none"))
    return Field(name, type, Versions.parse(versions), Versions.parse(nullable), tag, tagged_versions,
                 tuple(fields) if fields is not None else None, entity, enum, default, role)


@dataclass(frozen=True, slots=True)
class MessageSchema:
    api_key: int
    kind: str  # "request" or "response"
    name: str  # Kafka's message name, e.g. "FetchRequest"
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible


def message(api_key: int, kind: str, name: str, valid: str, flexible: str,
            fields: Iterable[Field]) -> MessageSchema:
    """A message with versions of its own: for data that is not an api's body (an embedded
    protocol's) and for tests. Api bodies use request() / response()."""
    return MessageSchema(api_key, kind, name, Versions.parse(valid), Versions.parse(flexible), tuple(fields))


def _message(api_key: int, kind: str, fields: Iterable[Field]) -> MessageSchema:
    """A message of api `api_key`, its name and versions as kwire.kafka.apis states them (Kafka gives a
    request and its response the same valid and flexible versions), with kwire's own marks laid over
    Kafka's (kwire.codec.overlay)."""
    from kwire.codec.overlay import apply  # the overlay names fields of these schemas

    spec = APIS[api_key]
    name = spec.name + kind.capitalize()
    flexible = Versions(1, 0) if spec.flexible_from is None else Versions(spec.flexible_from, None)
    return MessageSchema(api_key, kind, name, Versions(spec.min_version, spec.max_version), flexible,
                         apply(name, tuple(fields)))


def request(api_key: int, fields: Iterable[Field]) -> MessageSchema:
    return _message(api_key, "request", fields)


def response(api_key: int, fields: Iterable[Field]) -> MessageSchema:
    return _message(api_key, "response", fields)
