"""Findings about brokers and clients: slow_broker, error_burst, throttled, unanswered,
client_hangup.

- slow_broker {broker, apis, p50_ms, baseline_p50_ms, requests}: over windows of at least
  SLOW_WINDOW_S seconds, the median latency of a broker's requests that are not long polls (Fetch,
  ShareFetch, JoinGroup, SyncGroup wait by design) is at least SLOW_FACTOR times, and SLOW_MIN_MS
  more than, the median of all brokers over the whole capture. p50_ms is the window's median and
  baseline_p50_ms the broker's median outside its slow windows (else all brokers'), both to within
  one histogram bucket (about 9 %). Brokers past the first CAPS["broker_latency"] (1,024 smallest
  addresses, kwire.native.caps) count in the median of all brokers, not on their own (the
  document's caps.broker_latency says when that happened).
- error_burst {api, error, count, client_ids, reaction, reactions}: error codes in answers (those
  that are part of the protocol's normal flow aside: MEMBER_ID_REQUIRED on a first JoinGroup,
  REBALANCE_IN_PROGRESS, which rebalance findings cover). reactions counts what each client did
  within REACTION_S after each error: "rejoin" (JoinGroup, or a KIP-848 / share heartbeat with epoch
  0), "metadata refresh" (Metadata or FindCoordinator), "retry" (the same api again; for Produce,
  the failed batch sent again), else "nothing", once per client and error moment (100 ms);
  reaction is the first of rejoin, metadata refresh, retry that followed at least half of them.
- throttled {client_id, broker, throttle_total_ms, count}: answers with ThrottleTimeMs > 0.
- unanswered {api, count, client_ids}: requests never answered although the connection went on
  (a later request on it was answered) or the client (host and client id) kept talking on its other
  connections for GAVE_UP_S after it while this one hung; requests in flight when a client shut
  down or the capture ended, acks=0 Produce, and JoinGroup / SyncGroup (held by design; join_stuck
  covers them) are not counted.
- client_hangup {client, client_id, broker, client_software, after_api, count}: at least
  HANGUP_MIN short connections (at most HANGUP_EXCHANGES exchanges) from one client (host and
  client id) to one broker whose last exchange was answered, each followed within RECONNECT_S by a
  new connection: the client hung up right after that answer (it probably could not parse it).
(protocol_violation, the old reading of bodies against the schema, is a protocol rule now:
kwire.analytics.findings_rules.)
"""

from __future__ import annotations

from kwire.analytics.findings import client_named, clients_named, finding
from kwire.counts import count, noun
from kwire.native.mergeable import bucket_upper_ms, histogram_percentile, merge_counts
from kwire.analytics.traffic import STEADY_APIS, host_of

NS = 1_000_000_000
SLOW_WINDOW_S = 4
SLOW_FACTOR = 5
SLOW_MIN_MS = 20.0
SLOW_MIN_REQUESTS = 3
REACTION_S = 5
HANGUP_MIN = 3
HANGUP_EXCHANGES = 3
RECONNECT_S = 30
GAVE_UP_S = 4
# Answers that are part of the protocol's normal flow: a first JoinGroup learns its member id; a
# rebalance (rebalance findings cover it); a broker that evicted a fetch or share session (the
# client opens a new one).
FLOW_ERRORS = {("JoinGroup", "MEMBER_ID_REQUIRED")}
FLOW_ANYWHERE = {"REBALANCE_IN_PROGRESS", "FETCH_SESSION_ID_NOT_FOUND", "INVALID_FETCH_SESSION_EPOCH",
                 "SHARE_SESSION_NOT_FOUND", "INVALID_SHARE_SESSION_EPOCH"}
REACTIONS = ("rejoin", "metadata refresh", "retry", "nothing")


def _p50_ms(hist: dict) -> float | None:
    k = histogram_percentile(hist, 50)
    return None if k is None else bucket_upper_ms(k)


