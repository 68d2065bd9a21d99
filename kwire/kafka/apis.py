"""Kafka's api keys: name, the version range kwire accepts, and where flexible versions begin.

Facts from Kafka's message definitions (clients/src/main/resources/common/message/*Request.json),
widened to every version any Kafka release defined, so old clients (Fetch v0) and new ones (Fetch v18)
are both recognised. `flexible_from` decides the request header (v2 when flexible, else v1) and the
response header (v1 when flexible, else v0) for every api, decoded body or not. Protocol quirks that
break that rule are kept here, each with a test:
- ApiVersions always answers with response header v0 (clients cannot know the broker's versions yet).
- ControlledShutdown v0 used request header v0 (no client id).
"""

from __future__ import annotations

from typing import NamedTuple


class ApiSpec(NamedTuple):
    key: int
    name: str
    min_version: int
    max_version: int
    flexible_from: int | None  # None: never flexible

    def is_flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from


_SPECS = (
    ApiSpec(0, "Produce", 0, 13, 9),
    ApiSpec(1, "Fetch", 0, 18, 12),
    ApiSpec(2, "ListOffsets", 0, 11, 6),
    ApiSpec(3, "Metadata", 0, 13, 9),
    ApiSpec(4, "LeaderAndIsr", 0, 7, 4),
    ApiSpec(5, "StopReplica", 0, 4, 2),
    ApiSpec(6, "UpdateMetadata", 0, 8, 6),
    ApiSpec(7, "ControlledShutdown", 0, 3, 3),
    ApiSpec(8, "OffsetCommit", 0, 10, 8),
    ApiSpec(9, "OffsetFetch", 0, 10, 6),
    ApiSpec(10, "FindCoordinator", 0, 6, 3),
    ApiSpec(11, "JoinGroup", 0, 9, 6),
    ApiSpec(12, "Heartbeat", 0, 4, 4),
    ApiSpec(13, "LeaveGroup", 0, 5, 4),
    ApiSpec(14, "SyncGroup", 0, 5, 4),
    ApiSpec(15, "DescribeGroups", 0, 6, 5),
    ApiSpec(16, "ListGroups", 0, 5, 3),
    ApiSpec(17, "SaslHandshake", 0, 1, None),
    ApiSpec(18, "ApiVersions", 0, 4, 3),
    ApiSpec(19, "CreateTopics", 0, 7, 5),
    ApiSpec(20, "DeleteTopics", 0, 6, 4),
    ApiSpec(21, "DeleteRecords", 0, 2, 2),
    ApiSpec(22, "InitProducerId", 0, 6, 2),
    ApiSpec(23, "OffsetForLeaderEpoch", 0, 4, 4),
    ApiSpec(24, "AddPartitionsToTxn", 0, 5, 3),
    ApiSpec(25, "AddOffsetsToTxn", 0, 4, 3),
    ApiSpec(26, "EndTxn", 0, 5, 3),
    ApiSpec(27, "WriteTxnMarkers", 0, 2, 1),
    ApiSpec(28, "TxnOffsetCommit", 0, 5, 3),
    ApiSpec(29, "DescribeAcls", 0, 3, 2),
    ApiSpec(30, "CreateAcls", 0, 3, 2),
    ApiSpec(31, "DeleteAcls", 0, 3, 2),
    ApiSpec(32, "DescribeConfigs", 0, 4, 4),
    ApiSpec(33, "AlterConfigs", 0, 2, 2),
    ApiSpec(34, "AlterReplicaLogDirs", 0, 2, 2),
    ApiSpec(35, "DescribeLogDirs", 0, 5, 2),
    ApiSpec(36, "SaslAuthenticate", 0, 2, 2),
    ApiSpec(37, "CreatePartitions", 0, 3, 2),
    ApiSpec(38, "CreateDelegationToken", 0, 3, 2),
    ApiSpec(39, "RenewDelegationToken", 0, 2, 2),
    ApiSpec(40, "ExpireDelegationToken", 0, 2, 2),
    ApiSpec(41, "DescribeDelegationToken", 0, 3, 2),
    ApiSpec(42, "DeleteGroups", 0, 2, 2),
    ApiSpec(43, "ElectLeaders", 0, 2, 2),
    ApiSpec(44, "IncrementalAlterConfigs", 0, 1, 1),
    ApiSpec(45, "AlterPartitionReassignments", 0, 1, 0),
    ApiSpec(46, "ListPartitionReassignments", 0, 0, 0),
    ApiSpec(47, "OffsetDelete", 0, 0, None),
    ApiSpec(48, "DescribeClientQuotas", 0, 1, 1),
    ApiSpec(49, "AlterClientQuotas", 0, 1, 1),
    ApiSpec(50, "DescribeUserScramCredentials", 0, 0, 0),
    ApiSpec(51, "AlterUserScramCredentials", 0, 0, 0),
    ApiSpec(52, "Vote", 0, 2, 0),
    ApiSpec(53, "BeginQuorumEpoch", 0, 1, 1),
    ApiSpec(54, "EndQuorumEpoch", 0, 1, 1),
    ApiSpec(55, "DescribeQuorum", 0, 2, 0),
    ApiSpec(56, "AlterPartition", 0, 3, 0),
    ApiSpec(57, "UpdateFeatures", 0, 2, 0),
    ApiSpec(58, "Envelope", 0, 0, 0),
    ApiSpec(59, "FetchSnapshot", 0, 1, 0),
    ApiSpec(60, "DescribeCluster", 0, 2, 0),
    ApiSpec(61, "DescribeProducers", 0, 0, 0),
    ApiSpec(62, "BrokerRegistration", 0, 4, 0),
    ApiSpec(63, "BrokerHeartbeat", 0, 2, 0),
    ApiSpec(64, "UnregisterBroker", 0, 0, 0),
    ApiSpec(65, "DescribeTransactions", 0, 0, 0),
    ApiSpec(66, "ListTransactions", 0, 2, 0),
    ApiSpec(67, "AllocateProducerIds", 0, 0, 0),
    ApiSpec(68, "ConsumerGroupHeartbeat", 0, 1, 0),
    ApiSpec(69, "ConsumerGroupDescribe", 0, 1, 0),
    ApiSpec(70, "ControllerRegistration", 0, 0, 0),
    ApiSpec(71, "GetTelemetrySubscriptions", 0, 0, 0),
    ApiSpec(72, "PushTelemetry", 0, 0, 0),
    ApiSpec(73, "AssignReplicasToDirs", 0, 0, 0),
    ApiSpec(74, "ListConfigResources", 0, 1, 0),
    ApiSpec(75, "DescribeTopicPartitions", 0, 0, 0),
    ApiSpec(76, "ShareGroupHeartbeat", 0, 1, 0),
    ApiSpec(77, "ShareGroupDescribe", 0, 1, 0),
    ApiSpec(78, "ShareFetch", 0, 2, 0),
    ApiSpec(79, "ShareAcknowledge", 0, 2, 0),
    ApiSpec(80, "AddRaftVoter", 0, 1, 0),
    ApiSpec(81, "RemoveRaftVoter", 0, 0, 0),
    ApiSpec(82, "UpdateRaftVoter", 0, 0, 0),
    ApiSpec(83, "InitializeShareGroupState", 0, 0, 0),
    ApiSpec(84, "ReadShareGroupState", 0, 0, 0),
    ApiSpec(85, "WriteShareGroupState", 0, 1, 0),
    ApiSpec(86, "DeleteShareGroupState", 0, 0, 0),
    ApiSpec(87, "ReadShareGroupStateSummary", 0, 1, 0),
    ApiSpec(88, "StreamsGroupHeartbeat", 0, 0, 0),
    ApiSpec(89, "StreamsGroupDescribe", 0, 0, 0),
    ApiSpec(90, "DescribeShareGroupOffsets", 0, 1, 0),
    ApiSpec(91, "AlterShareGroupOffsets", 0, 0, 0),
    ApiSpec(92, "DeleteShareGroupOffsets", 0, 0, 0),
)

APIS: dict[int, ApiSpec] = {spec.key: spec for spec in _SPECS}
API_BY_NAME: dict[str, ApiSpec] = {spec.name.lower(): spec for spec in _SPECS}

API_VERSIONS_KEY = 18
CONTROLLED_SHUTDOWN_KEY = 7


def api_name(key: int) -> str:
    spec = APIS.get(key)
    return spec.name if spec else f"Unknown({key})"


def version_known(key: int, version: int) -> bool:
    spec = APIS.get(key)
    return spec is not None and spec.min_version <= version <= spec.max_version


def request_header_version(key: int, version: int) -> int:
    if key == CONTROLLED_SHUTDOWN_KEY and version == 0:
        return 0
    spec = APIS.get(key)
    return 2 if spec is not None and spec.is_flexible(version) else 1


def response_header_version(key: int, version: int) -> int:
    if key == API_VERSIONS_KEY:
        return 0
    spec = APIS.get(key)
    return 1 if spec is not None and spec.is_flexible(version) else 0
