"""The truth file of an admin recording: each operation an admin client ran, as the client reported it.

One JSON object a line (CAPTURE.truth.jsonl), appended by every process of a recording:
    {"ts": wall-clock seconds when the call returned, "started": when it was made, "client": ...,
     "operation": ..., "arguments": {...}, "result": ...}   or   ..., "error": "..."}
The result is what the client library returned (futures' results, return values), turned into JSON
by `jsonable`: objects become their public attributes, enums their names, bytes their hex. It is
never derived from kwire's output. Used by scripts/admin_*.py; the node script writes the same form.
"""

from __future__ import annotations

import enum
import json
import os
import time


def jsonable(value, depth: int = 0):
    """A JSON-ready copy of what a client library returned."""
    if depth > 12:
        return repr(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    if isinstance(value, dict):
        return {_key(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [jsonable(v, depth + 1) for v in value]
        return sorted(items, key=json.dumps) if isinstance(value, (set, frozenset)) else items
    attrs = _public_attrs(value)
    if attrs:
        return {"type": type(value).__name__, **{k: jsonable(v, depth + 1) for k, v in attrs.items()}}
    return str(value)


def _key(key) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, enum.Enum):
        return key.name
    return str(key)


def _public_attrs(value) -> dict:
    names = list(getattr(value, "__dict__", {}))
    for cls in type(value).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if isinstance(n, str)]
    if hasattr(value, "_asdict"):
        return dict(value._asdict())
    out = {}
    for name in names:
        if name.startswith("_") or name in out:
            continue
        attr = getattr(value, name, None)
        if not callable(attr):
            out[name] = attr
    return out


class AdminTruth:
    """Appends one line per operation to the truth file (O_APPEND: one write a line)."""

    def __init__(self, path: str, client: str):
        self.client = client
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.failed = 0
        self.done = 0

    def write(self, record: dict) -> None:
        os.write(self.fd, (json.dumps(record, sort_keys=True) + "\n").encode())

    def op(self, operation: str, arguments: dict, call):
        """Run `call()`, record its result or error, return the result (None on error)."""
        started = time.time()
        record = {"started": round(started, 6), "client": self.client, "operation": operation,
                  "arguments": jsonable(arguments)}
        try:
            result = call()
        except Exception as exc:  # noqa: BLE001 - an operation's failure is truth too
            record.update(ts=round(time.time(), 6), error=f"{type(exc).__name__}: {exc}")
            self.failed += 1
            self.write(record)
            return None
        record.update(ts=round(time.time(), 6), result=jsonable(result))
        self.done += 1
        self.write(record)
        return result

    async def aop(self, operation: str, arguments: dict, call):
        """`op` for a coroutine function."""
        started = time.time()
        record = {"started": round(started, 6), "client": self.client, "operation": operation,
                  "arguments": jsonable(arguments)}
        try:
            result = await call()
        except Exception as exc:  # noqa: BLE001
            record.update(ts=round(time.time(), 6), error=f"{type(exc).__name__}: {exc}")
            self.failed += 1
            self.write(record)
            return None
        record.update(ts=round(time.time(), 6), result=jsonable(result))
        self.done += 1
        self.write(record)
        return result

    def close(self) -> None:
        os.close(self.fd)
