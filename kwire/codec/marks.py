"""Where a decoded body holds what: the marked fields of a message version, as trees to walk.

Schemas mark what fields hold (`entity=`, `enum=`, kwire.codec.schema). This module turns the marks of
one (message, version) into a `Tree`: the path, through structs and arrays of structs, to every
field whose mark passes a test, pruned of everything else and cached. `walk(body, tree)` then visits
exactly those fields of a decoded body. Enrichment (topic names for topic ids), the `--topic` filter
and the analytics find topics, groups and producers this way, so a new api or version is covered as
soon as its schema is marked: no list of apis or field names anywhere. `carries_records(api_key)`
says, from the schemas too, which apis have record sets.

A Tree is a tuple of (key, field, subtree): subtree None for a marked field itself, else the tree of
the struct (or of each element of the array of structs) under `key`.
"""

from __future__ import annotations

from typing import Callable, Iterator

from kwire.codec.schema import TOPIC_ID, TOPIC_NAME, Field, MessageSchema
from kwire.codec.schemas import schema_for

Tree = tuple  # of (key, Field, Tree | None)
TOPICS = frozenset({TOPIC_NAME, TOPIC_ID})


def _tree(fields, version: int, test: Callable[[Field], bool]) -> Tree:
    out = []
    for f in fields:
        if not f.present_in(version):
            continue
        if f.fields is not None:
            sub = _tree(f.fields, version, test)
            if sub:
                out.append((f.name, f, sub))
        elif test(f):
            out.append((f.name, f, None))
    return tuple(out)


# Trees by (id(schema), version, what): schemas are module constants, and hashing a whole frozen schema
# on every lookup would cost more than the walk. Bounded: versions come off the wire (schemas check
# them, but a tree is only made for versions the schema defines).
_TREES: dict[tuple, Tree] = {}


def _cached(schema: MessageSchema, version: int, what, make: Callable[[], Tree]) -> Tree:
    key = (id(schema), version, what)
    tree = _TREES.get(key)
    if tree is None:
        tree = make()
        if len(_TREES) < 8192:
            _TREES[key] = tree
    return tree


def entity_tree(schema: MessageSchema, version: int, entities: frozenset[str]) -> Tree:
    """The fields of `schema` at `version` that hold one of `entities`."""
    return _cached(schema, version, entities,
                   lambda: _tree(schema.fields, version, lambda f: f.entity in entities))


def enum_tree(schema: MessageSchema, version: int) -> Tree:
    """The fields of `schema` at `version` whose values have names."""
    return _cached(schema, version, "enum", lambda: _tree(schema.fields, version, lambda f: f.enum is not None))


def pair_tree(schema: MessageSchema, version: int) -> Tree:
    """The structs that state a topic's name and its id side by side (a Metadata answer's topics)."""
    return _cached(schema, version, "pairs", lambda: _pairs(schema.fields, version))


def _pairs(fields, version: int) -> Tree:
    out = []
    present = [f for f in fields if f.present_in(version)]
    kinds = {f.entity for f in present if f.fields is None}
    if TOPIC_NAME in kinds and TOPIC_ID in kinds:
        out += [(f.name, f, None) for f in present if f.entity in TOPICS]
    for f in present:
        if f.fields is not None:
            sub = _pairs(f.fields, version)
            if sub:
                out.append((f.name, f, sub))
    return tuple(out)


def message_tree(api_key: int, kind: str, version: int | None, entities: frozenset[str]) -> Tree:
    """entity_tree of an api's request or response ("request"/"response"); () when kwire has no schema
    for it or the version is not one Kafka defined."""
    schema = schema_for(api_key, kind) if version is not None else None
    if schema is None or version not in schema.valid:
        return ()
    return entity_tree(schema, version, entities)


_RECORDS: dict[int, bool] = {}


def carries_records(api_key: int | None) -> bool:
    """Whether a request or response of this api has a records field in some version (Produce, Fetch,
    ShareFetch): the exchanges whose record sets `--records` decompresses. False without a schema."""
    known = _RECORDS.get(api_key)  # type: ignore[arg-type]
    if known is None:
        known = api_key is not None and any(
            _has_records(schema.fields) for schema in (schema_for(api_key, "request"), schema_for(api_key, "response"))
            if schema is not None)
        if len(_RECORDS) < 4096:
            _RECORDS[api_key] = known  # type: ignore[index]
    return known


def _has_records(fields) -> bool:
    return any(f.element_type == "records" or (f.fields is not None and _has_records(f.fields)) for f in fields)


def walk(body, tree: Tree) -> Iterator[tuple[dict, str, Field]]:
    """(struct, key, field) for every marked field of `tree` present in the decoded `body` (a dict);
    the value is struct[key] (a list for an array field)."""
    for key, f, sub in tree:
        value = body.get(key)
        if sub is None:
            if key in body:
                yield body, key, f
        elif type(value) is dict:
            yield from walk(value, sub)
        elif type(value) is list:
            for item in value:
                if type(item) is dict:
                    yield from walk(item, sub)


def values(body, tree: Tree) -> Iterator[object]:
    """Every value the marked fields hold (the elements of an array field, one by one)."""
    for struct, key, _ in walk(body, tree):
        value = struct[key]
        if type(value) is list:
            yield from value
        elif value is not None:
            yield value
