"""Findings of broken protocol rules: protocol_violation, one per rule, side, api and version (or broker).

Each carries the rule's declaration (kwire.analytics.rules) and what was seen:

- protocol_violation {rule, side, says, cites, api, api_version, count, software, client_software, brokers,
  detail, violation, stopped_at}: `rule` the stable id; `side` who broke it; `software` the breaking side's
  software where the exchanges say it (a client's from its ApiVersions request; None for a broker: Kafka's
  protocol does not name a broker's software); `client_software` the clients on the connections involved;
  `count` the bodies, exchanges or answers that break it (the summary says which); `detail` the first
  instance in words; `violation` and `stopped_at` as before for the body rules (trailing_bytes,
  malformed_body, null_not_nullable: the outcome kind, or the fault the decoder named, null_not_nullable, for a
  null read as null or malformed at it; where decoding stopped), else None.

Severity is the rule's. The body rules come from kwire.analytics.traffic's violations, error_code_unknown from its
error counts (per api and error name, which every row feeds anyway); the others from kwire.analytics.rules_state
(throttle_not_honoured: its throttled answers, with the traffic's answered requests of each connection), computed
here once at the document's end (the rules over topics, committed offsets and groups in
kwire.analytics.findings_rules_admin, closed_instead_of_answering in kwire.analytics.findings_rules_close).
"""

from __future__ import annotations

from bisect import bisect_right

from kwire.analytics.findings import clients_named, finding
from kwire.analytics.rules import (MAX_ORDERED, MAX_WINDOWS, RULES, THROTTLE_SLACK_MS, THROTTLE_START_MS,
                                   throttled_after_answer)
from kwire.counts import count as counted
from kwire.kafka.apis import API_VERSIONS_KEY, api_name
from kwire.kafka.error_codes import HIGHEST, is_defined
from kwire.errors import NULL_NOT_NULLABLE
from kwire.outcomes import MALFORMED, TRAILING_BYTES

# the kind of a traffic violation (a body outcome's kind, or the fault its decoder named) -> its rule
BODY_RULES = {TRAILING_BYTES: "trailing_bytes", MALFORMED: "malformed_body", NULL_NOT_NULLABLE: "null_not_nullable"}
_WHAT = {TRAILING_BYTES: "bytes left after the body", MALFORMED: "a body that does not decode",
         NULL_NOT_NULLABLE: "a null in a field Kafka's schema says is not nullable"}


def rule_finding(rule_id: str, side: str, summary: str, start, end, evidence, *, api=None, api_version=None,
                 count: int, software=None, client_software=(), brokers=(), detail=None, violation=None,
                 stopped_at=None) -> dict:
    rule = RULES[rule_id]
    return finding("protocol_violation", rule.severity, summary, start, end, evidence, rule=rule_id, side=side,
                   says=rule.says, cites=rule.cites, api=api, api_version=api_version, count=count,
                   software=software, client_software=sorted(set(client_software)), brokers=sorted(set(brokers)),
                   detail=detail, violation=violation, stopped_at=stopped_at)


def _software(traffic, conns) -> list[str]:
    return sorted({traffic.connections[c].software for c in conns
                   if c in traffic.connections and traffic.connections[c].software})


def _software_between(traffic, pairs: set) -> list[str]:
    """The client software of the connections between these (client, broker) pairs."""
    return sorted({conn.software for key, conn in traffic.connections.items() if key[:2] in pairs and conn.software})


def _bodies(traffic) -> list[dict]:
    """trailing_bytes, malformed_body and null_not_nullable, from the traffic's violations (kwire.analytics.observe)."""
    out = []
    for (side, kind, api, version), tally in sorted(traffic.violations.items(), key=lambda kv: str(kv[0])):
        conns = sorted(tally.connections)
        software = _software(traffic, conns)
        brokers = sorted({key[1] for key in conns})
        who = (", ".join(software) or "client software unknown") if side == "client" else f"broker {', '.join(brokers)}"
        what = _WHAT.get(kind, _WHAT[MALFORMED])
        summary = f"{tally.count} {api} v{version} {'requests' if side == 'client' else 'answers'} with {what} ({who})"
        note = tally.note[1] if tally.note else None
        if kind != TRAILING_BYTES and note:
            summary += f"; decoding stopped at {note}"
        out.append(rule_finding(BODY_RULES.get(kind, "malformed_body"), side, summary, tally.first_ns, tally.last_ns,
                                tally.evidence.values(), api=api, api_version=version, count=tally.count,
                                software=", ".join(software) if side == "client" and software else None,
                                client_software=software, brokers=brokers, detail=note, violation=kind,
                                stopped_at=note))
    return out


