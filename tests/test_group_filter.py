"""`--group G` (kwire.group_filter): the group's coordinator traffic and its members' fetches and
commits, the same through inspect, stats (with and without worker processes) and live's learning."""

from __future__ import annotations

import json
import pickle

from click.testing import CliRunner

from kwire.cli.main import cli
from kwire.group_filter import GroupFilter, group_members, names_group
from kwire.live.state import DashboardState
from kwire.capture.files import read_captures
from kwire.pipeline import Pipeline, analyze_files
from tests import problems as P

NAME = "member-expired"


def _run(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_stats_group_keeps_the_group_and_its_members_fetches():
    consumers = {e["who"] for e in P.of(NAME, "started")}  # the clients that joined, in their own words
    doc = json.loads(_run("stats", "--json", "--no-summary", "--group", "kwire-app", str(P.capture(NAME))).stdout)
    assert set(doc["client_ids"]) == consumers
    assert "Produce" not in doc["apis"] and doc["apis"]["Fetch"]["exchanges"] > 0
    assert {"JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit"} <= set(doc["apis"])
    assert [f["kind"] for f in doc["findings"]] == ["member_expired"]
    whole = P.document(NAME)
    fetches = sum(f["exchanges"] for c, f in whole["client_ids"].items() if c in consumers) - \
        sum(f["exchanges"] for c, f in doc["client_ids"].items())
    assert fetches >= 0  # the members' Metadata and ApiVersions are not the group's
    jobs = json.loads(_run("stats", "--json", "--no-summary", "-j", "2", "--group", "kwire-app",
                           str(P.capture(NAME))).stdout)
    assert jobs == doc
    none = json.loads(_run("stats", "--json", "--no-summary", "--group", "nobody", str(P.capture(NAME))).stdout)
    assert none["totals"]["exchanges"] == 0 and none["groups"] == {} and none["findings"] == []


def test_inspect_group_lines_all_belong():
    lines = [json.loads(line) for line in _run("inspect", "--json", "--no-summary", "--group", "kwire-app",
                                               str(P.capture(NAME))).stdout.splitlines()]
    doc = json.loads(_run("stats", "--json", "--no-summary", "--group", "kwire-app", str(P.capture(NAME))).stdout)
    assert len(lines) == doc["totals"]["exchanges"]
    for line in lines:
        assert line["api"] in ("Fetch", "ListOffsets") or (line["request"] or {}).get("GroupId") == "kwire-app" \
            or line["api"] in ("FindCoordinator", "OffsetFetch")


def test_live_learns_the_members_as_a_pre_pass_reads_them():
    path = str(P.capture(NAME))
    static = group_members([path], "kwire-app")
    learning = GroupFilter("kwire-app", learn=True)
    assert [static(ex) for ex in analyze_files([path])] == [learning(ex) for ex in analyze_files([path])]
    assert learning.members == static.members
    state = DashboardState("replay", path, keep=GroupFilter("kwire-app", learn=True))
    pipeline = Pipeline()
    for packet in read_captures([path]):
        state.add_exchanges(pipeline.feed(packet))
    state.add_exchanges(pipeline.finish())
    doc = json.loads(_run("stats", "--json", "--no-summary", "--group", "kwire-app", path).stdout)
    assert state.exchanges == doc["totals"]["exchanges"]


def test_filter_pickles_and_names_groups_where_requests_do():
    keep = pickle.loads(pickle.dumps(GroupFilter("g", {("127.0.0.1", "c")})))
    assert keep.members == {("127.0.0.1", "c")} and keep.resolved

    class Ex:
        api, api_key, api_version, client, client_id = "FindCoordinator", 10, 4, "127.0.0.1:1", "c"
        request = {"KeyType": 1, "Key": "g"}  # a transactional id, not a group

    assert not names_group(Ex, "g")
    Ex.request = {"KeyType": 0, "CoordinatorKeys": ["x", "g"]}
    assert names_group(Ex, "g")
    Ex.api, Ex.api_key, Ex.api_version = "OffsetFetch", 9, 8
    Ex.request = {"Groups": [{"GroupId": "g", "Topics": None}]}
    assert names_group(Ex, "g")
    Ex.api, Ex.api_key, Ex.api_version, Ex.request = "DeleteGroups", 42, 2, {"GroupsNames": ["x", "g"]}
    assert names_group(Ex, "g")
    Ex.api, Ex.api_key, Ex.api_version = "DescribeShareGroupOffsets", 90, 0
    Ex.request = {"Groups": [{"GroupId": "g", "Topics": None}]}
    assert names_group(Ex, "g")  # an api added after the filter was written: found by its marks


def test_group_apis_come_from_the_marks_and_member_apis_exist():
    from kwire.group_filter import MEMBER_APIS, group_api_keys
    from kwire.kafka.apis import API_BY_NAME
    keys = group_api_keys()
    old = {8, 9, 10, 11, 12, 13, 14, 15, 25, 28, 42, 47, 68, 69, 76, 77, 78, 79}  # the list this replaced
    assert old <= keys and {88, 89, 90, 91, 92} <= keys and not {0, 1, 3, 18} & keys
    assert all(API_BY_NAME[name.lower()].key in keys for name in MEMBER_APIS)
