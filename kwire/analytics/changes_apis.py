"""One reader per admin api: (exchange, request Body) -> a change entry (kwire.analytics.changes_read).

Each reader names the resources the request touched, as small dicts ({"type": "topic", "name": ...}
plus what was set), and each resource's result from the answer, into a Resources (which keeps what
the change's bounds keep and counts the rest). Field names are Kafka's, read through the schemas' marks
(kwire.analytics.changes_body): enum fields hold names there. A request's arrays are read an element at
a time (`items`, `values`): every element, those a request past kwire's entries bound left out too.
`READERS`: api -> Reader (the reader, the operation and the destructive kind an api's request that did
not decode is listed with, and whether only its body can tell it is a change at all).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from kwire.analytics.changes_body import Body
from kwire.analytics.changes_read import (MARKER_SENDER, ADMIN_REASON, MAX_RESOURCES, NOT_IN_ANSWER, Answer, Resources,
                                         code_result, entry, first_error)
from kwire.model import PAIRED, Exchange
from kwire.outcomes import DECODED


def _items(body: dict, key: str) -> list[dict]:
    return [e for e in body.get(key) or () if type(e) is dict]


def _configs(configs, with_operation: bool) -> list[dict]:
    out = []
    for c in configs or ():
        if type(c) is dict:
            out.append({"name": c.get("Name"), "operation": c.get("ConfigOperation") if with_operation else "SET",
                        "value": c.get("Value")})
    return out


def _create_topics(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_name = answer.by("Topics", lambda e: e.get("Name"))
    out = Resources()
    for t in req.items("Topics"):
        res = {"type": "topic", "name": t.get("Name"), "partitions": t.get("NumPartitions"),
               "replication_factor": t.get("ReplicationFactor")}
        assignments = {str(a.get("PartitionIndex")): a.get("BrokerIds") for a in _items(t, "Assignments")}
        if assignments:
            res["assignments"] = assignments
        configs = {c["name"]: c["value"] for c in _configs(t.get("Configs"), False) if type(c["name"]) is str}
        if configs:
            res["configs"] = configs
        got = by_name.get(t.get("Name"))
        out.add(res, answer.of(got and got.get("ErrorCode"), got is None, "Topics"))
    return entry(ex, "create_topics", out, None, req)


def _delete_topics(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_name = answer.by("Responses", lambda e: e.get("Name"))
    by_id = answer.by("Responses", lambda e: str(e.get("TopicId")))
    out = Resources()

    def add(res: dict) -> None:
        got = by_name.get(res["name"]) if res["name"] is not None else by_id.get(res.get("topic_id"))
        if got is not None and res["name"] is None and got.get("Name"):
            res["name"] = got.get("Name")
        out.add(res, answer.of(got and got.get("ErrorCode"), got is None, "Responses"))

    for name in req.values("TopicNames"):
        if name is not None:
            add({"type": "topic", "name": name})
    for t in req.items("Topics"):
        res = {"type": "topic", "name": t.get("Name")}
        if t.get("Name") is None:
            res["topic_id"] = str(t.get("TopicId"))
        add(res)
    return entry(ex, "delete_topics", out, "topic_deleted", req)


def _create_partitions(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_name = answer.by("Results", lambda e: e.get("Name"))
    out = Resources()
    for t in req.items("Topics"):
        got = by_name.get(t.get("Name"))
        out.add({"type": "topic", "name": t.get("Name"), "partitions": t.get("Count")},
                answer.of(got and got.get("ErrorCode"), got is None, "Results"))
    return entry(ex, "create_partitions", out, None, req)


def _alter_configs(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_key = answer.by("Responses", lambda e: (e.get("ResourceType"), e.get("ResourceName")))
    incremental = ex.api == "IncrementalAlterConfigs"
    out = Resources()
    for r in req.items("Resources"):
        kind = r.get("ResourceType")
        got = by_key.get((kind, r.get("ResourceName")))
        out.add({"type": str(kind).lower() if type(kind) is str else kind, "name": r.get("ResourceName"),
                 "configs": _configs(r.get("Configs"), incremental)},
                answer.of(got and got.get("ErrorCode"), got is None, "Responses"))
    return entry(ex, "incremental_alter_configs" if incremental else "alter_configs", out, None, req)


def binding(acl: dict, suffix: str = "") -> dict:
    """An ACL binding (or a filter, `suffix` "Filter") as a resource."""
    pattern = acl.get("ResourcePatternType", acl.get("PatternType" + suffix, acl.get("PatternType")))
    return {"type": "acl", "resource_type": acl.get("ResourceType" + suffix, acl.get("ResourceType")),
            "resource_name": acl.get("ResourceName" + suffix, acl.get("ResourceName")),
            "pattern": pattern, "principal": acl.get("Principal" + suffix, acl.get("Principal")),
            "host": acl.get("Host" + suffix, acl.get("Host")), "operation": acl.get("Operation"),
            "permission": acl.get("PermissionType")}


def allows_all(acl: dict) -> bool:
    """An ALLOW binding for every principal, or for every operation on every resource of a type."""
    return acl.get("permission") == "ALLOW" and (acl.get("principal") == "User:*" or (
        acl.get("operation") == "ALL" and acl.get("resource_name") == "*"))


def _create_acls(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    got = answer.items("Results")  # one per creation, in order
    out = Resources()
    wide = False
    for creation in req.items("Creations"):
        res = binding(creation)
        alarm = allows_all(res)
        wide = wide or alarm
        mine = next(got, None)
        out.add(res, answer.of(mine and mine.get("ErrorCode"), mine is None, "Results"), alarm)
    return entry(ex, "create_acls", out, "acl_allow_all" if wide else None, req)


def _delete_acls(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    got = answer.items("FilterResults")  # one per filter, in order
    out = Resources()
    for f in req.items("Filters"):
        res = binding(f, "Filter")
        res["type"] = "acl_filter"
        mine = next(got, None)
        if mine is not None:
            res["deleted"] = [binding(m) for m in _items(mine, "MatchingAcls")]
        out.add(res, answer.of(mine and mine.get("ErrorCode"), mine is None, "FilterResults"))
    return entry(ex, "delete_acls", out, "acl_removed", req)


def _scram(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_user = answer.by("Results", lambda e: e.get("User"))
    out = Resources()
    for action, key in (("delete", "Deletions"), ("upsert", "Upsertions")):
        for c in req.items(key):
            res = {"type": "user", "name": c.get("Name"), "mechanism": c.get("Mechanism"), "action": action}
            if action == "upsert":
                res["iterations"] = c.get("Iterations")
            got = by_user.get(c.get("Name"))
            out.add(res, answer.of(got and got.get("ErrorCode"), got is None, "Results"))
    return entry(ex, "alter_scram_credentials", out, "credentials_changed", req)


def _entity(components) -> dict:
    return {str(c.get("EntityType")): c.get("EntityName") if c.get("EntityName") is not None else "(default)"
            for c in components or () if type(c) is dict}


def _quotas(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_entity = answer.by("Entries", lambda e: tuple(sorted(_entity(e.get("Entity")).items())))
    out = Resources()
    for e in req.items("Entries"):
        entity = _entity(e.get("Entity"))
        ops = {str(o.get("Key")): ("(removed)" if o.get("Remove") else o.get("Value")) for o in _items(e, "Ops")}
        got = by_entity.get(tuple(sorted(entity.items())))
        out.add({"type": "quota", "entity": entity, "quotas": ops},
                answer.of(got and got.get("ErrorCode"), got is None, "Entries"))
    return entry(ex, "alter_client_quotas", out, None, req)


def _by_topic(answer: Answer, array: str, name: str = "Name", parts: str = "Partitions") -> dict:
    """A per-partition answer as {topic: result}: the first error of the topic's partitions."""
    return {t.get(name): first_error(t.get(parts)) for t in answer.items(array)}