def _broken(analysis) -> list[dict]:
    """Rules one exchange proves broken (kwire.analytics.rules_read)."""
    traffic, out = analysis.traffic, []
    for (rule, side, api, version), tally in sorted(analysis.rules.broken.items(), key=lambda kv: str(kv[0])):
        conns = sorted(tally.connections)
        software = _software(traffic, conns)
        brokers = sorted({key[1] for key in conns})
        detail = tally.note[1] if tally.note else None
        who = f"broker {', '.join(brokers)}" if side == "broker" else ", ".join(software) or "client software unknown"
        summary = f"{rule}: {counted(tally.count, f'{api} v{version} exchange')} ({who}); first: {detail}"
        out.append(rule_finding(rule, side, summary, tally.first_ns, tally.last_ns, tally.evidence.values(), api=api,
                                api_version=version, count=tally.count,
                                software=", ".join(software) if side == "client" and software else None,
                                client_software=software, brokers=brokers, detail=detail))
    return out


def _versions(analysis) -> list[dict]:
    """version_not_advertised: requests after the connection's ApiVersions answer outside its ranges."""
    traffic = analysis.traffic
    found: dict[tuple, list] = {}  # (api key, version) -> [(connection, first evidence, detail)]
    for key, conn in sorted(analysis.rules.connections.items()):
        used = traffic.connections.get(key)
        if conn.advertised is None or used is None:
            continue
        answered, ranges, av_ev = conn.advertised
        allowed = {api: (low, high) for api, low, high in ranges}
        for (api, version), (first_ts, first_ev, last_ts, last_ev, _) in sorted(used.used.items()):
            if api == API_VERSIONS_KEY or last_ts <= answered:
                continue
            have = allowed.get(api)
            if have is not None and have[0] <= version <= have[1]:
                continue
            ev = first_ev if first_ts > answered else last_ev
            said = f"v{have[0]}-v{have[1]}" if have is not None else "no version of it"
            found.setdefault((api, version), []).append((key, ev, av_ev, said))
    out = []
    for (api, version), items in sorted(found.items()):
        name = api_name(api)
        conns = [key for key, _, _, _ in items]
        software = _software(traffic, conns)
        detail = f"{name} v{version} sent after ApiVersions advertised {items[0][3]}"
        summary = (f"{name} v{version} sent on {counted(len(items), 'connection')} whose broker advertised "
                   f"{items[0][3]} in ApiVersions ({', '.join(software) or 'client software unknown'})")
        times = [ev[0] for _, ev, _, _ in items]
        evidence = [e for _, ev, av, _ in items for e in (ev, av)]
        out.append(rule_finding("version_not_advertised", "client", summary, min(times), max(times), evidence,
                                api=name, api_version=version, count=len(items),
                                software=", ".join(software) or None, client_software=software,
                                brokers=[key[1] for key in conns], detail=detail))
    return out


