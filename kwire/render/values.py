"""Decoded bodies made plain: JSON-ready values for every renderer.

`plain_body(body, records=...)` turns a decoded body into dicts, lists, str, int, float, bool and None:
RawRecords become a summary of their batches (or, with records="full", every record), bytes become
{"hex": ...}, unknown tagged fields keep their tags as text keys. Secret-bearing fields
(SaslAuthenticate AuthBytes, SaslHandshake is not secret) are replaced by {"redacted": n_bytes}
unless show_secrets is set.
"""

from __future__ import annotations

from kwire.codec.records import decode_records, summarize_records
from kwire.codec.values import RawRecords

SECRET_FIELDS = frozenset({"AuthBytes"})


def plain_value(value, records: str = "summary", show_secrets: bool = False, key: str | None = None):
    if isinstance(value, dict):
        return {str(k): plain_value(v, records, show_secrets, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v, records, show_secrets) for v in value]
    if isinstance(value, RawRecords):
        if records == "full":
            return decode_records(value.data)
        if records == "none":
            return {"size": len(value.data)}
        return summarize_records(value.data)
    if isinstance(value, (bytes, bytearray, memoryview)):
        if key in SECRET_FIELDS and not show_secrets:
            return {"redacted": len(value)}
        return {"hex": bytes(value).hex()}
    return value


def plain_body(body: dict | None, records: str = "summary", show_secrets: bool = False) -> dict | None:
    if body is None:
        return None
    return plain_value(body, records, show_secrets)