def _offsets(ex: Exchange, req: Body, operation: str, name: str, parts_key: str, offset_key: str | None,
             response_array: str, response_name: str) -> dict:
    answer = Answer(ex)
    errors = _by_topic(answer, response_array, response_name)
    out = Resources()
    for t in req.items("Topics"):
        res = {"type": "group_offsets", "group": req.get("GroupId"), "topic": t.get(name)}
        parts = _items(t, parts_key)
        if offset_key:
            res["offsets"] = {str(p.get("PartitionIndex")): p.get(offset_key) for p in parts}
        elif parts:
            res["partitions"] = [p.get("PartitionIndex") for p in parts]
        out.add(res, answer.of(errors.get(t.get(name)), t.get(name) not in errors, response_array))
    return entry(ex, operation, out, "offsets_moved", req)


def _offset_commit(ex: Exchange, req: Body) -> dict | None:
    """A commit with no member id and generation -1 (v1+) sets the group's offsets from outside it: a tool's
    change, unless its client consumes (a consumer that assigns itself its partitions commits its progress so).
    A member's commit is a change only if that member is a tool's transient one (KafkaJS admin.setOffsets joins
    the group, commits and leaves, fetching nothing). One exchange can tell neither: the entry says as whom it
    commits (`commits_as`: group and member id, or group, "" and client id for no member), and
    kwire.analytics.changes decides on the whole capture."""
    if ex.api_version is None or ex.api_version < 1:
        return None
    member = req.get("MemberId")
    if req.get("GenerationIdOrMemberEpoch") == -1 and not member:
        change = _offsets(ex, req, "set_group_offsets", "Name", "Partitions", "CommittedOffset", "Topics", "Name")
        change["commits_as"] = (req.get("GroupId"), "", ex.client_id if type(ex.client_id) is str else "")
        return change
    if not member or type(member) is not str:
        return None
    if ex.status == PAIRED and _whole(ex.request_outcome) and _whole(ex.response_outcome) and \
            type(ex.request) is dict and type(ex.response) is dict:
        # consumers commit often: what every one of their commits costs is this, the entry made only of the
        # commits kwire.analytics.changes finds were a tool's (member_commit_entry)
        return {"commits_as": (req.get("GroupId"), member), "ts_ns": ex.ts_ns, "client": ex.client,
                "broker": ex.broker, "correlation_id": ex.correlation_id, "client_id": ex.client_id,
                "member_commit": (ex.api, ex.request.get("GroupId"), ex.request.get("Topics"),
                                  ex.response.get("Topics"))}
    change = _offsets(ex, req, "set_group_offsets", "Name", "Partitions", "CommittedOffset", "Topics", "Name")
    change["commits_as"] = (req.get("GroupId"), member)
    return change


