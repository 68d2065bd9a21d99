"""Which exchanges a user asked to see: the filters of `inspect` (and of `stats`).

A filter is a predicate over a decoded Exchange. Topic matching looks at the fields the schemas mark as
holding a topic name or a topic id (kwire.codec.marks), and at the names kwire.enrich gave topic ids.
"Errors" means: a non-zero ErrorCode anywhere in the response, a decode error, or an exchange that is
not paired.
"""

from __future__ import annotations

from dataclasses import dataclass

from kwire.codec.marks import TOPICS, message_tree, walk
from kwire.enrich import ZERO_UUID
from kwire.kafka.apis import API_BY_NAME
from kwire.model import PAIRED, Exchange


def parse_api(text: str) -> int:
    """An api given by name (any case, "Fetch", "fetch") or by key number."""
    if text.isdigit():
        return int(text)
    spec = API_BY_NAME.get(text.lower())
    if spec is None:
        raise ValueError(f"unknown api {text!r}")
    return spec.key


def error_codes(node) -> list[int]:
    """Every non-zero ErrorCode in a decoded body, in one recursive walk (a hot spot of stats)."""
    found: list[int] = []
    if node:
        _collect_error_codes(node, found)
    return found


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


def topics_of(ex: Exchange) -> set[str]:
    """Every topic name and id the exchange's bodies hold, and the names kwire.enrich gave the ids."""
    names: set[str] = set()
    for kind, body in (("request", ex.request), ("response", ex.response)):
        if not body:
            continue
        for struct, key, _ in walk(body, message_tree(ex.api_key, kind, ex.api_version, TOPICS)):
            value = struct[key]
            for item in value if type(value) is list else (value,):
                if type(item) is str and item != ZERO_UUID:
                    names.add(item)
            enriched = struct.get("TopicName")
            if type(enriched) is str:
                names.add(enriched)
    return names


def has_error(ex: Exchange) -> bool:
    if ex.status != PAIRED or ex.request_error or ex.response_error:
        return True
    return bool(ex.response and error_codes(ex.response))


@dataclass(frozen=True)
class ExchangeFilter:
    api_keys: frozenset[int] = frozenset()
    client_ids: frozenset[str] = frozenset()
    topics: frozenset[str] = frozenset()
    errors_only: bool = False
    min_latency_ms: float | None = None

    def __call__(self, ex: Exchange) -> bool:
        if self.api_keys and ex.api_key not in self.api_keys:
            return False
        if self.client_ids and ex.client_id not in self.client_ids:
            return False
        if self.min_latency_ms is not None:
            latency = ex.latency_ms
            if latency is None or latency < self.min_latency_ms:
                return False
        if self.topics and not topics_of(ex) & self.topics:
            return False
        if self.errors_only and not has_error(ex):
            return False
        return True
