"""Findings about consumer groups: member_expired, join_stuck, join_left_behind, rebalance_storm.

- member_expired {group_id, member_id, client_id, partitions, unowned_ms, reassigned}: a member that
  stopped sending without leaving while a later generation started without it
  (kwire.analytics.groups.expired). start: its last request; end: the moment the last of its
  partitions was given to another member (or the end of the capture, with reassigned false);
  unowned_ms: end - start. Evidence: its last request and the answers that handed its partitions on.
- join_stuck {group_id, member_id, client_id, waited_ms, rebalance_timeout_ms, count}: JoinGroups
  answered after their rebalance timeout (RebalanceTimeoutMs, SessionTimeoutMs before v1), or never
  answered although the client was still talking a rebalance timeout later. waited_ms: until the
  answer, or until the client's next JoinGroup (it gave up), else the rebalance timeout. member_id:
  the one the JoinGroup named, or for a new member the one the client got next in that group.
- join_left_behind {group_id, member_id, client_id, client, joins, generations, waited_ms,
  rebalance_timeout_ms}: a member (or a new member: the client's next member id in the group) whose
  JoinGroup was not answered, or answered only later, while the group formed generations without it
  (neither the member nor a member on its connection in them), whatever its rebalance timeout: the
  coordinator never had its join (a lost path, a stuck broker thread) and the member waits on. A
  generation counts when it formed at least LEFT_BEHIND_GRACE_S after the JoinGroup was sent (one that
  was completing as it arrived does not) and before its answer, the client's next JoinGroup, or its last
  moment on the wire. joins: [{ts_ns, correlation_id, answered_ms}] (answered_ms null: never answered);
  generations: the numbers formed without it (at most MAX_PASSED); waited_ms: first join to the end of
  the last wait (the capture's end for a wait that never ended).
- rebalance_storm {group_id, generations, rebalancing_ms, clients}: at least STORM_GENERATIONS
  generations, each starting within STORM_GAP_S of the one before, and at least twice as many as the
  clients (client id and host) in them: a client joining and leaving once accounts for two; more
  means members came and went again and again. rebalancing_ms adds up each generation's
  rebalance: first JoinGroup to last SyncGroup answer (classic), or first to last member reaching
  the epoch (KIP-848 and share groups).
  (Each duration `X_ms` has its deprecated copy `X_s` in seconds beside it, for one release; `joins` their
  `ts` in epoch seconds: docs/vocabulary.md.)
"""

from __future__ import annotations

from kwire.analytics.findings import client_named, finding, seconds
from kwire.counts import count
from kwire.analytics.figures import ms
from kwire.analytics.groups import Group, Member, expired, rebalance_ns, rebalance_s, timeline
from kwire.analytics.traffic import host_of

STORM_GENERATIONS = 5
LEFT_BEHIND_GRACE_S = 1
MAX_PASSED = 20
STORM_GAP_S = 30
NS = 1_000_000_000


def _named(parts, names: dict) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for topic, p in sorted(parts):
        out.setdefault(names.get(topic, topic), []).append(p)
    return out


def _member_expired(group_id: str, group: Group, names: dict, last_ns: int | None) -> list[dict]:
    out = []
    classic = group.protocol == "classic"
    for member_id, (last_gen, next_gen) in sorted(expired(group).items()):
        member = group.members[member_id]
        held = member.assignment_at(last_gen, exact=classic) or ()
        parts = {(names.get(topic, topic), p) for topic, ps in held for p in ps}
        went = member.last_ns
        handed: dict[tuple, tuple] = {}  # partition -> (ts, evidence) of its first new owner
        for other_id, other in group.members.items():
            if other_id == member_id:
                continue
            for (neg_ts, _gen, given), ev in other.assignments.items:
                ts = -neg_ts
                if ts <= went:
                    continue
                for topic, ps in given:
                    for p in ps:
                        key = (names.get(topic, topic), p)
                        if key in parts and (key not in handed or (ts, ev) < handed[key]):
                            handed[key] = (ts, ev)
        reassigned = bool(parts) and len(handed) == len(parts)
        end = max(ts for ts, _ in handed.values()) if reassigned else last_ns
        unowned_ns = end - went if end is not None and parts else 0
        unowned = round(unowned_ns / NS, 3)
        plist = _named(parts, names)
        summary = (f"member {member_id} ({client_named(member.client_id)}) of group {group_id} stopped without "
                   f"leaving; generation {next_gen} started without it" +
                   (f"; its partitions {_text(plist)} had no owner for {unowned:.1f} s" if parts else ""))
        out.append(finding("member_expired", "warning", summary, went, end,
                           [member.last_evidence] + [ev for _, ev in sorted(handed.values())[:5]],
                           group_id=group_id, member_id=member_id, client_id=member.client_id,
                           partitions=plist, unowned_ms=ms(unowned_ns), reassigned=reassigned,
                           unowned_s=unowned))  # (deprecated)
    return out