def _whole(outcome) -> bool:
    return outcome is not None and outcome.kind == DECODED


def member_commit_entry(change: dict) -> dict:
    """The change entry of a member's commit `_offset_commit` kept short (its "member_commit": api, group, the
    request's and the answer's Topics, both decoded whole): what `_offsets` makes of the exchange."""
    if "member_commit" not in change:
        return change
    api, group, topics, answered = change["member_commit"]
    errors = {t.get("Name"): first_error(t.get("Partitions")) for t in _items({"Topics": answered}, "Topics")}
    out = Resources()
    for t in _items({"Topics": topics}, "Topics"):
        name = t.get("Name")
        offsets = {str(p.get("PartitionIndex")): p.get("CommittedOffset") for p in _items(t, "Partitions")}
        out.add({"type": "group_offsets", "group": group, "topic": name, "offsets": offsets},
                code_result(errors[name]) if name in errors else NOT_IN_ANSWER)
    return {"ts_ns": change["ts_ns"], "client": change["client"], "broker": change["broker"],
            "client_id": change["client_id"], "correlation_id": change["correlation_id"], "api": api,
            "operation": "set_group_offsets", "resources": out.kept, "result": out.results, "kind": "offsets_moved",
            "makes_kind": out.alarms, "resource_count": out.count, "unlisted_results": dict(sorted(out.unlisted.items())),
            "request_outcome": None, "entries_not_read": 0, "commits_as": change["commits_as"]}


