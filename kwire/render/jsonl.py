"""JSON Lines: one object per exchange, keys as documented in README.md."""

from __future__ import annotations

import json

from kwire.model import Exchange
from kwire.render.values import plain_body


def exchange_record(ex: Exchange, *, records: str = "summary", show_secrets: bool = False) -> dict:
    latency = ex.latency_ms
    out = {
        "ts": round(ex.ts_ns / 1e9, 9),
        "client": ex.client,
        "broker": ex.broker,
        "api_key": ex.api_key,
        "api": ex.api,
        "api_version": ex.api_version,
        "correlation_id": ex.correlation_id,
        "client_id": ex.client_id,
        "status": ex.status,
        "latency_ms": round(latency, 6) if latency is not None else None,
        "request_size": ex.request_size,
        "response_size": ex.response_size,
        "request": plain_body(ex.request, records, show_secrets),
        "response": plain_body(ex.response, records, show_secrets),
        "request_error": ex.request_error,
        "response_error": ex.response_error,
        "connection_id": ex.connection_id,
    }
    if ex.request_trailing:
        out["request_trailing_bytes"] = ex.request_trailing
    if ex.response_trailing:
        out["response_trailing_bytes"] = ex.response_trailing
    if ex.extra:
        out.update(ex.extra)
    return out


def exchange_json(ex: Exchange, *, records: str = "summary", show_secrets: bool = False) -> str:
    return json.dumps(exchange_record(ex, records=records, show_secrets=show_secrets),
                      ensure_ascii=False, separators=(",", ":"))
