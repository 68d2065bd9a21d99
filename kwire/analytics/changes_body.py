"""A body as the change readers read it (kwire.analytics.changes_apis): `Body.of(exchange, kind)`.

Fields come through the schema's marks (kwire.codec.schema): enum-marked numbers as their names, secret
fields never read, a configuration value {"redacted": n_chars} when its name is sensitive
(kwire.codec.config_secrets.sensitive_config) or the broker flagged it (`role=CONFIG_SENSITIVE`). Arrays are
read an element at a time, each element named when it is reached, never the whole body at once:
`items(name)` gives the elements kept and then, of a body read in part past kwire's entries bound
(kwire.codec.partial), the ones it left out, decoded one by one; so a reader sees every element of a request
of any size in bounded memory. `unread` counts what the elements it gave held past the bound (the partitions
of one topic past it: read, not detailed).
"""

from __future__ import annotations

from kwire.codec.config_secrets import sensitive_config
from kwire.codec.partial import NOT_KEPT, not_kept
from kwire.codec.schema import CONFIG_NAME, CONFIG_SENSITIVE, CONFIG_VALUE, SECRET
from kwire.codec.schemas import schema_for
from kwire.model import Exchange


_FIELDS: dict[tuple, tuple] = {}  # (id of a message's fields, version) -> (the fields, {name: field} present)


class Body:
    __slots__ = ("raw", "fields", "version", "unread")

    def __init__(self, raw: dict, fields, version: int) -> None:
        self.raw = raw
        key = (id(fields), version)
        by_name = _FIELDS.get(key)
        if by_name is None:
            by_name = _FIELDS[key] = (fields, {f.name: f for f in fields if f.present_in(version)})
        self.fields = by_name[1]
        self.version = version
        self.unread = 0

    @classmethod
    def of(cls, ex: Exchange, kind: str) -> Body | None:
        """The exchange's request or response (`kind`), or None when it has no decoded one."""
        body = ex.request if kind == "request" else ex.response
        if body is None or ex.api_key is None or ex.api_version is None:
            return None
        schema = schema_for(ex.api_key, kind)
        return None if schema is None else cls(body, schema.fields, ex.api_version)

    def get(self, name: str, default=None):
        """A field's value, named (an array's kept elements only: items() and values() read them all)."""
        f = self.fields.get(name)
        if f is None or name not in self.raw or f.role == SECRET:
            return default
        return _value(f, self.raw[name], self.version)

    def null(self, name: str) -> bool:
        """Is field `name` null (or absent)?"""
        return self.raw.get(name) is None

    def cut(self, name: str) -> int:
        """How many elements of array `name` were left out (read in part)."""
        return int((self.raw.get(NOT_KEPT) or {}).get(name, 0))

    def items(self, name: str, cut: bool = True):
        """The elements of the array of structs `name`, named, one at a time (`cut`: with those left out)."""
        f = self.fields.get(name)
        if f is None or f.fields is None:
            return
        kept = self.raw.get(name) or ()
        if kept and type(kept[-1]) is dict:  # of a body read in part, only the last kept element may be in part
            self.unread += not_kept(kept[-1])
        plan = _plan(f.fields, self.version)
        for e in kept:
            if type(e) is dict:
                yield _named(e, plan, self.version)
        rest = (self.raw.get(NOT_KEPT) or {}).get(name) if cut else None
        if rest:
            for e in rest.elements():
                if type(e) is dict:
                    yield _named(e, plan, self.version)
            self.unread += rest.inside

    def values(self, name: str):
        """The elements of an array of values (strings, numbers), named, with those left out."""
        f = self.fields.get(name)
        if f is None or f.fields is not None:
            return
        rest = (self.raw.get(NOT_KEPT) or {}).get(name)
        for part in (self.raw.get(name) or (), rest.elements() if rest else ()):
            for v in part:
                yield f.enum.get(v, v) if f.enum is not None else v


def _value(f, value, version: int):
    if f.fields is not None:
        if type(value) is list:
            return [named(v, f.fields, version) if type(v) is dict else v for v in value]
        if type(value) is dict:
            return named(value, f.fields, version)
        return value
    if f.enum is not None:
        return [f.enum.get(v, v) for v in value] if type(value) is list else f.enum.get(value, value)
    return value


_PLANS: dict[tuple, tuple] = {}  # (id of a fields tuple, version) -> what named() does (_plan)


def _plan(fields, version: int) -> tuple:
    """What named() does to a struct of `fields` at `version`: the names it copies as they are, the fields it
    names (enums, structs), the configuration name, value and IsSensitive fields, whether it is the struct as it
    is."""
    key = (id(fields), version)
    plan = _PLANS.get(key)
    if plan is None:
        present = [f for f in fields if f.present_in(version)]
        kept = [f for f in present if f.role != SECRET]
        marked = tuple(f for f in kept if f.fields is not None or f.enum is not None)
        name_key = next((f.name for f in kept if f.role == CONFIG_NAME), None)
        value_key = next((f.name for f in kept if f.role == CONFIG_VALUE), None)
        flag_key = next((f.name for f in kept if f.role == CONFIG_SENSITIVE), None)
        as_is = not marked and len(kept) == len(present) and name_key is None and value_key is None
        plan = _PLANS[key] = (fields, tuple(f.name for f in kept if f.fields is None and f.enum is None), marked,
                              name_key, value_key, flag_key, as_is)
    return plan


def named(struct: dict, fields, version: int) -> dict:
    """`struct` with enum-marked numbers as their names, secrets left out and a sensitive configuration
    value redacted, by its schema fields at `version`."""
    return _named(struct, _plan(fields, version), version)


def _named(struct: dict, plan: tuple, version: int) -> dict:
    _, plain, marked, name_key, value_key, flag_key, as_is = plan
    if as_is:  # nothing to name, leave out or redact: the struct itself (kwire's own keys in it are not read)
        return struct
    out = {name: struct[name] for name in plain if name in struct}
    for f in marked:
        if f.name in struct:
            out[f.name] = _value(f, struct[f.name], version)
    if value_key is not None and type(out.get(value_key)) is str and (
            (flag_key is not None and out.get(flag_key) is True) or sensitive_config(out.get(name_key))):
        out[value_key] = {"redacted": len(out[value_key])}
    return out