def _slow_broker(traffic) -> list[dict]:
    if not traffic.latency:
        return []
    width = max(max(s.resolution for s in traffic.latency.values()), SLOW_WINDOW_S)
    pooled: dict = {}
    rebinned = {broker: series.rebinned(width) for broker, series in traffic.latency.rows.items()}
    for series in traffic.latency.values():  # the brokers folded past the cap too: the baseline is everyone's
        for cell in series.rebinned(width).values():
            merge_counts(pooled, cell[0])
    ref = _p50_ms(pooled) or 0.0
    threshold = max(SLOW_FACTOR * ref, ref + SLOW_MIN_MS)
    out = []
    for broker, cells in sorted(rebinned.items()):
        slow = sorted(k for k, cell in cells.items()
                      if sum(cell[0].values()) >= SLOW_MIN_REQUESTS and (_p50_ms(cell[0]) or 0) >= threshold)
        windows: list[list[int]] = []
        for k in slow:
            if windows and k - windows[-1][-1] <= 2:
                windows[-1].append(k)
            else:
                windows.append([k])
        rest: dict = {}
        for k, cell in cells.items():
            if k not in slow:
                merge_counts(rest, cell[0])
        baseline = _p50_ms(rest) if sum(rest.values()) >= SLOW_MIN_REQUESTS else ref
        for window in windows:
            hist, apis, evidence = {}, {}, []
            for k in window:
                merge_counts(hist, cells[k][0])
                merge_counts(apis, cells[k][1])
                if cells[k][2] is not None:
                    evidence.append(cells[k][2][1])
            p50 = _p50_ms(hist)
            start, end = _edges(traffic.latency.rows[broker], window, width, threshold)
            names = [api for api, _ in sorted(apis.items(), key=lambda kv: (-kv[1], kv[0]))]
            summary = (f"broker {broker} answered {count(sum(hist.values()), 'request')} ({', '.join(names[:4])}) "
                       f"with a median of {p50:.0f} ms for {(end - start) / NS:.0f} s, against {baseline:.2f} ms "
                       "otherwise")
            out.append(finding("slow_broker", "warning", summary, start, end, evidence, broker=broker, apis=names,
                               p50_ms=p50, baseline_p50_ms=baseline, requests=sum(hist.values())))
    return out


def _went_on(traffic, who: tuple, t: int) -> bool:
    """Did this client (host, client id) still talk a second after t?"""
    return any(conn.last_ns is not None and conn.last_ns > t + NS and host_of(client) == who[0]
               and (conn.client_id or "") == who[1] for (client, _, _), conn in traffic.connections.items())


def _edges(series, window: list[int], width: int, threshold: float) -> tuple[int, int]:
    """The window's start and end, to the series' own resolution: the first and last of its fine
    buckets (in and next to the window) whose median is slow."""
    fine = series.resolution
    factor = width // fine
    lo, hi = (window[0] - 1) * factor, (window[-1] + 2) * factor
    slow = [k for k, cell in series.rebinned(fine).items() if lo <= k < hi and (_p50_ms(cell[0]) or 0) >= threshold]
    if not slow:
        return window[0] * width * NS, (window[-1] + 1) * width * NS
    return min(slow) * fine * NS, (max(slow) + 1) * fine * NS


def _reactions(analysis, api: str, log) -> dict[str, int]:
    """What each client did after each error (the module docstring defines the reactions). The
    steady apis (Fetch, heartbeats...) are sent again by any client that goes on: retry."""
    traffic = analysis.traffic
    within = REACTION_S * NS
    resent = api == "Produce" and any(b.failed and b.sends > b.failed for b in analysis.delivery.batches.values())
    steady = api in STEADY_APIS and api != "Produce"
    counts: dict[str, int] = {}
    for who, moments in sorted(log.moments.items()):
        for t in moments.sorted_ns():
            lo = t - 1
            seen = []
            if traffic.did(who, "JoinGroup", lo, within):
                seen.append("rejoin")
            if traffic.did(who, "Metadata", lo, within) or traffic.did(who, "FindCoordinator", lo, within):
                seen.append("metadata refresh")
            if resent or (_went_on(traffic, who, t) if steady else traffic.did(who, api, lo + moments.width_ns, within)):
                seen.append("retry")
            for name in seen or ["nothing"]:
                counts[name] = counts.get(name, 0) + 1
    return counts


def _error_bursts(analysis) -> list[dict]:
    out = []
    for (api, error), log in sorted(analysis.traffic.errors.items()):
        if (api, error) in FLOW_ERRORS or error in FLOW_ANYWHERE:
            continue
        counts = _reactions(analysis, api, log)
        moments = sum(len(m.buckets) for m in log.moments.values())
        reaction = next((name for name in REACTIONS if counts.get(name, 0) * 2 >= moments and counts.get(name)),
                        "nothing")
        ids = sorted(log.client_ids, key=str)
        summary = (f"{log.count:,} {api} {noun(log.count, 'answer')} with {error} to {clients_named(ids)}; "
                   f"the clients' reaction: {reaction}")
        out.append(finding("error_burst", "warning", summary, log.first_ns, log.last_ns, log.evidence.values(),
                           api=api, error=error, count=log.count, client_ids=ids, reaction=reaction,
                           reactions=dict(sorted(counts.items()))))
    return out


