"""Kafka's error codes: the int16 `error_code` of every response, by number.

Owns the table of every code Kafka's `org.apache.kafka.common.protocol.Errors` defines (-1 to 133 as of
Kafka 4.1), each with Kafka's name, whether the Java client treats it as retriable (its exception class
extends `RetriableException`, directly or through e.g. `InvalidMetadataException`), and Kafka's short
description. Facts only, kept as data; a later Kafka adds rows at the end.

Guarantees: lookups never raise. A code Kafka does not define (a newer broker, or garbage on the wire)
is named `UNKNOWN_ERROR_CODE(<n>)` and is not retriable, as the Java client treats it (it maps unknown
codes to the non-retriable UNKNOWN_SERVER_ERROR).
"""

from __future__ import annotations

from typing import NamedTuple


class ErrorCode(NamedTuple):
    code: int
    name: str
    retriable: bool
    description: str  # Kafka's default message; empty for NONE


_TABLE = (
    ErrorCode(-1, "UNKNOWN_SERVER_ERROR", False,
        "The server experienced an unexpected error when processing the request."),
    ErrorCode(0, "NONE", False, ""),
    ErrorCode(1, "OFFSET_OUT_OF_RANGE", False,
        "The requested offset is not within the range of offsets maintained by the server."),
    ErrorCode(2, "CORRUPT_MESSAGE", True,
        "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted"
        " topic, or is otherwise corrupt."),
    ErrorCode(3, "UNKNOWN_TOPIC_OR_PARTITION", True, "This server does not host this topic-partition."),
    ErrorCode(4, "INVALID_FETCH_SIZE", False, "The requested fetch size is invalid."),
    ErrorCode(5, "LEADER_NOT_AVAILABLE", True,
        "There is no leader for this topic-partition as we are in the middle of a leadership election."),
    ErrorCode(6, "NOT_LEADER_OR_FOLLOWER", True,
        "For requests intended only for the leader, this error indicates that the broker is not the "
        "current leader. For requests intended for any replica, this error indicates that the broker is "
        "not a replica of the topic partition."),
    ErrorCode(7, "REQUEST_TIMED_OUT", True, "The request timed out."),
    ErrorCode(8, "BROKER_NOT_AVAILABLE", False, "The broker is not available."),
    ErrorCode(9, "REPLICA_NOT_AVAILABLE", True,
        "The replica is not available for the requested topic-partition. Produce/Fetch requests and other"
        " requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker "
        "is not a replica of the topic-partition."),
    ErrorCode(10, "MESSAGE_TOO_LARGE", False,
        "The request included a message larger than the max message size the server will accept."),
    ErrorCode(11, "STALE_CONTROLLER_EPOCH", False, "The controller moved to another broker."),
    ErrorCode(12, "OFFSET_METADATA_TOO_LARGE", False,
        "The metadata field of the offset request was too large."),
    ErrorCode(13, "NETWORK_EXCEPTION", True, "The server disconnected before a response was received."),
    ErrorCode(14, "COORDINATOR_LOAD_IN_PROGRESS", True,
        "The coordinator is loading and hence can't process requests."),
    ErrorCode(15, "COORDINATOR_NOT_AVAILABLE", True, "The coordinator is not available."),
    ErrorCode(16, "NOT_COORDINATOR", True, "This is not the correct coordinator."),
    ErrorCode(17, "INVALID_TOPIC_EXCEPTION", False,
        "The request attempted to perform an operation on an invalid topic."),
    ErrorCode(18, "RECORD_LIST_TOO_LARGE", False,
        "The request included message batch larger than the configured segment size on the server."),
    ErrorCode(19, "NOT_ENOUGH_REPLICAS", True,
        "Messages are rejected since there are fewer in-sync replicas than required."),
    ErrorCode(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", True,
        "Messages are written to the log, but to fewer in-sync replicas than required."),
    ErrorCode(21, "INVALID_REQUIRED_ACKS", False,
        "Produce request specified an invalid value for required acks."),
    ErrorCode(22, "ILLEGAL_GENERATION", False, "Specified group generation id is not valid."),
    ErrorCode(23, "INCONSISTENT_GROUP_PROTOCOL", False,
        "The group member's supported protocols are incompatible with those of existing members or first "
        "group member tried to join with empty protocol type or empty protocol list."),
    ErrorCode(24, "INVALID_GROUP_ID", False, "The group id is invalid."),
    ErrorCode(25, "UNKNOWN_MEMBER_ID", False, "The coordinator is not aware of this member."),
    ErrorCode(26, "INVALID_SESSION_TIMEOUT", False,
        "The session timeout is not within the range allowed by the broker (as configured by "
        "group.min.session.timeout.ms and group.max.session.timeout.ms)."),
    ErrorCode(27, "REBALANCE_IN_PROGRESS", False, "The group is rebalancing, so a rejoin is needed."),
    ErrorCode(28, "INVALID_COMMIT_OFFSET_SIZE", False, "The committing offset data size is not valid."),
    ErrorCode(29, "TOPIC_AUTHORIZATION_FAILED", False, "Topic authorization failed."),
    ErrorCode(30, "GROUP_AUTHORIZATION_FAILED", False, "Group authorization failed."),
    ErrorCode(31, "CLUSTER_AUTHORIZATION_FAILED", False, "Cluster authorization failed."),
    ErrorCode(32, "INVALID_TIMESTAMP", False, "The timestamp of the message is out of acceptable range."),
    ErrorCode(33, "UNSUPPORTED_SASL_MECHANISM", False,
        "The broker does not support the requested SASL mechanism."),
    ErrorCode(34, "ILLEGAL_SASL_STATE", False, "Request is not valid given the current SASL state."),
    ErrorCode(35, "UNSUPPORTED_VERSION", False, "The version of API is not supported."),
    ErrorCode(36, "TOPIC_ALREADY_EXISTS", False, "Topic with this name already exists."),
    ErrorCode(37, "INVALID_PARTITIONS", False, "Number of partitions is below 1."),
    ErrorCode(38, "INVALID_REPLICATION_FACTOR", False,
        "Replication factor is below 1 or larger than the number of available brokers."),
    ErrorCode(39, "INVALID_REPLICA_ASSIGNMENT", False, "Replica assignment is invalid."),
    ErrorCode(40, "INVALID_CONFIG", False, "Configuration is invalid."),
    ErrorCode(41, "NOT_CONTROLLER", True, "This is not the correct controller for this cluster."),
    ErrorCode(42, "INVALID_REQUEST", False,
        "This most likely occurs because of a request being malformed by the client library or the "
        "message was sent to an incompatible broker. See the broker logs for more details."),
    ErrorCode(43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", False,
        "The message format version on the broker does not support the request."),
    ErrorCode(44, "POLICY_VIOLATION", False, "Request parameters do not satisfy the configured policy."),
    ErrorCode(45, "OUT_OF_ORDER_SEQUENCE_NUMBER", False,
        "The broker received an out of order sequence number."),
    ErrorCode(46, "DUPLICATE_SEQUENCE_NUMBER", False, "The broker received a duplicate sequence number."),
    ErrorCode(47, "INVALID_PRODUCER_EPOCH", False, "Producer attempted to produce with an old epoch."),
    ErrorCode(48, "INVALID_TXN_STATE", False,
        "The producer attempted a transactional operation in an invalid state."),
    ErrorCode(49, "INVALID_PRODUCER_ID_MAPPING", False,
        "The producer attempted to use a producer id which is not currently assigned to its transactional"
        " id."),
    ErrorCode(50, "INVALID_TRANSACTION_TIMEOUT", False,
        "The transaction timeout is larger than the maximum value allowed by the broker (as configured by"
        " transaction.max.timeout.ms)."),
    ErrorCode(51, "CONCURRENT_TRANSACTIONS", True,
        "The producer attempted to update a transaction while another concurrent operation on the same "
        "transaction was ongoing."),
    ErrorCode(52, "TRANSACTION_COORDINATOR_FENCED", False,
        "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current "
        "coordinator for a given producer."),
    ErrorCode(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", False, "Transactional Id authorization failed."),
    ErrorCode(54, "SECURITY_DISABLED", False, "Security features are disabled."),
    ErrorCode(55, "OPERATION_NOT_ATTEMPTED", False,
        "The broker did not attempt to execute this operation. This may happen for batched RPCs where "
        "some operations in the batch failed, causing the broker to respond without trying the rest."),
    ErrorCode(56, "KAFKA_STORAGE_ERROR", True, "Disk error when trying to access log file on the disk."),
    ErrorCode(57, "LOG_DIR_NOT_FOUND", False,
        "The user-specified log directory is not found in the broker config."),
    ErrorCode(58, "SASL_AUTHENTICATION_FAILED", False, "SASL Authentication failed."),
    ErrorCode(59, "UNKNOWN_PRODUCER_ID", False,
        "This exception is raised by the broker if it could not locate the producer metadata associated "
        "with the producerId in question. This could happen if, for instance, the producer's records were"
        " deleted because their retention time had elapsed. Once the last records of the producerId are "
        "removed, the producer's metadata is removed from the broker, and future appends by the producer "
        "will return this exception."),
    ErrorCode(60, "REASSIGNMENT_IN_PROGRESS", False, "A partition reassignment is in progress."),
    ErrorCode(61, "DELEGATION_TOKEN_AUTH_DISABLED", False, "Delegation Token feature is not enabled."),
    ErrorCode(62, "DELEGATION_TOKEN_NOT_FOUND", False, "Delegation Token is not found on server."),
    ErrorCode(63, "DELEGATION_TOKEN_OWNER_MISMATCH", False,
        "Specified Principal is not valid Owner/Renewer."),
    ErrorCode(64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", False,
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation "
        "token authenticated channels."),
    ErrorCode(65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", False, "Delegation Token authorization failed."),
    ErrorCode(66, "DELEGATION_TOKEN_EXPIRED", False, "Delegation Token is expired."),
    ErrorCode(67, "INVALID_PRINCIPAL_TYPE", False, "Supplied principalType is not supported."),
    ErrorCode(68, "NON_EMPTY_GROUP", False, "The group is not empty."),
    ErrorCode(69, "GROUP_ID_NOT_FOUND", False, "The group id does not exist."),
    ErrorCode(70, "FETCH_SESSION_ID_NOT_FOUND", True, "The fetch session ID was not found."),
    ErrorCode(71, "INVALID_FETCH_SESSION_EPOCH", True, "The fetch session epoch is invalid."),
    ErrorCode(72, "LISTENER_NOT_FOUND", True,
        "There is no listener on the leader broker that matches the listener on which metadata request "
        "was processed."),
    ErrorCode(73, "TOPIC_DELETION_DISABLED", False, "Topic deletion is disabled."),
    ErrorCode(74, "FENCED_LEADER_EPOCH", True,
        "The leader epoch in the request is older than the epoch on the broker."),
    ErrorCode(75, "UNKNOWN_LEADER_EPOCH", True,
        "The leader epoch in the request is newer than the epoch on the broker."),
    ErrorCode(76, "UNSUPPORTED_COMPRESSION_TYPE", False,
        "The requesting client does not support the compression type of given partition."),
    ErrorCode(77, "STALE_BROKER_EPOCH", False, "Broker epoch has changed."),
    ErrorCode(78, "OFFSET_NOT_AVAILABLE", True,
        "The leader high watermark has not caught up from a recent leader election so the offsets cannot "
        "be guaranteed to be monotonically increasing."),
    ErrorCode(79, "MEMBER_ID_REQUIRED", False,
        "The group member needs to have a valid member id before actually entering a consumer group."),
    ErrorCode(80, "PREFERRED_LEADER_NOT_AVAILABLE", True, "The preferred leader was not available."),
    ErrorCode(81, "GROUP_MAX_SIZE_REACHED", False, "The group has reached its maximum size."),
    ErrorCode(82, "FENCED_INSTANCE_ID", False,
        "The broker rejected this static consumer since another consumer with the same group.instance.id "
        "has registered with a different member.id."),
    ErrorCode(83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", True,
        "Eligible topic partition leaders are not available."),
    ErrorCode(84, "ELECTION_NOT_NEEDED", True, "Leader election not needed for topic partition."),
    ErrorCode(85, "NO_REASSIGNMENT_IN_PROGRESS", False, "No partition reassignment is in progress."),
    ErrorCode(86, "GROUP_SUBSCRIBED_TO_TOPIC", False,
        "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
    ErrorCode(87, "INVALID_RECORD", False,
        "This record has failed the validation on broker and hence will be rejected."),
    ErrorCode(88, "UNSTABLE_OFFSET_COMMIT", True, "There are unstable offsets that need to be cleared."),
    ErrorCode(89, "THROTTLING_QUOTA_EXCEEDED", True, "The throttling quota has been exceeded."),
    ErrorCode(90, "PRODUCER_FENCED", False,
        "There is a newer producer with the same transactionalId which fences the current one."),
    ErrorCode(91, "RESOURCE_NOT_FOUND", False,
        "A request illegally referred to a resource that does not exist."),
    ErrorCode(92, "DUPLICATE_RESOURCE", False, "A request illegally referred to the same resource twice."),
    ErrorCode(93, "UNACCEPTABLE_CREDENTIAL", False,
        "Requested credential would not meet criteria for acceptability."),
    ErrorCode(94, "INCONSISTENT_VOTER_SET", False,
        "Indicates that the either the sender or recipient of a voter-only request is not one of the "
        "expected voters."),
    ErrorCode(95, "INVALID_UPDATE_VERSION", False, "The given update version was invalid."),
    ErrorCode(96, "FEATURE_UPDATE_FAILED", False,
        "Unable to update finalized features due to an unexpected server error."),
    ErrorCode(97, "PRINCIPAL_DESERIALIZATION_FAILURE", False,
        "Request principal deserialization failed during forwarding. This indicates an internal error on "
        "the broker cluster security setup."),
    ErrorCode(98, "SNAPSHOT_NOT_FOUND", False, "Requested snapshot was not found."),
    ErrorCode(99, "POSITION_OUT_OF_RANGE", False,
        "Requested position is not greater than or equal to zero, and less than the size of the snapshot."),
    ErrorCode(100, "UNKNOWN_TOPIC_ID", True, "This server does not host this topic ID."),
    ErrorCode(101, "DUPLICATE_BROKER_REGISTRATION", False, "This broker ID is already in use."),
    ErrorCode(102, "BROKER_ID_NOT_REGISTERED", False, "The given broker ID was not registered."),
    ErrorCode(103, "INCONSISTENT_TOPIC_ID", True,
        "The log's topic ID did not match the topic ID in the request."),
    ErrorCode(104, "INCONSISTENT_CLUSTER_ID", False,
        "The clusterId in the request does not match that found on the server."),
    ErrorCode(105, "TRANSACTIONAL_ID_NOT_FOUND", False, "The transactionalId could not be found."),
    ErrorCode(106, "FETCH_SESSION_TOPIC_ID_ERROR", True,
        "The fetch session encountered inconsistent topic ID usage."),
    ErrorCode(107, "INELIGIBLE_REPLICA", False, "The new ISR contains at least one ineligible replica."),
    ErrorCode(108, "NEW_LEADER_ELECTED", False,
        "The AlterPartition request successfully updated the partition state but the leader has changed."),
    ErrorCode(109, "OFFSET_MOVED_TO_TIERED_STORAGE", False,
        "The requested offset is moved to tiered storage."),
    ErrorCode(110, "FENCED_MEMBER_EPOCH", False,
        "The member epoch is fenced by the group coordinator. The member must abandon all its partitions "
        "and rejoin."),
    ErrorCode(111, "UNRELEASED_INSTANCE_ID", False,
        "The instance ID is still used by another member in the consumer group. That member must leave "
        "first."),
    ErrorCode(112, "UNSUPPORTED_ASSIGNOR", False,
        "The assignor or its version range is not supported by the consumer group."),
    ErrorCode(113, "STALE_MEMBER_EPOCH", False,
        "The member epoch is stale. The member must retry after receiving its updated member epoch via "
        "the ConsumerGroupHeartbeat API."),
    ErrorCode(114, "MISMATCHED_ENDPOINT_TYPE", False,
        "The request was sent to an endpoint of the wrong type."),
    ErrorCode(115, "UNSUPPORTED_ENDPOINT_TYPE", False, "This endpoint type is not supported yet."),
    ErrorCode(116, "UNKNOWN_CONTROLLER_ID", False, "This controller ID is not known."),
    ErrorCode(117, "UNKNOWN_SUBSCRIPTION_ID", False,
        "Client sent a push telemetry request with an invalid or outdated subscription ID."),
    ErrorCode(118, "TELEMETRY_TOO_LARGE", False,
        "Client sent a push telemetry request larger than the maximum size the broker will accept."),
    ErrorCode(119, "INVALID_REGISTRATION", False,
        "The controller has considered the broker registration to be invalid."),
    ErrorCode(120, "TRANSACTION_ABORTABLE", False,
        "The server encountered an error with the transaction. The client can abort the transaction to "
        "continue using this transactional ID."),
    ErrorCode(121, "INVALID_RECORD_STATE", False,
        "The record state is invalid. The acknowledgement of delivery could not be completed."),
    ErrorCode(122, "SHARE_SESSION_NOT_FOUND", True, "The share session was not found."),
    ErrorCode(123, "INVALID_SHARE_SESSION_EPOCH", True, "The share session epoch is invalid."),
    ErrorCode(124, "FENCED_STATE_EPOCH", False,
        "The share coordinator rejected the request because the share-group state epoch did not match."),
    ErrorCode(125, "INVALID_VOTER_KEY", False, "The voter key doesn't match the receiving replica's key."),
    ErrorCode(126, "DUPLICATE_VOTER", False, "The voter is already part of the set of voters."),
    ErrorCode(127, "VOTER_NOT_FOUND", False, "The voter is not part of the set of voters."),
    ErrorCode(128, "INVALID_REGULAR_EXPRESSION", False, "The regular expression is not valid."),
    ErrorCode(129, "REBOOTSTRAP_REQUIRED", False,
        "Client metadata is stale. The client should rebootstrap to obtain new metadata."),
    ErrorCode(130, "STREAMS_INVALID_TOPOLOGY", False, "The supplied topology is invalid."),
    ErrorCode(131, "STREAMS_INVALID_TOPOLOGY_EPOCH", False, "The supplied topology epoch is invalid."),
    ErrorCode(132, "STREAMS_TOPOLOGY_FENCED", False, "The supplied topology epoch is outdated."),
    ErrorCode(133, "SHARE_SESSION_LIMIT_REACHED", True, "The limit of share sessions has been reached."),
)

ERRORS: dict[int, ErrorCode] = {row.code: row for row in _TABLE}

_NAMES: dict[int, str] = {row.code: row.name for row in _TABLE}
_DEFINED_NAMES: frozenset[str] = frozenset(_NAMES.values())
HIGHEST = max(_NAMES)  # the highest code the table knows (a later Kafka adds codes above it, never below)
_RETRIABLE: frozenset[int] = frozenset(row.code for row in _TABLE if row.retriable)


def error_name(code: int) -> str:
    """Kafka's name for `code` ("NONE" for 0); `UNKNOWN_ERROR_CODE(<code>)` if Kafka defines none."""
    name = _NAMES.get(code)
    return name if name is not None else f"UNKNOWN_ERROR_CODE({code})"


def is_defined(name: str) -> bool:
    """Whether `name` (error_name's) is a code Kafka defines: False for UNKNOWN_ERROR_CODE(<n>)."""
    return name in _DEFINED_NAMES


def is_retriable(code: int) -> bool:
    """True when Kafka's client may retry a request answered with `code`; False for unknown codes."""
    return code in _RETRIABLE
