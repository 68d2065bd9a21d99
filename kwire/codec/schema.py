"""The schema language: Kafka message definitions as plain Python data.

A schema mirrors the facts of Kafka's JSON message definitions, nothing more:
- `F(name, type, versions, nullable=, tag=, tagged=, fields=)` is one field. `name` is exactly
  Kafka's ("HighWatermark"). `type` is Kafka's type string: bool, int8, int16, uint16, int32, uint32,
  int64, float64, string, bytes, records, uuid; "[]T" for an array of T; a struct type name
  ("ReplicaState") or "[]StructName" together with `fields=[...]` for a struct or an array of structs.
- Version ranges are Kafka's strings: "0+", "3-7", "12", or "none".
- `tag` makes the field a tagged field in `tagged` versions (by default: all of its versions).
- `request(...)` / `response(...)` wrap the top-level fields with the api key, the valid versions and
  the flexible versions.

Schemas say nothing about how to decode; kwire.codec.compiler turns one (schema, version) into a
decoder once, and caches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, NamedTuple

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
) -> Field:
    element = type[2:] if type.startswith("[]") else type
    if fields is None and element not in PRIMITIVES:
        raise ValueError(f"field {name}: type {type!r} is neither primitive nor given fields")
    if fields is not None and element in PRIMITIVES:
        raise ValueError(f"field {name}: primitive type {type!r} cannot have fields")
    tagged_versions = Versions.parse(tagged if tagged is not None else (versions if tag is not None else "none"))
    return Field(name, type, Versions.parse(versions), Versions.parse(nullable), tag, tagged_versions,
                 tuple(fields) if fields is not None else None)


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


def request(api_key: int, name: str, valid: str, flexible: str, fields: Iterable[Field]) -> MessageSchema:
    return MessageSchema(api_key, "request", name, Versions.parse(valid), Versions.parse(flexible), tuple(fields))


def response(api_key: int, name: str, valid: str, flexible: str, fields: Iterable[Field]) -> MessageSchema:
    return MessageSchema(api_key, "response", name, Versions.parse(valid), Versions.parse(flexible), tuple(fields))
