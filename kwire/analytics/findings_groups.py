"""Findings about consumer groups: member_expired, join_stuck, rebalance_storm.

- member_expired {group_id, member_id, client_id, partitions, unowned_s, reassigned}: a member that
  stopped sending without leaving while a later generation started without it
  (kwire.analytics.groups.expired). start: its last request; end: the moment the last of its
  partitions was given to another member (or the end of the capture, with reassigned false);
  unowned_s: end - start. Evidence: its last request and the answers that handed its partitions on.
- join_stuck {group_id, member_id, client_id, waited_s, rebalance_timeout_ms, count}: JoinGroups
  answered after their rebalance timeout (RebalanceTimeoutMs, SessionTimeoutMs before v1), or never
  answered although the client was still talking a rebalance timeout later. waited_s: until the
  answer, or until the client's next JoinGroup (it gave up), else the rebalance timeout. member_id:
  the one the JoinGroup named, or for a new member the one the client got next in that group.
- rebalance_storm {group_id, generations, rebalancing_s, clients}: at least STORM_GENERATIONS
  generations, each starting within STORM_GAP_S of the one before, and at least twice as many as the
  clients (client id and host) in them: a client joining and leaving once accounts for two; more
  means members came and went again and again. rebalancing_s adds up each generation's
  rebalance: first JoinGroup to last SyncGroup answer (classic), or first to last member reaching
  the epoch (KIP-848 and share groups).
"""

from __future__ import annotations

from kwire.analytics.findings import client_named, finding
from kwire.counts import count
from kwire.analytics.groups import Group, expired, timeline
from kwire.analytics.traffic import host_of

STORM_GENERATIONS = 5
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
        unowned = round((end - went) / NS, 3) if end is not None and parts else 0.0
        plist = _named(parts, names)
        summary = (f"member {member_id} ({client_named(member.client_id)}) of group {group_id} stopped without "
                   f"leaving; generation {next_gen} started without it" +
                   (f"; its partitions {_text(plist)} had no owner for {unowned:.1f} s" if parts else ""))
        out.append(finding("member_expired", "warning", summary, went, end,
                           [member.last_evidence] + [ev for _, ev in sorted(handed.values())[:5]],
                           group_id=group_id, member_id=member_id, client_id=member.client_id,
                           partitions=plist, unowned_s=unowned, reassigned=reassigned))
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
                           waited_s=round((end - start) / NS, 3), rebalance_timeout_ms=timeout, count=len(joins)))
    return out


def _rebalance_s(generation) -> float:
    starts = [a for a, _ in generation.members.values()]
    begin = generation.join_ns if generation.join_ns is not None else generation.start_ns
    done = generation.sync_ns if generation.sync_ns is not None else (max(starts) if starts else None)
    if begin is None or done is None or done < begin:
        return 0.0
    return (done - begin) / NS


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
        busy = round(sum(_rebalance_s(g) for _, g, _ in run), 3)
        end = last[1].sync_ns if last[1].sync_ns is not None else last[2]
        summary = (f"group {group_id} rebalanced {count(len(run), 'time')} in {(end - first[2]) / NS:.1f} s "
                   f"(generations {first[0]}..{last[0]}), {busy:.1f} s of it rebalancing")
        out.append(finding("rebalance_storm", "warning", summary, first[2], end, [g.evidence for _, g, _ in run],
                           group_id=group_id, generations=len(run), rebalancing_s=busy, clients=len(clients)))
    return out


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    out = []
    alive_until = alive_index(analysis) if any(g.stuck.values() for g in analysis.groups.groups.values()) else {}
    for group_id, group in sorted(analysis.groups.groups.items()):
        out += _member_expired(group_id, group, names, last_ns)
        out += _join_stuck(analysis, group_id, group, alive_until)
        out += _storms(group_id, group)
    return out
