"""A JSON document walked against its declaration in kwire.vocabulary (path -> DocKey, as `stats_keys()`,
`live_keys()` and `findings_log_keys()` give it): the declared path of every value, what no declaration matches,
types and nulls against the declared ones, units against names, and what a deprecated key must hold given its
replacement. tests/test_vocabulary.py (the stats document) and tests/live/test_vocabulary.py (the live document,
the findings log) read their outputs with it."""

from __future__ import annotations

import re

from kwire.vocabulary import DocKey, segments

JSON_TYPES = {dict: ("object", "map"), list: ("list",), str: ("string",), bool: ("bool",), int: ("int",),
              float: ("float",)}
# A name's suffix says its unit (docs/vocabulary.md, "Units"); Kafka's own instants keep Kafka's name.
SUFFIX_UNITS = (("_timestamp_ms", "epoch ms"), ("ts_ns", "epoch ns"), ("_ms", "ms"), ("_bytes", "bytes"))


def trie(keys: dict[str, DocKey]) -> dict:
    """The declared paths as nested dicts of their steps; a node's None holds the path that ends there."""
    root: dict = {}
    for path in keys:
        node = root
        for step in segments(path):
            node = node.setdefault(step, {})
        node[None] = path
    return root


def child(node: dict, key: str) -> tuple[dict | None, str | None]:
    """The declared node of a dict's `key` under `node`: its own, else the map's `<name>` (and that name)."""
    if key in node:
        return node[key], None
    wild = next((step for step in node if step is not None and step.startswith("<")), None)
    return (node[wild], wild) if wild else (None, None)


def walk(value, node: dict, where: str = "", bound: dict | None = None):
    """(declared path or None, concrete path, value, the map keys bound on the way, the dict holding it) of every
    value of a document, depth first; None where no declaration matches (and nothing below it is walked)."""
    bound = bound or {}
    if isinstance(value, dict):
        for key, item in value.items():
            below, wild = child(node, key)
            here = f"{where}.{key}" if where else key
            if below is None:
                yield None, here, item, bound, value
                continue
            inner = dict(bound, **{wild: key}) if wild else bound
            yield below[None], here, item, inner, value
            yield from walk(item, below, here, inner)
    elif isinstance(value, list):
        below = node.get("[]")
        for item in value:
            if below is None:
                yield None, where + "[]", item, bound, None
                break
            yield below[None], where + "[]", item, bound, None
            yield from walk(item, below, where + "[]", bound)


def type_problems(name: str, doc, keys: dict[str, DocKey], root: dict) -> set[str]:
    """What of `doc` (named `name` in the messages) no declaration matches, is null where not declared nullable,
    or is of a type its declaration does not allow."""
    problems = set()
    for path, here, value, _, _ in walk(doc, root):
        if path is None:
            problems.add(f"{here} ({name}): not declared in kwire/vocabulary.py")
            continue
        key = keys[path]
        if value is None:
            if not key.nullable:
                problems.add(f"{path}: null ({name}), declared not nullable")
        elif not set(JSON_TYPES[type(value)]) & set(key.type.split("|")):
            problems.add(f"{path}: a {type(value).__name__} ({name}), declared {key.type}")
    return problems


def shown(docs, root: dict) -> set[str]:
    """The declared paths some document of `docs` holds."""
    return {path for doc in docs for path, *_ in walk(doc, root) if path is not None}


def unit_problems(keys: dict[str, DocKey]) -> list[str]:
    """Keys whose unit their name contradicts: seconds that are not deprecated, a suffix of SUFFIX_UNITS with
    another unit, a unit of them said neither by the name nor by its object's, names ending `_size`, `_ns`, `_s`."""
    problems = []
    for path, key in keys.items():
        steps = [s for s in segments(path) if s != "[]" and not s.startswith("<")]
        name, parent = key.name, steps[-2] if len(steps) > 1 else ""
        if key.unit in ("s", "epoch s") and not key.deprecated:
            problems.append(f"{path}: in seconds, and not deprecated")
        if key.deprecated:
            continue  # the old names are the drift (kept for one release; their values are checked on the outputs)
        for suffix, unit in SUFFIX_UNITS:
            if name.endswith(suffix):
                if key.unit != unit:
                    problems.append(f"{path}: unit {key.unit}, its name says {unit}")
                break
        for suffix, unit in SUFFIX_UNITS:
            # the unit is said by the name (`bytes` itself too), or by the object's name it is in (latency_ms.p50)
            if key.unit == unit and not (name.endswith(suffix) or parent.endswith(suffix) or name == suffix[1:]):
                problems.append(f"{path}: unit {key.unit}, its name does not say so")
        if re.search(r"_(size|ns|s)$", name) and not name.endswith(("ts_ns", "_per_s")):
            problems.append(f"{path}: a name in another unit's spelling")
        if name.endswith("_per_s") and not key.unit.endswith("per s"):
            problems.append(f"{path}: a rate whose unit is not per s")
    return problems


def parent(path: str) -> str:
    return path[:-2] if path.endswith("[]") else path.rsplit(".", 1)[0] if "." in path else ""


def misplaced(keys: dict[str, DocKey]) -> list[str]:
    """Deprecated keys whose replacement is not declared, is deprecated itself, or sits elsewhere than beside them
    (or than beside the deprecated object or list they are in)."""
    problems = []
    for path, key in keys.items():
        if not key.deprecated:
            continue
        new = keys.get(key.deprecated)
        if new is None or new.deprecated:
            problems.append(f"{path}: its replacement {key.deprecated} is not a declared key of today")
        elif parent(key.deprecated) != parent(path) and not keys[parent(path)].deprecated:
            problems.append(f"{path}: not beside its replacement {key.deprecated}")
    return problems


def beside(path: str, keys: dict[str, DocKey]) -> bool:
    """A deprecated key beside its replacement (not a key or the items inside a deprecated object or list)."""
    up = parent(path)
    return bool(keys[path].deprecated) and not (up and keys[up].deprecated)


def old_value(old_unit: str, new_unit: str, new):
    """What a deprecated key in `old_unit` holds, from its replacement's value `new` in `new_unit`."""
    if new is None or old_unit == new_unit:
        return new
    if isinstance(new, list):
        return [old_value(old_unit, new_unit, v) for v in new]
    scale = {("epoch s", "epoch ns"): 1e9, ("s", "ms"): 1e3}[(old_unit, new_unit)]
    return new / scale


def close(old, expected, unit: str) -> bool:
    if isinstance(old, list):
        return isinstance(expected, list) and len(old) == len(expected) and all(
            close(a, b, unit) for a, b in zip(old, expected))
    if old is None or expected is None or type(old) is not float and type(expected) is not float:
        return old == expected or (type(old) is int and old == int(expected // 1))
    # epoch seconds to the µs (or finer), seconds to the ms
    return abs(old - expected) <= (1e-6 if unit == "epoch s" else 5e-4 + 1e-9)


def deprecated_checked(name: str, doc, keys: dict[str, DocKey], root: dict) -> set[str]:
    """The deprecated keys beside their replacement `doc` holds, each asserted to hold its replacement's value in
    the old unit."""
    checked = set()
    for path, here, value, _, holder in walk(doc, root):
        if path is None or not beside(path, keys):
            continue
        key, new = keys[path], keys[keys[path].deprecated]
        expected = old_value(key.unit, new.unit, holder[key.deprecated.rsplit(".", 1)[-1]])
        assert close(value, expected, key.unit), (name, here, value, expected)
        checked.add(path)
    return checked
