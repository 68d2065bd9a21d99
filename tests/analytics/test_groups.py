"""Consumer groups (`groups` of the stats document) on real recordings, against the clients' own view
(their assignment callbacks, member ids, starts and closes: tests/problems.py), and the merge
guarantee: any split of the exchanges, merged in any order, gives the same groups, findings and changes."""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.analytics import Aggregator, summary_json
from kwire.native.exchange_facts import exchange_row, partition_rows, topic_names
from kwire.analytics.observe import observations
from kwire.pipeline import analyze_files
from tests import problems as P

SLACK_S = 2.0


def _generation_at(group: dict, ts: float) -> dict:
    for g in group["generations"]:
        if g["start"] - SLACK_S <= ts and (g["end"] is None or ts < g["end"]):
            return g
    raise AssertionError(f"no generation at {ts}")


def test_classic_generations_and_assignments_are_the_clients():
    for name in ("member-expired", "rebalance-storm", "clean-classic"):
        group = P.document(name)["groups"]["kwire-app"]
        assert group["protocol"] == "classic"
        assert group["coordinator"] == f"127.0.0.1:{P.first(name, 'mock_cluster')['ports']['1']}"
        for e in P.of(name, "assigned"):
            generation = _generation_at(group, e["ts"])
            (member,) = [m for m in generation["members"] if m["member_id"] == e["member_id"]]
            assert member["client_id"] == e["who"]
            got = {(t, p) for t, ps in member["assignment"].items() for p in ps}
            assert got == P.partitions(e), (name, e)
        numbers = [g["generation"] for g in group["generations"]]
        assert numbers == sorted(numbers)
        assert all(a["end"] == b["start"] for a, b in zip(group["generations"], group["generations"][1:]))


def test_generation_history_is_the_clients():
    """Each generation's assignor, and the members it gained and lost, as the clients' logs and callbacks
    tell them: the JoinGroup responses they logged (generation, protocol, member id) and their closes."""
    for name in ("rebalance-storm", "join-left-behind"):
        group = P.document(name)["groups"]["kwire-app"]
        logged: dict[int, set] = {}
        for who in {e["who"] for e in P.of(name, "started")}:
            for _, line in P.log_lines(name, who, r"JoinGroup response: GenerationId"):
                m = re.search(r"GenerationId (\d+), Protocol (\S+),.* my MemberId (\S+),", line)
                logged.setdefault(int(m.group(1)), set()).add((m.group(2), m.group(3)))
        gens = {g["generation"]: g for g in group["generations"]}
        for number, seen in logged.items():
            assert {gens[number]["protocol_name"]} == {protocol for protocol, _ in seen}
            assert {member for _, member in seen} <= {m["member_id"] for m in gens[number]["members"]}
        for before, after in zip(group["generations"], group["generations"][1:]):
            assert set(after["joined"]) == {m["member_id"] for m in after["members"]} - {m["member_id"] for m in before["members"]}
            assert set(after["gone"]) == {m["member_id"] for m in before["members"]} - {m["member_id"] for m in after["members"]}
            assert 0 < after["rebalance_s"] < after["start"] - before["start"] + SLACK_S
        flaps = [e["member_id"] for e in P.of(name, "assigned", "kwire-flapper")]
        assert flaps and all(any(m in g["joined"] for g in group["generations"][1:]) for m in flaps)


def test_members_are_the_clients():
    for name in ("member-expired", "kip848-expired", "clean-classic", "clean-kip848", "clean-share"):
        group = next(iter(P.document(name)["groups"].values()))
        killed = {e["client_id"] for e in P.of(name, "killed")}
        mine = {e["member_id"]: e["who"] for e in P.of(name, "assigned") + P.of(name, "closed") if e.get("member_id")}
        for member_id, who in mine.items():
            member = group["members"][member_id]
            assert member["client_id"] == who
            assert member["left"] == ("expired" if who in killed else "leave"), (name, member_id)
            assert P.first(name, "started", who)["ts"] - SLACK_S <= member["first_seen"]
        if name == "clean-share":
            assert set(group["members"]) <= set(mine) or len(group["members"]) == 1


def test_kip848_epochs_end_with_the_clients_assignment():
    """KIP-848 callbacks add and remove partitions; what each survivor holds after the member died
    is what the last generation gives it."""
    name = "kip848-expired"
    group = P.document(name)["groups"]["kwire-app"]
    assert group["protocol"] == "consumer"
    held: dict[str, set] = {}
    killed = P.first(name, "killed")
    for e in P.events(name):
        if e["event"] == "assigned":
            held.setdefault(e["member_id"], set()).update(P.partitions(e))
        elif e["event"] == "revoked" and e["ts"] < killed["ts"] + 15:
            held.setdefault(e["member_id"], set()).difference_update(P.partitions(e))
    last = [g for g in group["generations"] if g["start"] > killed["ts"]][0]
    for member in last["members"]:
        got = {(t, p) for t, ps in member["assignment"].items() for p in ps}
        assert got == held[member["member_id"]]


def test_commits_are_the_last_answered_offset_commits():
    name = "clean-classic"
    expected: dict = {}
    for ex in analyze_files([str(P.capture(name))]):
        if ex.api == "OffsetCommit" and ex.status == "paired":
            refused = {(t["Name"], p["PartitionIndex"]) for t in ex.response["Topics"] for p in t["Partitions"]
                       if p["ErrorCode"]}
            for topic in ex.request["Topics"]:
                for part in topic["Partitions"]:
                    if (topic["Name"], part["PartitionIndex"]) in refused:
                        continue
                    key = (topic["Name"], str(part["PartitionIndex"]))
                    if key not in expected or ex.ts_ns >= expected[key][0]:
                        expected[key] = (ex.ts_ns, part["CommittedOffset"])
    commits = P.document(name)["groups"]["kwire-app"]["commits"]
    assert {(t, p): o for t, parts in commits.items() for p, o in parts.items()} == \
        {k: o for k, (_, o) in expected.items()}


def test_share_group():
    group = P.document("share-redelivery")["groups"]["kwire-workers"]
    assert group["protocol"] == "share"
    (generation,) = [g for g in group["generations"] if g["members"]][-1:]
    assert generation["members"][0]["client_id"] == "kwire-share-consumer"
    assert generation["members"][0]["assignment"] == {"kwire-tasks": [0]}


def _facts(name: str) -> list[tuple]:
    return [(exchange_row(ex), partition_rows(ex), topic_names(ex), observations(ex))
            for ex in analyze_files([str(P.capture(name))])]


FACTS = {name: _facts(name) for name in ("member-expired", "error-burst", "share-redelivery", "txn-stall",
                                         "join-left-behind", "member-removed")}


def _doc(facts) -> dict:
    agg = Aggregator()
    for f in facts:
        agg.add(*f)
    doc = agg.document()
    return {"groups": doc["groups"], "findings": doc["findings"], "changes": doc["changes"]}


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(sorted(FACTS)), st.integers(2, 6), st.integers(0, 2**32))
def test_any_split_and_order_gives_the_same_groups_findings_and_changes(name, parts, seed):
    facts = FACTS[name]
    whole = summary_json(_doc(facts))
    rng = random.Random(seed)
    shuffled = list(facts)
    rng.shuffle(shuffled)
    aggs = [Aggregator() for _ in range(parts)]
    for f in shuffled:
        aggs[rng.randrange(parts)].add(*f)
    rng.shuffle(aggs)
    merged = aggs[0]
    for other in aggs[1:]:
        merged.merge(other)
    doc = merged.document()
    assert summary_json({"groups": doc["groups"], "findings": doc["findings"], "changes": doc["changes"]}) == whole
