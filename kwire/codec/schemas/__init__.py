"""One module per Kafka API, each defining REQUEST and RESPONSE (kwire.codec.schema.MessageSchema).

Modules are discovered, not listed: adding fetch.py with REQUEST/RESPONSE is enough.
`schema_for(api_key, kind)` returns the schema or None for an api kwire decodes at header level only.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from kwire.codec.schema import MessageSchema


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


def schema_for(api_key: int, kind: str) -> MessageSchema | None:
    return all_schemas().get((api_key, kind))
