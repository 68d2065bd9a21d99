"""Findings of the rules read over topics, committed offsets and groups (kwire.analytics.rules):
validate_only_created, offset_metadata_not_kept, consumer_group_describe_classic. One protocol_violation per rule
and broker (the broker that answered the exchange that breaks it), from kwire.analytics.rules_history at the
document's end; the evidence names the two exchanges of each instance (the one that set the expectation, the one
that broke it). Silent wherever a dropped item (the histories keep the first ones) could have been between.
"""

from __future__ import annotations

from kwire.analytics.findings_rules import rule_finding
from kwire.analytics.rules_history import MAX_COMMITS, MAX_EVENTS
from kwire.counts import count as counted


def _ms(ns: int) -> str:
    return f"{ns / 1e6:,.1f} ms" if ns < 10**9 else f"{ns / 1e9:,.2f} s"


def _first_exists(topic, after: int):
    """The first answer saying the topic exists, asked after `after`, or None (also when one may be dropped)."""
    for (asked, _), (answered, ev) in topic.exists.items:
        if asked > after:
            return asked, answered, ev
    return None


def _validated(history) -> list[tuple]:
    found = []
    for name, topic in sorted(history.topics.items()):
        for (answered, _), ev in topic.validated.items:
            seen = _first_exists(topic, answered)
            if seen is None:
                continue
            asked, seen_at, seen_ev = seen
            makers = [m for m in (topic.created, topic.auto) if m is not None and m[0] < seen_at]
            if makers:
                continue
            found.append((ev[2], f"{name}: validate-only CreateTopics answered ErrorCode 0, then {seen_ev[4]} "
                          f"(correlation id {seen_ev[3]}) said it exists {_ms(asked - answered)} later, no create "
                          f"of it seen", ev, seen_ev, False))
            break
    return found


def _before(commits: list, asked: int, answered: int):
    """The last commit answered before the read was asked, or None when another may have applied meanwhile."""
    last = None
    for (sent, _), (done, what, offset, metadata, ev) in commits:
        if sent >= answered:
            break
        if done is None or done > asked:
            return None  # unanswered, or answered while the read was asked
        if last is None or done > last[0]:
            last = (done, what, offset, metadata, ev)
    return last


def _shown(metadata) -> str:
    return "null" if metadata is None else repr(metadata)


def _metadata(history) -> list[tuple]:
    found = []
    for (group, topic, partition), part in sorted(history.offsets.items(), key=lambda kv: str(kv[0])):
        commits = part.commits.items
        full = len(commits) >= MAX_COMMITS
        for (asked, _), (answered, offset, metadata, ev) in part.reads.items:
            if full and commits[-1][0][0] < answered:
                break  # a commit past the first MAX_COMMITS may be between
            last = _before(commits, asked, answered)
            if last is None or last[2] != offset or last[3] is None or last[3] == metadata:
                continue
            if last[1] == "txn_commit" and any(c[1][2] == offset for c in commits if c[0][0] < last[4][0]):
                continue
            found.append((ev[2], f"{group} {topic}[{partition}]: committed offset {offset} with metadata "
                          f"{_shown(last[3])}, OffsetFetch answered it with {_shown(metadata)}", last[4], ev,
                          last[3] == "" and metadata is None))
            break
    return found


def _described(history) -> list[tuple]:
    found = []
    for group, entry in sorted(history.groups.items()):
        said, joins = entry.said.items, entry.joins.items
        for (asked, _), (answered, state, ev) in entry.described.items:
            if len(said) >= MAX_EVENTS and said[-1][0][0] < asked:
                break
            told = [(at, kind, s_asked, s_ev) for (at, _), (kind, s_asked, s_ev) in said if at <= asked]
            if not told or told[-1][1] != "classic":
                continue
            since = told[-1][2]
            if (len(joins) >= MAX_EVENTS and joins[-1][0][0] < answered) or any(
                    since <= at <= answered for (at, _), _ in joins):
                continue
            found.append((ev[2], f"{group}: ListGroups said GroupType classic, then ConsumerGroupDescribe "
                          f"answered ErrorCode 0 (GroupState {state!r}) where Kafka answers GROUP_ID_NOT_FOUND",
                          told[-1][3], ev, False))
            break
    return found


_SAID = {"validate_only_created": ("CreateTopics", "created {n} it was only asked to validate (validateOnly)"),
         "offset_metadata_not_kept": ("OffsetFetch", "answered OffsetFetch without the metadata committed ({n})"),
         "consumer_group_describe_classic": ("ConsumerGroupDescribe",
                                             "answered ConsumerGroupDescribe for {n}, not consumer-protocol groups")}
_WHAT = {"validate_only_created": "topic", "offset_metadata_not_kept": "partition",
         "consumer_group_describe_classic": "classic group"}


def find(analysis) -> list[dict]:
    history, out = analysis.rules.history, []
    for rule, items in (("validate_only_created", _validated(history)), ("offset_metadata_not_kept",
                        _metadata(history)), ("consumer_group_describe_classic", _described(history))):
        by_broker: dict[str, list] = {}
        for broker, detail, ev, broke_ev, harmless in items:
            by_broker.setdefault(broker, []).append((detail, ev, broke_ev, harmless))
        api, said = _SAID[rule]
        for broker, found in sorted(by_broker.items()):
            detail = found[0][0]
            summary = f"broker {broker} {said.format(n=counted(len(found), _WHAT[rule]))}; first: {detail}"
            evidence = [e for _, ev, broke, _ in found for e in (ev, broke)]
            times = [e[0] for e in evidence]
            made = rule_finding(rule, "broker", summary, min(times), max(times), evidence, api=api,
                                count=len(found), brokers=[broker], detail=detail)
            if all(f[3] for f in found):  # only "" read back as null: Kafka's clients read both as no metadata
                made["severity"] = "info"
                made["summary"] += " (empty metadata read back as null: harmless to Kafka's own clients)"
            out.append(made)
    return out