def _order(analysis) -> list[dict]:
    """responses_out_of_order: per broker, the connections with an answer before an earlier request's."""
    traffic = analysis.traffic
    by_broker: dict[str, list] = {}
    partly = 0
    for key, conn in sorted(traffic.connections.items()):
        partly += conn.answers > MAX_ORDERED
        latest = None  # (answer ts, evidence, request ts) of the latest answer so far, in request order
        for (ts, _), (answered, ev) in conn.order.items:
            if latest is not None and answered < latest[0] and ts > latest[2]:
                by_broker.setdefault(key[1], []).append((key, ev, latest[1]))
                break
            if latest is None or answered > latest[0]:
                latest = (answered, ev, ts)
    out = []
    for broker, items in sorted(by_broker.items()):
        conns = [key for key, _, _ in items]
        first = items[0]
        detail = (f"{first[1][4]} (correlation id {first[1][3]}) answered before {first[2][4]} (correlation id "
                  f"{first[2][3]}), which was sent before it")
        summary = (f"broker {broker} answered requests out of order on {counted(len(items), 'connection')}; "
                   f"first: {detail}")
        if partly:
            summary += f" (the first {MAX_ORDERED} answers of each connection checked; {partly} had more)"
        evidence = [e for _, ev, before in items for e in (ev, before)]
        out.append(rule_finding("responses_out_of_order", "broker", summary, min(e[0] for e in evidence),
                                max(e[0] for e in evidence), evidence, api=first[1][4], count=len(items),
                                client_software=_software(traffic, conns), brokers=[broker], detail=detail))
    return out


def _unknown_codes(analysis) -> list[dict]:
    """error_code_unknown: per api, the answers with an error code Kafka does not define (the traffic's errors,
    kwire.analytics.traffic: counted per (api, error name) from every row)."""
    traffic, by_api = analysis.traffic, {}
    for (api, name), log in sorted(traffic.errors.items(), key=lambda kv: str(kv[0])):
        if not is_defined(name):
            by_api.setdefault(api, []).append((name, log))
    out = []
    for api, items in sorted(by_api.items()):
        evidence = [ev for _, log in items for ev in log.evidence.values()]
        brokers = sorted({ev[2] for ev in evidence})
        count = sum(log.count for _, log in items)
        codes = ", ".join(name for name, _ in items)
        detail = f"{api} answered {codes}: not in Kafka's table of errors (-1 to {HIGHEST})"
        summary = (f"error_code_unknown: {counted(count, f'{api} answer')} with an error code Kafka does not define "
                   f"({codes}; broker {', '.join(brokers)})")
        out.append(rule_finding("error_code_unknown", "broker", summary, min(log.first_ns for _, log in items),
                                max(log.last_ns for _, log in items), evidence, api=api, count=count,
                                client_software=_software_between(traffic, {(ev[1], ev[2]) for ev in evidence}),
                                brokers=brokers, detail=detail))
    return out


def _latest(analysis) -> list[dict]:
    """latest_below_high_watermark: per broker, ListOffsets latest answers below an earlier Fetch high watermark."""
    by_broker: dict[str, list] = {}
    for (broker, topic, partition), marks in sorted(analysis.rules.partitions.items(), key=lambda kv: str(kv[0])):
        for (ts, _), (offset, ev) in marks.latest.items:
            seen = [(hw, mark_ev) for hw, at, mark_ev in
                    ((marks.first[1], marks.first[0], marks.first[2]) if marks.first else (None, None, None),
                     (marks.highest[0], -marks.highest[1], marks.highest[2]) if marks.highest else (None, None, None))
                    if hw is not None and at < ts and hw > offset]
            if seen:
                hw, mark_ev = max(seen, key=lambda s: s[0])
                by_broker.setdefault(broker, []).append((f"{topic}[{partition}]", offset, hw, ev, mark_ev))
    out = []
    for broker, items in sorted(by_broker.items()):
        where, offset, hw, _, _ = items[0]
        detail = f"{where}: ListOffsets latest answered {offset}, after a Fetch answered HighWatermark {hw}"
        summary = (f"broker {broker} answered ListOffsets (latest) below the high watermark it gave in Fetch, "
                   f"{counted(len(items), 'time')}; first: {detail}")
        evidence = [e for *_, ev, mark_ev in items for e in (ev, mark_ev)]
        out.append(rule_finding("latest_below_high_watermark", "broker", summary, min(e[0] for e in evidence),
                                max(e[0] for e in evidence), evidence, api="ListOffsets", count=len(items),
                                brokers=[broker], detail=detail))
    return out


MS = 1_000_000