def _text(parts: dict) -> str:
    return ", ".join(f"{topic}{p}" for topic, p in parts.items()) or "none"


def alive_index(analysis) -> dict[tuple, int]:
    """(client host, client id) -> the last moment any of its connections was seen: built once per
    findings pass (one scan of the connections), so each unanswered JoinGroup is one lookup, not a
    scan of every connection."""
    index: dict[tuple, int] = {}
    for (c, _, _), conn in analysis.traffic.connections.items():
        if conn.last_ns is not None:
            key = (host_of(c), conn.client_id)
            if conn.last_ns > index.get(key, conn.last_ns - 1):
                index[key] = conn.last_ns
    return index


def _member_next(group: Group, client: str, client_id, after_ns: int) -> str | None:
    found = [(m.first_ns, member_id) for member_id, m in group.members.items()
             if m.client_id == client_id and host_of(m.client or "") == host_of(client)
             and m.first_ns is not None and m.first_ns >= after_ns]
    return min(found)[1] if found else None


def _join_stuck(analysis, group_id: str, group: Group, alive_until: dict) -> list[dict]:
    by_member: dict[tuple, list] = {}
    for (member, client_id, client, ts, latency, timeout, ev) in group.stuck.values():
        if latency is None:
            alive = alive_until.get((host_of(client), client_id))
            if alive is None or alive < ts + timeout * 1_000_000:
                continue  # the client went away first: a join abandoned at shutdown
            retry = analysis.traffic.next_moment((host_of(client), client_id or ""), "JoinGroup", ts)
            if retry is not None:
                latency = -(retry - ts)  # negative: the client gave up after this long
        member = member or _member_next(group, client, client_id, ts)
        by_member.setdefault((member or "", client_id), []).append((ts, latency, timeout, ev))
    out = []
    for (member, client_id), joins in sorted(by_member.items(), key=lambda kv: (kv[1][0][0], kv[0])):
        waited = max(abs(latency or 0) for _, latency, _, _ in joins)
        unanswered = sum(1 for _, latency, _, _ in joins if latency is None or latency < 0)
        timeout = max(t for _, _, t, _ in joins)
        start = min(ts for ts, _, _, _ in joins)
        end = max(ts + (abs(latency) if latency else timeout * 1_000_000) for ts, latency, timeout, _ in joins)
        what = (f"never answered (the client gave up after {waited / NS:.1f} s)" if unanswered == len(joins) else
                f"answered after {waited / NS:.1f} s" + (f", {unanswered:,} never answered" if unanswered else ""))
        summary = (f"JoinGroup of {member or 'a new member'} ({client_named(client_id)}) in group {group_id} held "
                   f"past its rebalance timeout of {timeout / 1000:.1f} s: {what}")
        out.append(finding("join_stuck", "warning", summary, start, end, [ev for *_, ev in joins],
                           group_id=group_id, member_id=member or None, client_id=client_id,
                           waited_ms=ms(end - start), rebalance_timeout_ms=timeout, count=len(joins),
                           waited_s=round((end - start) / NS, 3)))  # (deprecated)
    return out


def _wait_end(analysis, wait: tuple, alive_until: dict, last_ns) -> int | None:
    """When a JoinGroup stopped waiting: its answer, else the client's next JoinGroup or its last moment
    on the wire, else the capture's end."""
    _, client_id, client, ts, latency, _, _ = wait
    if latency is not None:
        return ts + latency
    key = (host_of(client or ""), client_id)
    ends = [t for t in (analysis.traffic.next_moment((key[0], client_id or ""), "JoinGroup", ts),
                        alive_until.get(key)) if t is not None and t > ts]
    return min(ends) if ends else last_ns


def _formed(group: Group) -> list[tuple]:
    """(number, generation, start, its member ids, their connections) of each generation with members: made
    once per group, so each wait checks a generation in constant time."""
    out = []
    for number, generation, start in timeline(group):
        if generation.members:
            clients = {(group.members.get(m) or Member()).client for m in generation.members}
            out.append((number, generation, start, generation.members, clients))
    return out