def _throttled(traffic) -> list[dict]:
    out = []
    for (client_id, broker), tally in sorted(traffic.throttles.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        summary = (f"broker {broker} throttled {client_named(client_id)} {count(tally.count, 'time')}, "
                   f"{tally.total / 1000:.1f} s in all")
        out.append(finding("throttled", "warning", summary, tally.first_ns, tally.last_ns, tally.evidence.values(),
                           client_id=client_id, broker=broker, throttle_total_ms=tally.total, count=tally.count,
                           throttle_ms_total=tally.total))  # (deprecated)
    return out


def _by_client_broker(traffic) -> dict[tuple, list]:
    """(host, client id, broker) -> its connections [(client, Connection)] by first time."""
    out: dict[tuple, list] = {}
    for (client, broker, _), conn in traffic.connections.items():
        out.setdefault((host_of(client), conn.client_id, broker), []).append((client, conn))
    for conns in out.values():
        conns.sort(key=lambda item: (item[1].first_ns or 0, item[0]))
    return out


def _kept_talking(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Do the intervals cover [start, end] without a gap?"""
    reach = start
    for first, last in spans:
        if first > reach:
            return False
        reach = max(reach, last)
        if reach >= end:
            return True
    return False


def _unanswered(traffic) -> list[dict]:
    spans: dict[tuple, list] = {}
    for key, conn in traffic.connections.items():
        if conn.first_ns is not None:
            spans.setdefault((host_of(key[0]), conn.client_id), []).append((conn.first_ns, conn.last_ns, key))
    for items in spans.values():
        items.sort()
    by_api: dict[str, list] = {}
    for ev, client_id, connection in traffic.unanswered.values():
        ts, client, broker, _, api = ev
        if api in ("JoinGroup", "SyncGroup"):
            continue
        key = (client, broker, connection)
        conn = traffic.connections.get(key)
        later = conn is not None and conn.answered_ns is not None and conn.answered_ns > ts
        others = [(a, b) for a, b, k in spans.get((host_of(client), client_id), ()) if k != key]
        if later or _kept_talking(others, ts, ts + GAVE_UP_S * NS):
            by_api.setdefault(api, []).append((ev, client_id))
    out = []
    for api, items in sorted(by_api.items()):
        ids = sorted({client_id for _, client_id in items}, key=str)
        times = [ev[0] for ev, _ in items]
        summary = (f"{len(items):,} {api} {noun(len(items), 'request')} never answered while their clients "
                   f"({clients_named(ids)}) went on")
        out.append(finding("unanswered", "warning", summary, min(times), max(times), [ev for ev, _ in items],
                           api=api, count=len(items), client_ids=ids))
    return out


def _hangups(traffic) -> list[dict]:
    out = []
    for (host, client_id, broker), conns in sorted(_by_client_broker(traffic).items(), key=lambda kv: str(kv[0])):
        hung: dict[str, list] = {}
        for (client, conn), nxt in zip(conns, conns[1:]):
            last = conn.last
            if last is None or last[4] != "paired" or nxt[1].first_ns is None or conn.exchanges > HANGUP_EXCHANGES:
                continue
            if 0 <= nxt[1].first_ns - last[0] <= RECONNECT_S * NS:
                hung.setdefault(last[3], []).append((client, conn))
        for after_api, items in sorted(hung.items()):
            if len(items) < HANGUP_MIN:
                continue
            software = sorted({c.software for _, c in items if c.software})
            evidence = [(c.last[1], client, broker, c.last[2], c.last[3]) for client, c in items]
            summary = (f"{client_named(client_id)} on {host} ({', '.join(software) or 'software unknown'}) hung up "
                       f"on broker {broker} right after an {after_api} answer, {count(len(items), 'time')}")
            out.append(finding("client_hangup", "warning", summary, items[0][1].first_ns, items[-1][1].last_ns,
                               evidence, client=host, client_id=client_id, broker=broker,
                               client_software=software[0] if software else None, after_api=after_api,
                               count=len(items)))
    return out


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    traffic = analysis.traffic
    return (_slow_broker(traffic) + _error_bursts(analysis) + _throttled(traffic) + _unanswered(traffic)
            + _hangups(traffic))
