"""One module per Kafka API, each defining REQUEST and RESPONSE (kwire.codec.schema.MessageSchema).

Modules are discovered, not listed: adding fetch.py with REQUEST/RESPONSE is enough.
`schema_for(api_key, kind)` returns the schema or None for an api kwire decodes at header level only.
It imports only the module named after the api (Fetch -> fetch.py, kwire.kafka.apis), so a run
loads the schemas of the apis its capture carries, not all of them (a test checks every module is
named so); `all_schemas()` imports every module.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache

from kwire.codec.schema import MessageSchema
from kwire.kafka.apis import APIS


@cache
def all_schemas() -> dict[tuple[int, str], MessageSchema]:
    found: dict[tuple[int, str], MessageSchema] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for attr in ("REQUEST", "RESPONSE"):
            schema = getattr(module, attr, None)
            if isinstance(schema, MessageSchema):
                key = (schema.api_key, schema.kind)
                if key in found:
                    raise RuntimeError(f"two schemas for {key}: {found[key].name} and {schema.name}")
                found[key] = schema
    return found


_BY_KEY: dict[tuple[int, str], MessageSchema | None] = {}


def module_name(api_name: str) -> str:
    """The schema module of an api: FetchRequest's api "Fetch" -> "fetch", "OffsetForLeaderEpoch" ->
    "offset_for_leader_epoch"."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", api_name).lower()


def schema_for(api_key: int, kind: str) -> MessageSchema | None:
    key = (api_key, kind)
    try:
        return _BY_KEY[key]
    except KeyError:
        pass
    schema = None
    spec = APIS.get(api_key)
    if spec is not None:
        name = f"{__name__}.{module_name(spec.name)}"
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an api kwire has no schema for (not a broken module)
            if exc.name != name:
                raise
            module = None
        attr = "REQUEST" if kind == "request" else "RESPONSE"
        found = getattr(module, attr, None)
        if isinstance(found, MessageSchema) and (found.api_key, found.kind) == key:
            schema = found
    if len(_BY_KEY) < 4096:  # bounded: api keys come from the wire
        _BY_KEY[key] = schema
    return schema