def _passed_over(analysis, group: Group, alive_until: dict, last_ns) -> dict[tuple, list]:
    """(member, client id, client) -> [(wait, end, generations formed without it)] of the group's JoinGroup
    waits that generations passed over: neither the member nor a member on its connection (it joined again
    under a new id) was in them."""
    out: dict[tuple, list] = {}
    formed = _formed(group)
    for wait in group.waits.values():
        member, client_id, client, ts = wait[:4]
        end = _wait_end(analysis, wait, alive_until, last_ns)
        member = member or _member_next(group, client or "", client_id, ts)
        passed = [(n, g) for n, g, start, members, clients in formed
                  if start >= ts + LEFT_BEHIND_GRACE_S * NS and (end is None or start < end)
                  and member not in members and client not in clients]
        if passed:
            out.setdefault((member, client_id, client), []).append((wait, end, passed))
    return out


def _left_behind(analysis, group_id: str, group: Group, alive_until: dict, last_ns) -> list[dict]:
    out = []
    passed_over = _passed_over(analysis, group, alive_until, last_ns)
    for (member, client_id, client), waits in sorted(passed_over.items(), key=lambda kv: (kv[1][0][0][3], str(kv[0]))):
        numbers = sorted({n for _, _, passed in waits for n, _ in passed})
        start = min(w[3] for w, _, _ in waits)
        ends = [end for _, end, _ in waits if end is not None]
        end = max(ends) if ends else None
        joins = [{"ts_ns": w[3], "correlation_id": w[6][3], "answered_ms": ms(w[4]),
                  "ts": seconds(w[3]), "answered_s": None if w[4] is None else round(w[4] / NS, 3)}  # (deprecated)
                 for w, _, _ in waits]
        answered = [w[4] for w, _, _ in waits if w[4] is not None]  # how long each answered one waited, ns
        what = ", ".join(f"corr {j['correlation_id']}" for j in joins)
        how = ("never answered" if not answered else
               f"answered after {round(max(answered) / NS, 3):.1f} s" if len(answered) == len(joins) else
               f"{len(joins) - len(answered)} never answered")
        shown = ", ".join(map(str, numbers[:MAX_PASSED])) + (f" and {len(numbers) - MAX_PASSED} more"
                                                              if len(numbers) > MAX_PASSED else "")
        summary = (f"member {member or 'a new member'} ({client_id}, {client}) of group {group_id} left waiting in a "
                   f"join while the group moved on to generation {numbers[-1]}: its JoinGroup ({what}) {how}; "
                   f"generation{'s' if len(numbers) > 1 else ''} {shown} formed without it")
        evidence = [w[6] for w, _, _ in waits] + [g.evidence for _, _, passed in waits for _, g in passed]
        timeouts = [w[5] for w, _, _ in waits if w[5] is not None]
        out.append(finding("join_left_behind", "warning", summary, start, end, evidence, group_id=group_id,
                           member_id=member, client_id=client_id, client=client, joins=joins,
                           generations=numbers[:MAX_PASSED],
                           waited_ms=None if end is None else ms(end - start),
                           rebalance_timeout_ms=max(timeouts) if timeouts else None,
                           waited_s=None if end is None else round((end - start) / NS, 3)))  # (deprecated)
    return out


def _storms(group_id: str, group: Group) -> list[dict]:
    gens = timeline(group)
    runs: list[list] = []
    for item in gens:
        if runs and item[2] - runs[-1][-1][2] <= STORM_GAP_S * NS:
            runs[-1].append(item)
        else:
            runs.append([item])
    out = []
    for run in runs:
        clients = {(m.client_id, host_of(m.client or "")) for _, g, _ in run for m in
                   (group.members.get(member_id) for member_id in g.members) if m is not None}
        if len(run) < max(STORM_GENERATIONS, 2 * len(clients)):
            continue
        first, last = run[0], run[-1]
        busy_ns = sum(rebalance_ns(g) for _, g, _ in run)
        busy = round(sum(rebalance_s(g) for _, g, _ in run), 3)
        end = last[1].sync_ns if last[1].sync_ns is not None else last[2]
        summary = (f"group {group_id} rebalanced {count(len(run), 'time')} in {(end - first[2]) / NS:.1f} s "
                   f"(generations {first[0]}..{last[0]}), {busy:.1f} s of it rebalancing")
        out.append(finding("rebalance_storm", "warning", summary, first[2], end, [g.evidence for _, g, _ in run],
                           group_id=group_id, generations=len(run), rebalancing_ms=ms(busy_ns), clients=len(clients),
                           rebalancing_s=busy))  # (deprecated)
    return out


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    out = []
    alive_until = alive_index(analysis) if any(g.stuck.items or g.waits.items
                                               for g in analysis.groups.groups.values()) else {}
    for group_id, group in sorted(analysis.groups.groups.items()):
        out += _member_expired(group_id, group, names, last_ns)
        out += _join_stuck(analysis, group_id, group, alive_until)
        out += _left_behind(analysis, group_id, group, alive_until, last_ns)
        out += _storms(group_id, group)
    return out
