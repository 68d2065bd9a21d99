"""The Kafka error codes of a decoded body: the `error_codes` fact of every exchange (kwire.native.exchange_facts).

- `error_codes(body)`: every non-zero ErrorCode in a decoded body, in one recursive walk of its values;
- `response_error_codes(ex)`: the same list for an exchange's response, found where the response's schema puts its
  ErrorCode fields (`error_tree(api key, version)`: the paths, cached per api and version) instead of in every
  value of the body; the generic walk answers where the schema cannot (no schema or version, a body of another
  layout, more than one code found: their order is the body's).
"""

from __future__ import annotations

from kwire.codec.schemas import schema_for
from kwire.model import Exchange


def error_codes(node) -> list[int]:
    """Every non-zero ErrorCode in a decoded body, in one recursive walk (a hot spot of stats)."""
    found: list[int] = []
    if node:
        _collect_error_codes(node, found)
    return found


def response_error_codes(ex: Exchange) -> list[int]:
    """error_codes(ex.response), in the same order, found where the response's schema puts its
    ErrorCode fields (error_tree) instead of in every value of the body. The generic walk answers
    when the schema cannot: no schema or version, a body of another layout ("_layout",
    kwire.codec.version_refusal), or more than one code found (their order is the body's, and tagged
    fields come in wire order, not the schema's)."""
    body = ex.response
    if not body:
        return []
    tree = _ERROR_TREES.get((ex.api_key, ex.api_version), _UNSEEN)
    if tree is _UNSEEN:
        tree = error_tree(ex.api_key, ex.api_version)
    if tree is None or type(body) is not dict or "_layout" in body:
        return error_codes(body)
    found: list[int] = []
    _tree_codes(body, tree, found)
    if len(found) > 1:
        return error_codes(body)
    return found


_ERROR_TREES: dict[tuple, tuple | None] = {}
_UNSEEN: tuple = ("unseen",)  # a key not looked up yet (a tree may be ())


def error_tree(api_key: int | None, version: int | None) -> tuple | None:
    """The paths to the ErrorCode fields of an api's response at `version`, as (key, subtree) pairs
    (subtree None for an ErrorCode itself); None when kwire has no schema for it or the version is not
    one Kafka defined. Cached (bounded: versions come off the wire)."""
    key = (api_key, version)
    try:
        return _ERROR_TREES[key]
    except KeyError:
        pass
    schema = schema_for(api_key, "response") if api_key is not None and version is not None else None
    tree = _error_paths(schema.fields, version) if schema is not None and version in schema.valid else None
    if len(_ERROR_TREES) < 8192:
        _ERROR_TREES[key] = tree
    return tree


_LEAF = (("ErrorCode", None),)  # a struct whose only path is its own ErrorCode (a partition's, say)


def _error_paths(fields, version: int) -> tuple:
    out = []
    for f in fields:
        if not f.present_in(version):
            continue
        if f.fields is not None:
            sub = _error_paths(f.fields, version)
            if sub:
                out.append((f.name, _LEAF if sub == _LEAF else sub))
        elif f.name == "ErrorCode":
            out.append((f.name, None))
    return tuple(out)


def _tree_codes(node: dict, tree: tuple, out: list) -> int:
    """The codes at `tree`'s paths under `node`, appended to `out` (returns 0)."""
    for key, sub in tree:
        value = node.get(key)
        if sub is None:
            if value and type(value) is int:
                out.append(value)
        elif type(value) is list:
            if sub is _LEAF:  # the common last step, without a call per element
                for item in value:
                    if type(item) is dict:
                        code = item.get("ErrorCode")
                        if code and type(code) is int:
                            out.append(code)
            else:
                for item in value:
                    if type(item) is dict:
                        _tree_codes(item, sub, out)
        elif type(value) is dict:
            _tree_codes(value, sub, out)
    return 0


def _collect_error_codes(node: dict, out: list) -> None:
    code = node.get("ErrorCode")
    if code and type(code) is int:
        out.append(code)
    for value in node.values():
        t = type(value)
        if t is list:
            for item in value:
                ti = type(item)
                if ti is dict:
                    _collect_error_codes(item, out)
                elif ti is list:
                    _collect_error_codes({"": item}, out)
        elif t is dict:
            _collect_error_codes(value, out)
