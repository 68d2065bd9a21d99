"""closed_instead_of_answering (kwire.analytics.rules): a broker that closed a connection instead of answering a
request it advertised. One protocol_violation per broker, from kwire.analytics.rules_state's `closes` (requests left
unanswered by a connection whose broker sent the first FIN or RST) at the document's end; the evidence names each
request and the ApiVersions answer that advertised its api and version. Silent where the broker may be shutting
down (it answered no request after the close, on any connection; or it closed another connection open at the time
within SHUTDOWN_NS), where the version was not advertised, and where the body did not decode.
"""

from __future__ import annotations

from kwire.analytics.findings_rules import rule_finding
from kwire.analytics.rules import MAX_CLOSES, SHUTDOWN_NS
from kwire.counts import count as counted
from kwire.kafka.apis import API_VERSIONS_KEY


def _advertised(analysis, key: tuple):
    """The ApiVersions answer (answered ns, ranges, evidence) that speaks for a connection: its own, else the first
    of its broker's connections that has one; None when the capture saw none."""
    conn = analysis.rules.connections.get(key)
    if conn is not None and conn.advertised is not None:
        return conn.advertised
    for other, seen in sorted(analysis.rules.connections.items()):
        if other[1] == key[1] and seen.advertised is not None:
            return seen.advertised
    return None


def _opened(analysis, key: tuple, asked: int) -> int:
    """When a connection is known to have been open from: its first exchange, or the request's time."""
    conn = analysis.traffic.connections.get(key)
    first = conn.first_ns if conn is not None else None
    return asked if first is None or first > asked else first


def _answered_after(analysis, broker: str, closed: int) -> bool:
    """Whether the broker answered a request, on any connection, after it closed one: it was not going away."""
    return any(conn.answered_ns is not None and conn.answered_ns > closed
               for key, conn in analysis.traffic.connections.items() if key[1] == broker)


def _shutdown(analysis, closes: list, i: int) -> bool:
    """Whether the i-th close may be its broker shutting down: it answered nothing after it (the capture ended, or
    the broker went away), or it closed another connection that was open at the same time within SHUTDOWN_NS."""
    closed, key, asked = closes[i]
    if not _answered_after(analysis, key[1], closed):
        return True
    for other, other_key, other_asked in closes:
        if other_key[1] != key[1] or other_key == key or abs(other - closed) > SHUTDOWN_NS:
            continue
        first, second = ((closed, key, asked), (other, other_key, other_asked))[::1 if closed <= other else -1]
        if _opened(analysis, second[1], second[2]) < first[0]:  # the later one was open when the first closed
            return True
    return False


def _found(analysis) -> dict[str, list]:
    """broker -> [(evidence, ApiVersions evidence, api, version, connection key)] of the requests it closed the
    connection on instead of answering: of the requests pending at a close, the oldest (a broker reads a
    connection's requests in order: it closed on that one), when it passes the rule's checks."""
    items = analysis.rules.closes.items
    closes = [(closed, key, ev[0]) for (closed, _), (_, _, _, ev, key) in items]
    found: dict[str, list] = {}
    seen = set()
    for i, ((closed, _), (api_key, version, decoded, ev, key)) in enumerate(items):
        if (key, closed) in seen:  # a later request pending at the same close: the broker closed on the first
            continue
        seen.add((key, closed))
        if not decoded or api_key is None or api_key == API_VERSIONS_KEY or type(version) is not int:
            continue
        advertised = _advertised(analysis, key)
        if advertised is None:
            continue
        ranges = {api: (low, high) for api, low, high in advertised[1]}
        low, high = ranges.get(api_key, (0, -1))
        if not low <= version <= high or _shutdown(analysis, closes, i):
            continue
        found.setdefault(key[1], []).append((ev, advertised[2], ev[4], version, key))
    return found


def _evidence(items: list) -> list:
    """Each request and the ApiVersions answer that advertised it, once each, in order."""
    evidence, seen = [], set()
    for ev, av_ev, *_ in items:
        for e in (ev, av_ev):
            if e[:4] not in seen:
                seen.add(e[:4])
                evidence.append(e)
    return evidence


def find(analysis) -> list[dict]:
    from kwire.analytics.findings_rules import _software  # the client software of the connections involved

    out = []
    partly = len(analysis.rules.closes.items) >= MAX_CLOSES
    for broker, items in sorted(_found(analysis).items()):
        apis: dict[str, int] = {}
        for _, _, api, version, _ in items:
            apis[f"{api} v{version}"] = apis.get(f"{api} v{version}", 0) + 1
        named = ", ".join(f"{name} ({n})" if n > 1 else name for name, n in apis.items())
        first = items[0][0]
        detail = (f"{first[4]} v{items[0][3]} (correlation id {first[3]}) from {first[1]}: the broker closed the "
                  f"connection before answering it")
        summary = (f"broker {broker} closed the connection instead of answering "
                   f"{counted(len(items), 'request')} of apis it advertised in ApiVersions: {named}")
        if partly:
            summary += f" (the first {MAX_CLOSES} requests left unanswered by a broker's close looked at)"
        evidence = _evidence(items)
        one = len(apis) == 1
        out.append(rule_finding("closed_instead_of_answering", "broker", summary, min(e[0] for e in evidence),
                                max(e[0] for e in evidence), evidence, api=items[0][2] if one else None,
                                api_version=items[0][3] if one else None, count=len(items),
                                client_software=_software(analysis.traffic, sorted({item[4] for item in items})),
                                brokers=[broker], detail=detail))
    return out
