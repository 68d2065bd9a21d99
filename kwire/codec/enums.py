"""Names of the numbers some Kafka fields carry, as Kafka's Java enums name them.

Schemas attach these tables to their fields (`F(..., enum=ISOLATION_LEVEL)`); decoded bodies keep the
numbers (the JSON output is Kafka's wire values), views show the name beside them. A value missing
from a table is shown as a plain number.
"""

from __future__ import annotations

from types import MappingProxyType


def _table(**names: int):
    return MappingProxyType({value: name for name, value in names.items()})


# org.apache.kafka.common.IsolationLevel
ISOLATION_LEVEL = _table(READ_UNCOMMITTED=0, READ_COMMITTED=1)
# Produce acks: 0 no answer, 1 the leader's, -1 every in-sync replica's
ACKS = MappingProxyType({0: "NONE", 1: "LEADER", -1: "ALL"})
# org.apache.kafka.clients.consumer.AcknowledgeType (and GAP, the broker's "no record here")
ACKNOWLEDGE_TYPE = _table(GAP=0, ACCEPT=1, RELEASE=2, REJECT=3, RENEW=4)
# FindCoordinator KeyType: org.apache.kafka.common.requests.FindCoordinatorRequest.CoordinatorType
COORDINATOR_TYPE = _table(GROUP=0, TRANSACTION=1, SHARE=2)
# org.apache.kafka.common.config.ConfigResource.Type
CONFIG_RESOURCE_TYPE = _table(UNKNOWN=0, TOPIC=2, BROKER=4, BROKER_LOGGER=8, CLIENT_METRICS=16, GROUP=32)
# DescribeConfigsResponse ConfigSource
CONFIG_SOURCE = _table(UNKNOWN=0, TOPIC_CONFIG=1, DYNAMIC_BROKER_CONFIG=2, DYNAMIC_DEFAULT_BROKER_CONFIG=3,
                       STATIC_BROKER_CONFIG=4, DEFAULT_CONFIG=5, DYNAMIC_BROKER_LOGGER_CONFIG=6,
                       CLIENT_METRICS_CONFIG=7, GROUP_CONFIG=8)
# DescribeConfigsResponse ConfigType (org.apache.kafka.clients.admin.ConfigEntry.ConfigType)
CONFIG_TYPE = _table(UNKNOWN=0, BOOLEAN=1, STRING=2, INT=3, SHORT=4, LONG=5, DOUBLE=6, LIST=7, CLASS=8,
                     PASSWORD=9)
# ShareFetch ShareAcquireMode (KIP-1206)
SHARE_ACQUIRE_MODE = _table(BATCH_OPTIMIZED=0, RECORD_LIMIT=1)
# DescribeCluster EndpointType (org.apache.kafka.common.requests.EndpointType)
ENDPOINT_TYPE = _table(UNKNOWN=0, BROKER=1, CONTROLLER=2)
# org.apache.kafka.common.resource.ResourceType (the ACL apis)
ACL_RESOURCE_TYPE = _table(UNKNOWN=0, ANY=1, TOPIC=2, GROUP=3, CLUSTER=4, TRANSACTIONAL_ID=5, DELEGATION_TOKEN=6,
                           USER=7)
# org.apache.kafka.common.resource.PatternType
PATTERN_TYPE = _table(UNKNOWN=0, ANY=1, MATCH=2, LITERAL=3, PREFIXED=4)
# org.apache.kafka.common.acl.AclOperation
ACL_OPERATION = _table(UNKNOWN=0, ANY=1, ALL=2, READ=3, WRITE=4, CREATE=5, DELETE=6, ALTER=7, DESCRIBE=8,
                       CLUSTER_ACTION=9, DESCRIBE_CONFIGS=10, ALTER_CONFIGS=11, IDEMPOTENT_WRITE=12,
                       CREATE_TOKENS=13, DESCRIBE_TOKENS=14, TWO_PHASE_COMMIT=15)
# org.apache.kafka.common.acl.AclPermissionType
ACL_PERMISSION_TYPE = _table(UNKNOWN=0, ANY=1, DENY=2, ALLOW=3)
# org.apache.kafka.clients.admin.ScramMechanism
SCRAM_MECHANISM = _table(UNKNOWN=0, SCRAM_SHA_256=1, SCRAM_SHA_512=2)
# org.apache.kafka.clients.admin.AlterConfigOp.OpType (IncrementalAlterConfigs)
CONFIG_OPERATION = _table(SET=0, DELETE=1, APPEND=2, SUBTRACT=3)
# org.apache.kafka.common.ElectionType
ELECTION_TYPE = _table(PREFERRED=0, UNCLEAN=1)
# org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType (UpdateFeatures v1+)
UPGRADE_TYPE = _table(UNKNOWN=0, UPGRADE=1, SAFE_DOWNGRADE=2, UNSAFE_DOWNGRADE=3)
# DescribeClientQuotasRequest's MatchType
QUOTA_MATCH_TYPE = _table(EXACT=0, DEFAULT=1, SPECIFIED=2)
# org.apache.kafka.metadata.LeaderRecoveryState (AlterPartition)
LEADER_RECOVERY_STATE = _table(RECOVERED=0, RECOVERING=1)
