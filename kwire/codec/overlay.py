"""kwire's own marks, laid over the schemas generated from Kafka's message definitions.

Kafka's definitions say what a field is on the wire and, with `entityType`, which topic, group,
broker, producer or transaction it names. What kwire adds lives here, in one small table per kind of
mark, so the generated modules stay Kafka's facts only (scripts/gen_schemas.py writes them):
- ENUMS: the names of the numbers a field carries (kwire.codec.enums), by message and field path;
- ROLES: the fields that are secrets (kept out of every output unless --show-secrets) and the name,
  value and IsSensitive fields of configuration entries (a value is a secret when the broker said
  IsSensitive or `sensitive_config(name)`, kwire.codec.config_secrets: Kafka's PASSWORD configurations);
- topic ids: Kafka leaves them unmarked; every uuid field named TopicId is marked TOPIC_ID;
- READ_IN_PART: the apis whose bodies past kwire's entries bound are read in part (kwire.codec.partial)
  rather than not kept: those that change the cluster, whose every entry an audit must see.

A path is the field names from the message's top level down, joined by dots ("Topics.Partitions.X").
`apply(message_name, fields)` returns the fields with the marks set; a path that names no field is an
error at import, so a renamed field cannot silently lose its mark (tests import every schema).
"""

from __future__ import annotations

import dataclasses
from typing import Mapping

from kwire.codec import enums as E
from kwire.codec.config_secrets import sensitive_config  # noqa: F401 (the rule the config roles stand for)
from kwire.codec.schema import CONFIG_NAME, CONFIG_SENSITIVE, CONFIG_VALUE, SECRET, TOPIC_ID, Field

ENUMS: dict[str, dict[str, Mapping[int, str]]] = {
    "ProduceRequest": {"Acks": E.ACKS},
    "FetchRequest": {"IsolationLevel": E.ISOLATION_LEVEL},
    "ListOffsetsRequest": {"IsolationLevel": E.ISOLATION_LEVEL},
    "FindCoordinatorRequest": {"KeyType": E.COORDINATOR_TYPE},
    "CreateTopicsResponse": {"Topics.Configs.ConfigSource": E.CONFIG_SOURCE},
    "DescribeConfigsRequest": {"Resources.ResourceType": E.CONFIG_RESOURCE_TYPE},
    "DescribeConfigsResponse": {"Results.ResourceType": E.CONFIG_RESOURCE_TYPE,
                                "Results.Configs.ConfigSource": E.CONFIG_SOURCE,
                                "Results.Configs.Synonyms.Source": E.CONFIG_SOURCE,
                                "Results.Configs.ConfigType": E.CONFIG_TYPE},
    "AlterConfigsRequest": {"Resources.ResourceType": E.CONFIG_RESOURCE_TYPE},
    "AlterConfigsResponse": {"Responses.ResourceType": E.CONFIG_RESOURCE_TYPE},
    "IncrementalAlterConfigsRequest": {"Resources.ResourceType": E.CONFIG_RESOURCE_TYPE,
                                       "Resources.Configs.ConfigOperation": E.CONFIG_OPERATION},
    "IncrementalAlterConfigsResponse": {"Responses.ResourceType": E.CONFIG_RESOURCE_TYPE},
    "DescribeClusterRequest": {"EndpointType": E.ENDPOINT_TYPE},
    "DescribeClusterResponse": {"EndpointType": E.ENDPOINT_TYPE},
    "ShareFetchRequest": {"ShareAcquireMode": E.SHARE_ACQUIRE_MODE,
                          "Topics.Partitions.AcknowledgementBatches.AcknowledgeTypes": E.ACKNOWLEDGE_TYPE},
    "ShareAcknowledgeRequest": {"Topics.Partitions.AcknowledgementBatches.AcknowledgeTypes": E.ACKNOWLEDGE_TYPE},
    "DescribeAclsRequest": {"ResourceTypeFilter": E.ACL_RESOURCE_TYPE, "PatternTypeFilter": E.PATTERN_TYPE,
                            "Operation": E.ACL_OPERATION, "PermissionType": E.ACL_PERMISSION_TYPE},
    "DescribeAclsResponse": {"Resources.ResourceType": E.ACL_RESOURCE_TYPE, "Resources.PatternType": E.PATTERN_TYPE,
                             "Resources.Acls.Operation": E.ACL_OPERATION,
                             "Resources.Acls.PermissionType": E.ACL_PERMISSION_TYPE},
    "CreateAclsRequest": {"Creations.ResourceType": E.ACL_RESOURCE_TYPE,
                          "Creations.ResourcePatternType": E.PATTERN_TYPE,
                          "Creations.Operation": E.ACL_OPERATION, "Creations.PermissionType": E.ACL_PERMISSION_TYPE},
    "DeleteAclsRequest": {"Filters.ResourceTypeFilter": E.ACL_RESOURCE_TYPE, "Filters.PatternTypeFilter": E.PATTERN_TYPE,
                          "Filters.Operation": E.ACL_OPERATION, "Filters.PermissionType": E.ACL_PERMISSION_TYPE},
    "DeleteAclsResponse": {"FilterResults.MatchingAcls.ResourceType": E.ACL_RESOURCE_TYPE,
                           "FilterResults.MatchingAcls.PatternType": E.PATTERN_TYPE,
                           "FilterResults.MatchingAcls.Operation": E.ACL_OPERATION,
                           "FilterResults.MatchingAcls.PermissionType": E.ACL_PERMISSION_TYPE},
    "AlterUserScramCredentialsRequest": {"Deletions.Mechanism": E.SCRAM_MECHANISM,
                                         "Upsertions.Mechanism": E.SCRAM_MECHANISM},
    "DescribeUserScramCredentialsResponse": {"Results.CredentialInfos.Mechanism": E.SCRAM_MECHANISM},
    "ElectLeadersRequest": {"ElectionType": E.ELECTION_TYPE},
    "UpdateFeaturesRequest": {"FeatureUpdates.UpgradeType": E.UPGRADE_TYPE},
    "DescribeClientQuotasRequest": {"Components.MatchType": E.QUOTA_MATCH_TYPE},
    "AlterPartitionRequest": {"Topics.Partitions.LeaderRecoveryState": E.LEADER_RECOVERY_STATE},
    "AlterPartitionResponse": {"Topics.Partitions.LeaderRecoveryState": E.LEADER_RECOVERY_STATE},
}