def _txn_offset_commit(ex: Exchange, req: Body) -> dict | None:
    """A transactional producer's commit of a group's offsets (sendOffsetsToTransaction) is a change when it
    carries a bare group metadata (v3+: no member id, generation -1): it sets the offsets from outside the
    group. With a member's metadata it is that member's commit (exactly-once processing); before v3 the
    request does not say."""
    if ex.api_version is None or ex.api_version < 3:
        return None
    if req.get("GenerationIdOrMemberEpoch") != -1 or req.get("MemberId"):
        return None
    return _offsets(ex, req, "set_group_offsets", "Name", "Partitions", "CommittedOffset", "Topics", "Name")


def _offset_delete(ex: Exchange, req: Body) -> dict:
    return _offsets(ex, req, "delete_group_offsets", "Name", "Partitions", None, "Topics", "Name")


def _share_offsets(ex: Exchange, req: Body) -> dict:
    if ex.api == "AlterShareGroupOffsets":
        return _offsets(ex, req, "set_share_group_offsets", "TopicName", "Partitions", "StartOffset",
                        "Responses", "TopicName")
    answer = Answer(ex)
    errors = {t.get("TopicName"): t.get("ErrorCode") for t in answer.items("Responses")}
    out = Resources()
    for t in req.items("Topics"):
        topic = t.get("TopicName")
        out.add({"type": "group_offsets", "group": req.get("GroupId"), "topic": topic},
                answer.of(errors.get(topic), topic not in errors, "Responses"))
    return entry(ex, "delete_share_group_offsets", out, "offsets_moved", req)


