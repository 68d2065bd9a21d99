"""One reader per admin api: (exchange, named request) -> a change entry (kwire.analytics.changes_read).

Each reader names the resources the request touched, as small dicts ({"type": "topic", "name": ...}
plus what was set), and each resource's result from the answer. Field names are Kafka's, read from
bodies whose marks are applied (kwire.analytics.changes_read.named): enum fields hold names there.
"""

from __future__ import annotations

from kwire.analytics.changes_read import MARKER_SENDER, ADMIN_REASON, Answer, entry, first_error
from kwire.model import Exchange


def _items(body: dict, key: str) -> list[dict]:
    return [e for e in body.get(key) or () if type(e) is dict]


def _configs(configs, with_operation: bool) -> list[dict]:
    out = []
    for c in configs or ():
        if type(c) is dict:
            out.append({"name": c.get("Name"), "operation": c.get("ConfigOperation") if with_operation else "SET",
                        "value": c.get("Value")})
    return out


def _create_topics(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_name = answer.by("Topics", lambda e: e.get("Name"))
    resources, results = [], []
    for t in _items(req, "Topics"):
        res = {"type": "topic", "name": t.get("Name"), "partitions": t.get("NumPartitions"),
               "replication_factor": t.get("ReplicationFactor")}
        assignments = {str(a.get("PartitionIndex")): a.get("BrokerIds") for a in _items(t, "Assignments")}
        if assignments:
            res["assignments"] = assignments
        configs = {c["name"]: c["value"] for c in _configs(t.get("Configs"), False) if type(c["name"]) is str}
        if configs:
            res["configs"] = configs
        got = by_name.get(t.get("Name"))
        resources.append(res)
        results.append(answer.of(got and got.get("ErrorCode"), got is None))
    return entry(ex, "create_topics", resources, results)


def _delete_topics(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_name = answer.by("Responses", lambda e: e.get("Name"))
    by_id = answer.by("Responses", lambda e: e.get("TopicId"))
    named = [{"type": "topic", "name": n} for n in req.get("TopicNames") or () if n is not None]
    for t in _items(req, "Topics"):
        res = {"type": "topic", "name": t.get("Name")}
        if t.get("Name") is None:
            res["topic_id"] = str(t.get("TopicId"))
        named.append(res)
    results = []
    for res in named:
        got = by_name.get(res["name"]) if res["name"] is not None else by_id.get(res.get("topic_id"))
        if got is None and "topic_id" in res:
            got = next((e for e in by_id.values() if str(e.get("TopicId")) == res["topic_id"]), None)
        if got is not None and res["name"] is None and got.get("Name"):
            res["name"] = got.get("Name")
        results.append(answer.of(got and got.get("ErrorCode"), got is None))
    return entry(ex, "delete_topics", named, results, "topic_deleted")


def _create_partitions(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_name = answer.by("Results", lambda e: e.get("Name"))
    resources, results = [], []
    for t in _items(req, "Topics"):
        resources.append({"type": "topic", "name": t.get("Name"), "partitions": t.get("Count")})
        got = by_name.get(t.get("Name"))
        results.append(answer.of(got and got.get("ErrorCode"), got is None))
    return entry(ex, "create_partitions", resources, results)


def _alter_configs(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_key = answer.by("Responses", lambda e: (e.get("ResourceType"), e.get("ResourceName")))
    incremental = ex.api == "IncrementalAlterConfigs"
    resources, results = [], []
    for r in _items(req, "Resources"):
        kind = r.get("ResourceType")
        resources.append({"type": str(kind).lower() if type(kind) is str else kind, "name": r.get("ResourceName"),
                          "configs": _configs(r.get("Configs"), incremental)})
        got = by_key.get((kind, r.get("ResourceName")))
        results.append(answer.of(got and got.get("ErrorCode"), got is None))
    return entry(ex, "incremental_alter_configs" if incremental else "alter_configs", resources, results)


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
    return acl["permission"] == "ALLOW" and (acl["principal"] == "User:*" or (
        acl["operation"] == "ALL" and acl["resource_name"] == "*"))


def _create_acls(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    got = _items(answer.body or {}, "Results")
    resources = [binding(c) for c in _items(req, "Creations")]
    results = [answer.of(got[i].get("ErrorCode") if i < len(got) else None, i >= len(got))
               for i in range(len(resources))]
    wide = any(allows_all(r) for r in resources)
    return entry(ex, "create_acls", resources, results, "acl_allow_all" if wide else None)


def _delete_acls(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    got = _items(answer.body or {}, "FilterResults")
    resources, results = [], []
    for i, f in enumerate(_items(req, "Filters")):
        res = binding(f, "Filter")
        res["type"] = "acl_filter"
        mine = got[i] if i < len(got) else None
        if mine is not None:
            res["deleted"] = [binding(m) for m in _items(mine, "MatchingAcls")]
        resources.append(res)
        results.append(answer.of(mine and mine.get("ErrorCode"), mine is None))
    return entry(ex, "delete_acls", resources, results, "acl_removed")


def _scram(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_user = answer.by("Results", lambda e: e.get("User"))
    resources, results = [], []
    for action, key in (("delete", "Deletions"), ("upsert", "Upsertions")):
        for c in _items(req, key):
            res = {"type": "user", "name": c.get("Name"), "mechanism": c.get("Mechanism"), "action": action}
            if action == "upsert":
                res["iterations"] = c.get("Iterations")
            resources.append(res)
            got = by_user.get(c.get("Name"))
            results.append(answer.of(got and got.get("ErrorCode"), got is None))
    return entry(ex, "alter_scram_credentials", resources, results, "credentials_changed")


def _entity(components) -> dict:
    return {str(c.get("EntityType")): c.get("EntityName") if c.get("EntityName") is not None else "(default)"
            for c in components or () if type(c) is dict}


def _quotas(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_entity = answer.by("Entries", lambda e: tuple(sorted(_entity(e.get("Entity")).items())))
    resources, results = [], []
    for e in _items(req, "Entries"):
        entity = _entity(e.get("Entity"))
        ops = {str(o.get("Key")): ("(removed)" if o.get("Remove") else o.get("Value")) for o in _items(e, "Ops")}
        resources.append({"type": "quota", "entity": entity, "quotas": ops})
        got = by_entity.get(tuple(sorted(entity.items())))
        results.append(answer.of(got and got.get("ErrorCode"), got is None))
    return entry(ex, "alter_client_quotas", resources, results)


def _by_topic(answer: Answer, array: str, name: str = "Name", parts: str = "Partitions") -> dict:
    """A per-partition answer as {topic: result}: the first error of the topic's partitions."""
    return {t.get(name): first_error(t.get(parts)) for t in _items(answer.body or {}, array)}


def _offsets(ex: Exchange, req: dict, operation: str, name: str, parts_key: str, offset_key: str | None,
             response_array: str, response_name: str) -> dict:
    answer = Answer(ex)
    errors = _by_topic(answer, response_array, response_name)
    resources, results = [], []
    for t in _items(req, "Topics"):
        res = {"type": "group_offsets", "group": req.get("GroupId"), "topic": t.get(name)}
        parts = _items(t, parts_key)
        if offset_key:
            res["offsets"] = {str(p.get("PartitionIndex")): p.get(offset_key) for p in parts}
        elif parts:
            res["partitions"] = [p.get("PartitionIndex") for p in parts]
        resources.append(res)
        results.append(answer.of(errors.get(t.get(name)), t.get(name) not in errors))
    return entry(ex, operation, resources, results, "offsets_moved")


def _offset_commit(ex: Exchange, req: dict) -> dict | None:
    if ex.api_version is None or ex.api_version < 1:
        return None
    if req.get("GenerationIdOrMemberEpoch") != -1 or req.get("MemberId"):
        return None  # a member's own commit
    return _offsets(ex, req, "set_group_offsets", "Name", "Partitions", "CommittedOffset", "Topics", "Name")


def _offset_delete(ex: Exchange, req: dict) -> dict:
    return _offsets(ex, req, "delete_group_offsets", "Name", "Partitions", None, "Topics", "Name")


def _share_offsets(ex: Exchange, req: dict) -> dict:
    if ex.api == "AlterShareGroupOffsets":
        return _offsets(ex, req, "set_share_group_offsets", "TopicName", "Partitions", "StartOffset",
                        "Responses", "TopicName")
    answer = Answer(ex)
    errors = {t.get("TopicName"): t.get("ErrorCode") for t in _items(answer.body or {}, "Responses")}
    resources = [{"type": "group_offsets", "group": req.get("GroupId"), "topic": t.get("TopicName")}
                 for t in _items(req, "Topics")]
    results = [answer.of(errors.get(r["topic"]), r["topic"] not in errors) for r in resources]
    return entry(ex, "delete_share_group_offsets", resources, results, "offsets_moved")


def _delete_groups(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_group = answer.by("Results", lambda e: e.get("GroupId"))
    resources = [{"type": "group", "name": g} for g in req.get("GroupsNames") or ()]
    results = [answer.of(by_group.get(r["name"], {}).get("ErrorCode"), r["name"] not in by_group) for r in resources]
    return entry(ex, "delete_groups", resources, results, "group_deleted")


def _leave_group(ex: Exchange, req: dict) -> dict | None:
    members = _items(req, "Members")
    if not any(not m.get("MemberId") or ADMIN_REASON in (m.get("Reason") or "") for m in members):
        return None  # a member leaving on its own
    answer = Answer(ex)
    got = _items(answer.body or {}, "Members")
    resources, results = [], []
    for i, m in enumerate(members):
        resources.append({"type": "group_member", "group": req.get("GroupId"), "member_id": m.get("MemberId") or None,
                          "instance_id": m.get("GroupInstanceId")})
        mine = got[i] if i < len(got) else None
        results.append(answer.of(mine and mine.get("ErrorCode"), mine is None))
    return entry(ex, "remove_group_members", resources, results)


def _delete_records(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex, None)
    by_topic = answer.by("Topics", lambda e: e.get("Name"))
    resources, results = [], []
    for t in _items(req, "Topics"):
        res = {"type": "records", "topic": t.get("Name"),
               "before": {str(p.get("PartitionIndex")): p.get("Offset") for p in _items(t, "Partitions")}}
        got = by_topic.get(t.get("Name"))
        if got is not None:
            res["low_watermarks"] = {str(p.get("PartitionIndex")): p.get("LowWatermark")
                                     for p in _items(got, "Partitions")}
        resources.append(res)
        results.append(answer.of(got and first_error(got.get("Partitions")), got is None))
    return entry(ex, "delete_records", resources, results, "records_deleted")


def _elect_leaders(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex)
    errors = _by_topic(answer, "ReplicaElectionResults", "Topic", "PartitionResult")
    election = req.get("ElectionType", "PREFERRED")
    topics = req.get("TopicPartitions")
    if topics is None:  # every partition
        return entry(ex, "elect_leaders", [{"type": "partitions", "topic": "(all)", "election": election}],
                     [answer.of(next((c for c in errors.values() if c), 0))])
    resources = [{"type": "partitions", "topic": t.get("Topic"), "partitions": t.get("Partitions"),
                  "election": election} for t in topics if type(t) is dict]
    results = [answer.of(errors.get(r["topic"]), r["topic"] not in errors) for r in resources]
    return entry(ex, "elect_leaders", resources, results)


def _reassign(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex)
    errors = _by_topic(answer, "Responses")
    resources = []
    for t in _items(req, "Topics"):
        replicas = {str(p.get("PartitionIndex")): (p.get("Replicas") if p.get("Replicas") is not None else "(cancel)")
                    for p in _items(t, "Partitions")}
        resources.append({"type": "partitions", "topic": t.get("Name"), "replicas": replicas})
    results = [answer.of(errors.get(r["topic"]), r["topic"] not in errors) for r in resources]
    return entry(ex, "alter_partition_reassignments", resources, results)


def _features(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex)
    by_feature = answer.by("Results", lambda e: e.get("Feature"))
    resources = []
    for f in _items(req, "FeatureUpdates"):
        res = {"type": "feature", "name": f.get("Feature"), "max_version_level": f.get("MaxVersionLevel")}
        res["upgrade_type"] = f.get("UpgradeType", "SAFE_DOWNGRADE" if f.get("AllowDowngrade") else "UPGRADE")
        resources.append(res)
    results = [answer.of(by_feature.get(r["name"], {}).get("ErrorCode"), r["name"] not in by_feature)
               for r in resources]
    return entry(ex, "update_features", resources, results)


def _principal(kind, name) -> str | None:
    return f"{kind or 'User'}:{name}" if name else None


def _token(ex: Exchange, req: dict) -> dict:
    answer = Answer(ex)
    res: dict = {"type": "delegation_token"}
    if ex.api == "CreateDelegationToken":
        operation = "create_delegation_token"
        res["owner"] = _principal(req.get("OwnerPrincipalType"), req.get("OwnerPrincipalName"))
        res["renewers"] = [_principal(r.get("PrincipalType"), r.get("PrincipalName")) for r in _items(req, "Renewers")]
        res["max_lifetime_ms"] = req.get("MaxLifetimeMs")
        body = answer.body or {}
        if body.get("TokenId"):
            res["token_id"] = body.get("TokenId")
            res["owner"] = res["owner"] or _principal(body.get("PrincipalType"), body.get("PrincipalName"))
    elif ex.api == "RenewDelegationToken":
        operation = "renew_delegation_token"
        res["renew_period_ms"] = req.get("RenewPeriodMs")
    else:
        operation = "expire_delegation_token"
        res["expiry_period_ms"] = req.get("ExpiryTimePeriodMs")
    if answer.body and answer.body.get("ExpiryTimestampMs") is not None:
        res["expiry_timestamp_ms"] = answer.body.get("ExpiryTimestampMs")
    return entry(ex, operation, [res], [answer.of()])


def _abort_markers(ex: Exchange, req: dict) -> dict | None:
    if MARKER_SENDER in (ex.client_id or ""):
        return None  # a transaction coordinator's own markers
    markers = [m for m in _items(req, "Markers") if m.get("TransactionResult") is False]
    if not markers:
        return None
    answer = Answer(ex, None)
    by_pid = {m.get("ProducerId"): m for m in _items(answer.body or {}, "Markers")}
    resources, results = [], []
    for m in markers:
        partitions = {str(t.get("Name")): t.get("PartitionIndexes") for t in _items(m, "Topics")}
        resources.append({"type": "transaction", "producer_id": m.get("ProducerId"),
                          "producer_epoch": m.get("ProducerEpoch"), "partitions": partitions})
        got = by_pid.get(m.get("ProducerId"))
        code = got and next((first_error(t.get("Partitions")) for t in _items(got, "Topics")
                             if first_error(t.get("Partitions"))), 0)
        results.append(answer.of(code, got is None))
    return entry(ex, "abort_transaction", resources, results)


def _unregister(ex: Exchange, req: dict) -> dict:
    return entry(ex, "unregister_broker", [{"type": "broker", "name": req.get("BrokerId")}], [Answer(ex).of()])


READERS = {
    "CreateTopics": _create_topics, "DeleteTopics": _delete_topics, "CreatePartitions": _create_partitions,
    "AlterConfigs": _alter_configs, "IncrementalAlterConfigs": _alter_configs,
    "CreateAcls": _create_acls, "DeleteAcls": _delete_acls, "AlterUserScramCredentials": _scram,
    "AlterClientQuotas": _quotas, "OffsetCommit": _offset_commit, "OffsetDelete": _offset_delete,
    "AlterShareGroupOffsets": _share_offsets, "DeleteShareGroupOffsets": _share_offsets,
    "DeleteGroups": _delete_groups, "LeaveGroup": _leave_group, "DeleteRecords": _delete_records,
    "ElectLeaders": _elect_leaders, "AlterPartitionReassignments": _reassign, "UpdateFeatures": _features,
    "CreateDelegationToken": _token, "RenewDelegationToken": _token, "ExpireDelegationToken": _token,
    "WriteTxnMarkers": _abort_markers, "UnregisterBroker": _unregister,
}