_CONFIG = {CONFIG_NAME: "Name", CONFIG_VALUE: "Value"}


def _config_entries(*structs: str, flagged: tuple[str, ...] = ()) -> dict[str, str]:
    """The name and value fields of the entries in `structs`; the IsSensitive field of those in `flagged`."""
    roles = {f"{s}.{field}": role for s in structs for role, field in _CONFIG.items()}
    return roles | {f"{s}.IsSensitive": CONFIG_SENSITIVE for s in flagged}


ROLES: dict[str, dict[str, str]] = {
    # SASL exchanges: passwords, proofs, signatures, tokens (kwire.render.values shows their structure)
    "SaslAuthenticateRequest": {"AuthBytes": SECRET},
    "SaslAuthenticateResponse": {"AuthBytes": SECRET},
    # a delegation token's HMAC is the token's password
    "CreateDelegationTokenResponse": {"Hmac": SECRET},
    "RenewDelegationTokenRequest": {"Hmac": SECRET},
    "ExpireDelegationTokenRequest": {"Hmac": SECRET},
    "DescribeDelegationTokenResponse": {"Tokens.Hmac": SECRET},
    # SCRAM credentials: the salt and the salted password are what a dictionary attack needs
    "AlterUserScramCredentialsRequest": {"Upsertions.Salt": SECRET, "Upsertions.SaltedPassword": SECRET},
    # a forwarded request (broker to controller) may be any admin request, credentials included
    "EnvelopeRequest": {"RequestData": SECRET},
    "EnvelopeResponse": {"ResponseData": SECRET},
    # configuration entries: the value is a secret when the name is one Kafka treats as sensitive, or
    # when the broker says so (IsSensitive; a synonym of a sensitive entry is sensitive too)
    "CreateTopicsRequest": _config_entries("Topics.Configs"),
    "CreateTopicsResponse": _config_entries("Topics.Configs", flagged=("Topics.Configs",)),
    "DescribeConfigsResponse": _config_entries("Results.Configs", "Results.Configs.Synonyms",
                                               flagged=("Results.Configs",)),
    "AlterConfigsRequest": _config_entries("Resources.Configs"),
    "IncrementalAlterConfigsRequest": _config_entries("Resources.Configs"),
}

# The apis whose requests (and answers) past KWIRE_MAX_BODY_ENTRIES are read in part (kwire.native.exchange_build): the
# admin apis the change log reads (kwire.analytics.changes_apis.READERS: tests/analytics/test_changes_caps.py
# checks they are the same), so that padding a destructive request never hides it. Other bodies past the bound
# are not kept: reading a million-entry answer in part costs seconds and a bound's worth of memory, for no
# reader that needs every entry.
READ_IN_PART = frozenset({
    "CreateTopics", "DeleteTopics", "CreatePartitions", "AlterConfigs", "IncrementalAlterConfigs", "CreateAcls",
    "DeleteAcls", "AlterUserScramCredentials", "AlterClientQuotas", "OffsetCommit", "TxnOffsetCommit",
    "OffsetDelete",
    "AlterShareGroupOffsets", "DeleteShareGroupOffsets", "DeleteGroups", "LeaveGroup", "DeleteRecords",
    "ElectLeaders", "AlterPartitionReassignments", "UpdateFeatures", "CreateDelegationToken",
    "RenewDelegationToken", "ExpireDelegationToken", "WriteTxnMarkers", "UnregisterBroker"})


def messages_with(role: str) -> frozenset[str]:
    """The message names whose schemas have a field of `role`."""
    return frozenset(name for name, roles in ROLES.items() if role in roles.values())


def field_names_with(role: str) -> frozenset[str]:
    """The names of the fields of `role`, in any message (the last part of their paths)."""
    return frozenset(path.rpartition(".")[2] for roles in ROLES.values() for path, r in roles.items() if r == role)


def apply(message_name: str, fields: tuple[Field, ...]) -> tuple[Field, ...]:
    """`fields` with kwire's marks for `message_name`; ValueError when a path names no field."""
    enums, roles = ENUMS.get(message_name, {}), ROLES.get(message_name, {})
    found: set[str] = set()
    marked = _marked(fields, "", enums, roles, found)
    missing = (set(enums) | set(roles)) - found
    if missing:
        raise ValueError(f"kwire.codec.overlay: {message_name} has no field {', '.join(sorted(missing))}")
    return marked


def _marked(fields, prefix: str, enums, roles, found: set[str]) -> tuple[Field, ...]:
    out = []
    for f in fields:
        path = prefix + f.name
        changes: dict = {}
        if f.fields is not None:
            changes["fields"] = _marked(f.fields, path + ".", enums, roles, found)
        elif f.type == "uuid" and f.name == "TopicId" and f.entity is None:
            changes["entity"] = TOPIC_ID
        if path in enums:
            changes["enum"] = enums[path]
            found.add(path)
        if path in roles:
            changes["role"] = roles[path]
            found.add(path)
        out.append(dataclasses.replace(f, **changes) if changes else f)
    return tuple(out)