def _requests(conn, traffic_conn) -> tuple[list, int | None]:
    """A connection's requests known to the rules, by time ((ts, evidence), ...): its throttled ones and its first
    answered (the traffic's order), and the time up to which every answered request is among them (None: all)."""
    seen = {ev[:4]: ev for _, (_, _, _, ev) in conn.windows.items}
    covered = None
    if traffic_conn is not None:
        order = traffic_conn.order.items
        seen.update((ev[:4], ev) for _, (_, ev) in order)
        if traffic_conn.answers > len(order) and order:
            covered = order[-1][0][0]
    return sorted((ev[0], ev) for ev in seen.values()), covered


def _early(requests: list, times: list, answered: int, throttle: int):
    """The first request sent inside an answer's throttle (past THROTTLE_START_MS, before its end less the
    tolerance), or None."""
    end = answered + throttle * MS - max(THROTTLE_SLACK_MS * MS, throttle * MS // 10)
    at = bisect_right(times, answered + THROTTLE_START_MS * MS)
    return requests[at][1] if at < len(requests) and requests[at][0] < end else None


def _early_requests(analysis) -> tuple[dict, int]:
    """(api, version) -> [(connection, answer ev, early request ev, detail)] of the throttled answers after which
    the client sent inside the throttle; and how many connections were checked in part."""
    traffic = analysis.traffic
    found: dict[tuple, list] = {}
    partly = 0
    for key, conn in sorted(analysis.rules.connections.items()):
        windows = [(a, w) for (a, _), w in conn.windows.items if throttled_after_answer(w[3][4], w[2])]
        if not windows:
            continue
        requests, covered = _requests(conn, traffic.connections.get(key))
        times = [ts for ts, _ in requests]
        partly += conn.throttled > MAX_WINDOWS or covered is not None
        for answered, (_, throttle, version, ev) in windows:
            early = _early(requests, times, answered, throttle)
            if early is not None:
                detail = (f"{ev[4]} v{version} answered (correlation id {ev[3]}) with ThrottleTimeMs {throttle:,}; "
                          f"{early[4]} (correlation id {early[3]}) sent {(early[0] - answered) / MS:,.1f} ms after it")
                found.setdefault((ev[4], version), []).append((key, ev, early, detail))
    return found, partly


def _throttles(analysis) -> list[dict]:
    """throttle_not_honoured: per api and version, the throttled answers after which the client sent early."""
    traffic = analysis.traffic
    found, partly = _early_requests(analysis)
    out = []
    for (api, version), items in sorted(found.items()):
        conns = sorted({item[0] for item in items})
        software = _software(traffic, conns)
        ids = sorted({traffic.connections[c].client_id for c in conns if c in traffic.connections}, key=str)
        brokers = sorted({c[1] for c in conns})
        who = f"{clients_named(ids) or '(no client id)'} ({', '.join(software) or 'client software unknown'})"
        summary = (f"{who} sent "
                   f"requests inside the throttle of {counted(len(items), f'{api} v{version} answer')} on "
                   f"{counted(len(conns), 'connection')} to {', '.join(brokers)}; first: {items[0][3]}")
        if partly:
            summary += (f" (the first {MAX_WINDOWS} throttled answers and {MAX_ORDERED} answered requests of each "
                        f"connection checked; {partly} had more)")
        evidence = [e for _, ev, early, _ in items for e in (ev, early)]
        out.append(rule_finding("throttle_not_honoured", "client", summary, min(e[0] for e in evidence),
                                max(e[0] for e in evidence), evidence, api=api, api_version=version,
                                count=len(items), software=", ".join(software) or None, client_software=software,
                                brokers=brokers, detail=items[0][3]))
    return out


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    from kwire.analytics.findings_rules_admin import find as admin  # they build on rule_finding, above
    from kwire.analytics.findings_rules_close import find as closes

    return (_bodies(analysis.traffic) + _broken(analysis) + _versions(analysis) + _order(analysis) + _latest(analysis)
            + _unknown_codes(analysis) + _throttles(analysis) + admin(analysis) + closes(analysis))