def _delete_groups(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_group = answer.by("Results", lambda e: e.get("GroupId"))
    out = Resources()
    for group in req.values("GroupsNames"):
        out.add({"type": "group", "name": group},
                answer.of(by_group.get(group, {}).get("ErrorCode"), group not in by_group, "Results"))
    return entry(ex, "delete_groups", out, "group_deleted", req)


def _leave_group(ex: Exchange, req: Body) -> dict | None:
    """A LeaveGroup v3+ (its Members array) is an admin's removal when a member is named by instance id
    alone or "removed by an admin"; else it is one only if its client is not one of the members it names,
    which one exchange cannot tell: the entry says whom it names (`removes`: group, member ids), and
    kwire.analytics.changes decides against the members' own connections when the document is made."""
    answer = Answer(ex)
    got = answer.items("Members")  # one per member, in order
    out = Resources()
    by_admin = False
    named: list[str] = []
    for m in req.items("Members"):
        by_admin = by_admin or not m.get("MemberId") or ADMIN_REASON in (m.get("Reason") or "")
        if m.get("MemberId") and len(named) < MAX_RESOURCES:
            named.append(m["MemberId"])
        mine = next(got, None)
        out.add({"type": "group_member", "group": req.get("GroupId"), "member_id": m.get("MemberId") or None,
                 "instance_id": m.get("GroupInstanceId")},
                answer.of(mine and mine.get("ErrorCode"), mine is None, "Members"))
    if not out.count:
        return None  # v0-v2: a member leaving on its own
    change = entry(ex, "remove_group_members", out, None, req)
    if not by_admin:
        change["removes"] = (req.get("GroupId"), tuple(named))
    return change


def _delete_records(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex, None)
    by_topic = answer.by("Topics", lambda e: e.get("Name"))
    out = Resources()
    for t in req.items("Topics"):
        res = {"type": "records", "topic": t.get("Name"),
               "before": {str(p.get("PartitionIndex")): p.get("Offset") for p in _items(t, "Partitions")}}
        got = by_topic.get(t.get("Name"))
        if got is not None:
            res["low_watermarks"] = {str(p.get("PartitionIndex")): p.get("LowWatermark")
                                     for p in _items(got, "Partitions")}
        out.add(res, answer.of(got and first_error(got.get("Partitions")), got is None, "Topics"))
    return entry(ex, "delete_records", out, "records_deleted", req)


def _elect_leaders(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex)
    errors = _by_topic(answer, "ReplicaElectionResults", "Topic", "PartitionResult")
    election = req.get("ElectionType", "PREFERRED")
    out = Resources()
    if req.null("TopicPartitions"):  # every partition
        out.add({"type": "partitions", "topic": "(all)", "election": election},
                answer.of(next((c for c in errors.values() if c), 0)))
        return entry(ex, "elect_leaders", out, None, req)
    for t in req.items("TopicPartitions"):
        topic = t.get("Topic")
        out.add({"type": "partitions", "topic": topic, "partitions": t.get("Partitions"), "election": election},
                answer.of(errors.get(topic), topic not in errors, "ReplicaElectionResults"))
    return entry(ex, "elect_leaders", out, None, req)


def _reassign(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex)
    errors = _by_topic(answer, "Responses")
    out = Resources()
    for t in req.items("Topics"):
        replicas = {str(p.get("PartitionIndex")): (p.get("Replicas") if p.get("Replicas") is not None else "(cancel)")
                    for p in _items(t, "Partitions")}
        topic = t.get("Name")
        out.add({"type": "partitions", "topic": topic, "replicas": replicas},
                answer.of(errors.get(topic), topic not in errors, "Responses"))
    return entry(ex, "alter_partition_reassignments", out, None, req)


def _features(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex)
    by_feature = answer.by("Results", lambda e: e.get("Feature"))
    out = Resources()
    for f in req.items("FeatureUpdates"):
        res = {"type": "feature", "name": f.get("Feature"), "max_version_level": f.get("MaxVersionLevel")}
        res["upgrade_type"] = f.get("UpgradeType", "SAFE_DOWNGRADE" if f.get("AllowDowngrade") else "UPGRADE")
        out.add(res, answer.of(by_feature.get(res["name"], {}).get("ErrorCode"), res["name"] not in by_feature,
                               "Results"))
    return entry(ex, "update_features", out, None, req)


def _principal(kind, name) -> str | None:
    return f"{kind or 'User'}:{name}" if name else None


def _token(ex: Exchange, req: Body) -> dict:
    answer = Answer(ex)
    res: dict = {"type": "delegation_token"}
    if ex.api == "CreateDelegationToken":
        operation = "create_delegation_token"
        res["owner"] = _principal(req.get("OwnerPrincipalType"), req.get("OwnerPrincipalName"))
        res["renewers"] = [_principal(r.get("PrincipalType"), r.get("PrincipalName")) for r in req.items("Renewers")]
        res["max_lifetime_ms"] = req.get("MaxLifetimeMs")
        if answer.get("TokenId"):
            res["token_id"] = answer.get("TokenId")
            res["owner"] = res["owner"] or _principal(answer.get("PrincipalType"), answer.get("PrincipalName"))
    elif ex.api == "RenewDelegationToken":
        operation = "renew_delegation_token"
        res["renew_period_ms"] = req.get("RenewPeriodMs")
    else:
        operation = "expire_delegation_token"
        res["expiry_period_ms"] = req.get("ExpiryTimePeriodMs")
    if answer.get("ExpiryTimestampMs") is not None:
        res["expiry_timestamp_ms"] = answer.get("ExpiryTimestampMs")
    out = Resources()
    out.add(res, answer.of())
    return entry(ex, operation, out, None, req)


def _abort_markers(ex: Exchange, req: Body) -> dict | None:
    if MARKER_SENDER in (ex.client_id or ""):
        return None  # a transaction coordinator's own markers
    answer = Answer(ex, None)
    by_pid = {m.get("ProducerId"): m for m in answer.items("Markers")}
    out = Resources()
    for m in req.items("Markers"):
        if m.get("TransactionResult") is not False:
            continue
        partitions = {str(t.get("Name")): t.get("PartitionIndexes") for t in _items(m, "Topics")}
        got = by_pid.get(m.get("ProducerId"))
        code = got and next((first_error(t.get("Partitions")) for t in _items(got, "Topics")
                             if first_error(t.get("Partitions"))), 0)
        out.add({"type": "transaction", "producer_id": m.get("ProducerId"), "producer_epoch": m.get("ProducerEpoch"),
                 "partitions": partitions}, answer.of(code, got is None, "Markers"))
    return entry(ex, "abort_transaction", out, None, req) if out.count else None


def _unregister(ex: Exchange, req: Body) -> dict:
    out = Resources()
    out.add({"type": "broker", "name": req.get("BrokerId")}, Answer(ex).of())
    return entry(ex, "unregister_broker", out, None, req)


class Reader(NamedTuple):
    read: Callable  # (exchange, request Body) -> change entry or None
    operation: str  # what a request that did not decode is listed as
    kind: str | None  # ... and its destructive kind: what it may have done
    by_body: bool = False  # only the body tells whether it is a change (a tool's commit): undecoded, not listed


READERS = {
    "CreateTopics": Reader(_create_topics, "create_topics", None),
    "DeleteTopics": Reader(_delete_topics, "delete_topics", "topic_deleted"),
    "CreatePartitions": Reader(_create_partitions, "create_partitions", None),
    "AlterConfigs": Reader(_alter_configs, "alter_configs", None),
    "IncrementalAlterConfigs": Reader(_alter_configs, "incremental_alter_configs", None),
    "CreateAcls": Reader(_create_acls, "create_acls", "acl_allow_all"),
    "DeleteAcls": Reader(_delete_acls, "delete_acls", "acl_removed"),
    "AlterUserScramCredentials": Reader(_scram, "alter_scram_credentials", "credentials_changed"),
    "AlterClientQuotas": Reader(_quotas, "alter_client_quotas", None),
    "OffsetCommit": Reader(_offset_commit, "set_group_offsets", "offsets_moved", True),
    "TxnOffsetCommit": Reader(_txn_offset_commit, "set_group_offsets", "offsets_moved", True),
    "OffsetDelete": Reader(_offset_delete, "delete_group_offsets", "offsets_moved"),
    "AlterShareGroupOffsets": Reader(_share_offsets, "set_share_group_offsets", "offsets_moved"),
    "DeleteShareGroupOffsets": Reader(_share_offsets, "delete_share_group_offsets", "offsets_moved"),
    "DeleteGroups": Reader(_delete_groups, "delete_groups", "group_deleted"),
    "LeaveGroup": Reader(_leave_group, "remove_group_members", None, True),
    "DeleteRecords": Reader(_delete_records, "delete_records", "records_deleted"),
    "ElectLeaders": Reader(_elect_leaders, "elect_leaders", None),
    "AlterPartitionReassignments": Reader(_reassign, "alter_partition_reassignments", None),
    "UpdateFeatures": Reader(_features, "update_features", None),
    "CreateDelegationToken": Reader(_token, "create_delegation_token", None),
    "RenewDelegationToken": Reader(_token, "renew_delegation_token", None),
    "ExpireDelegationToken": Reader(_token, "expire_delegation_token", None),
    "WriteTxnMarkers": Reader(_abort_markers, "abort_transaction", None, True),
    "UnregisterBroker": Reader(_unregister, "unregister_broker", None),
}
