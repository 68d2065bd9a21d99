"""Which exchanges a user asked to see: the filters of `inspect` (and of `stats`).

A filter is a predicate over a decoded Exchange. Topic matching looks at topic names and ids anywhere
in the bodies ("Topic", "Name", "TopicName", "TopicId" keys). "Errors" means: a non-zero ErrorCode
anywhere in the response, a decode error, or an exchange that is not paired; an ApiVersions answered
UNSUPPORTED_VERSION is version negotiation, not an error (kwire.codec.version_refusal).
"""

from __future__ import annotations

from dataclasses import dataclass

from kwire.codec.version_refusal import is_version_refusal
from kwire.kafka.apis import API_BY_NAME
from kwire.model import PAIRED, Exchange

TOPIC_KEYS = ("Topic", "Name", "TopicName", "TopicId")


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


def topics_in(node) -> set[str]:
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key in TOPIC_KEYS:
                value = item.get(key)
                if isinstance(value, str):
                    names.add(value)
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return names


def has_error(ex: Exchange) -> bool:
    if ex.status != PAIRED or ex.request_error or ex.response_error:
        return True
    codes = error_codes(ex.response) if ex.response else []
    return bool(codes) and not is_version_refusal(ex.api_key, codes)  # version negotiation is no failure


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
        if self.topics:
            seen = set()
            if ex.request:
                seen |= topics_in(ex.request)
            if ex.response:
                seen |= topics_in(ex.response)
            if not seen & self.topics:
                return False
        if self.errors_only and not has_error(ex):
            return False
        return True
