"""The rules of Kafka's protocol kwire checks on the wire: one declaration each (issue 46).

A broken rule is a `protocol_violation` finding (kwire.analytics.findings_rules) carrying the rule's
`rule` id (stable: programs match on it), the `side` that broke it (broker or client), `says` (what
the rule says, one line) and `cites` (Kafka's message definition or the KIP that says it). RULES is
the one table: docs/rules.md documents each (what it checks, why an operator cares, a command), and
tests/analytics/test_rules.py holds the doc and the table together.

Where each rule is read: kwire.analytics.rules_read (what one exchange shows), kwire.analytics.rules_state
(what a connection or a partition shows over time, bounded), kwire.analytics.findings_rules (the findings).
A rule that cannot be sure stays silent: each says when in `doc`.
"""

from __future__ import annotations

from typing import NamedTuple

BROKER, CLIENT = "broker", "client"


class Rule(NamedTuple):
    id: str
    side: str  # who breaks it: "broker", "client" or "either" (the side is the finding's)
    severity: str
    says: str
    cites: str
    doc: str  # when it fires and when it stays silent (docs/rules.md)


_DEFS = "clients/src/main/resources/common/message/"

RULES_LIST = (
    Rule("trailing_bytes", "either", "info",
         "A body ends with its message's last field: no bytes are left after it.",
         f"{_DEFS}*Request.json, *Response.json (the api's schema at the header's version)",
         "A request or response body that decodes, with bytes left after its last field. Peers ignore "
         "them; the sender writes a layout Kafka's schema does not have."),
    Rule("malformed_body", "either", "warning",
         "A body decodes by its api's schema at the version its request header names.",
         f"{_DEFS}*Request.json, *Response.json",
         "A body that does not decode (a length past the frame, a count the bytes cannot hold): the "
         "peer cannot read it either. Bodies cut by the snap length or not kept blame nobody and are "
         "not counted."),
    Rule("null_not_nullable", "either", "warning",
         "A string, bytes, records or array field is null only in the versions its schema lists in "
         "nullableVersions; an array's elements are never null.",
         f"{_DEFS}*Request.json, *Response.json (nullableVersions), as Kafka's generated readers check it "
         "('non-nullable field ... was serialized as null')",
         "A body with a null (a length of -1, a compact length of 0) in a field its schema does not declare "
         "nullable at the header's version, named at that field: the first fault, where Kafka's own readers "
         "stop, even when a later field fails too. Counted instead of malformed_body for that body: one that "
         "decodes when the null is read as null has the outcome null_not_nullable (shown, not a decode error), "
         "one that does not is malformed at the null."),
    Rule("version_not_advertised", CLIENT, "warning",
         "A client sends each api at a version within the range the broker advertised in ApiVersions on "
         "that connection.",
         f"KIP-35, KIP-511; {_DEFS}ApiVersionsResponse.json (ApiKeys: MinVersion, MaxVersion)",
         "A request sent after the connection's ApiVersions answer (ErrorCode 0) at a version outside "
         "the range that answer gave for its api, or of an api it did not list. Silent on a connection "
         "whose ApiVersions exchange the capture did not see, and for ApiVersions itself (KIP-511: a "
         "client opens with the newest it speaks)."),
    Rule("api_versions_refusal_layout", BROKER, "info",
         "A broker refusing an ApiVersions version answers UNSUPPORTED_VERSION in the v0 body layout.",
         f"KIP-511; {_DEFS}ApiVersionsResponse.json",
         "An ApiVersions answer that refuses the version asked in a layout of its own (librdkafka's "
         "mock cluster: a one-byte ApiKeys count, no tagged fields), neither v0's (what KIP-511 says a "
         "refusal is written as) nor the version asked. Kafka's Java client reads it as the asked "
         "version and misreads the fields after ErrorCode (a throttle of 1,179,648 ms)."),
    Rule("responses_out_of_order", BROKER, "warning",
         "A broker answers a connection's requests in the order it received them.",
         "the Kafka protocol guide (kafka.apache.org/protocol, 'the server guarantees that on a single TCP "
         "connection, requests will be processed in the order they are sent and responses will return in "
         "that order')",
         "Two answered requests of one connection whose answers came in the other order than the requests. "
         "Checked on the first MAX_ORDERED answered requests of each connection (the document says how many "
         "connections were checked in part)."),
    Rule("error_code_unknown", BROKER, "warning",
         "A response's error codes are codes Kafka defines (org.apache.kafka.common.protocol.Errors).",
         f"{_DEFS}*Response.json (ErrorCode: 'the error code, or 0 if there was no error'); "
         "clients/src/main/java/org/apache/kafka/common/protocol/Errors.java",
         "An answer with an ErrorCode that Kafka's table of errors does not define (kwire.kafka.error_codes: "
         "-1 to HIGHEST). Certain for a code below -1 (Kafka adds codes above its highest, never below); a code "
         "above the table's highest may be one a Kafka newer than the table defines (the detail says the "
         "table's highest). Not checked per api: Kafka's message definitions do not list the codes each api "
         "may return, so a defined code an api does not use is not reported."),
    Rule("latest_below_high_watermark", BROKER, "warning",
         "ListOffsets for the latest offset (Timestamp -1) under read_uncommitted answers the high watermark.",
         f"KIP-98 (IsolationLevel); {_DEFS}ListOffsetsRequest.json (Timestamp -1: latest)",
         "A ListOffsets answer (IsolationLevel 0, Timestamp -1) for a partition whose offset is below the "
         "HighWatermark the same broker gave in a Fetch answer for that partition before it: a high "
         "watermark does not go back. Checked against the broker's first and its highest Fetch high "
         "watermark of the partition; silent when the Fetch came after the ListOffsets."),
    Rule("aborted_transactions_missing", BROKER, "critical",
         "A read_committed Fetch answer lists in AbortedTransactions each aborted transaction whose records "
         "it returns.",
         f"KIP-98; {_DEFS}FetchResponse.json (AbortedTransactions: ProducerId, FirstOffset)",
         "A Fetch answer to a read_committed request (IsolationLevel 1) that holds a producer's transactional "
         "batch and, after it, that producer's ABORT marker, while AbortedTransactions does not name the "
         "producer from an offset at or before the batch: the consumer hands the aborted records to the "
         "application. Proven by the one answer (the marker is in it)."),
    Rule("records_past_last_stable_offset", BROKER, "critical",
         "A read_committed Fetch answer returns no batch at or past the partition's LastStableOffset.",
         f"KIP-98; {_DEFS}FetchResponse.json (LastStableOffset)",
         "A Fetch answer (v4 and up) to a read_committed request with a batch whose base offset is at or "
         "past the LastStableOffset the same answer gives for the partition: records of transactions not "
         "yet decided reach the consumer. Silent when the LastStableOffset is unknown (-1)."),
    Rule("validate_only_created", BROKER, "warning",
         "CreateTopics with validateOnly checks that the topics can be created but creates nothing.",
         f"{_DEFS}CreateTopicsRequest.json (validateOnly: 'If true, check that the topics can be created as "
         "specified, but don't create anything.')",
         "A CreateTopics with validateOnly true answered ErrorCode 0 for a topic (so the topic did not exist: "
         "Kafka answers TOPIC_ALREADY_EXISTS when it does), and a later answer that says the topic exists (a "
         "Metadata answer listing it, a CreateTopics answered TOPIC_ALREADY_EXISTS, a Fetch answer for it) with "
         "no CreateTopics without validateOnly of it and no Metadata request that may create it "
         "(AllowAutoTopicCreation, or a version before 4 naming it) seen before. A create from outside the "
         "capture cannot be told apart: the detail gives the time between the two."),
    Rule("offset_metadata_not_kept", BROKER, "warning",
         "OffsetFetch answers the metadata committed with the offset.",
         f"{_DEFS}OffsetCommitRequest.json, TxnOffsetCommitRequest.json (CommittedMetadata: 'Any associated "
         "metadata the client wants to keep.'); OffsetFetchResponse.json (Metadata: 'The partition metadata.')",
         "An OffsetCommit (or TxnOffsetCommit) with a CommittedMetadata that is not null, answered ErrorCode 0 "
         "for a partition, and a later OffsetFetch answer for the same group and partition giving the same "
         "CommittedOffset with Metadata null or another string, no other commit of it seen between (nor one "
         "answered while the OffsetFetch was asked, nor one unanswered). A commit committed with null metadata "
         "is not compared (Kafka keeps it as the empty string); after a TxnOffsetCommit, silent when an earlier "
         "commit gave the same offset (the transaction may have aborted)."),
    Rule("consumer_group_describe_classic", BROKER, "warning",
         "ConsumerGroupDescribe answers GROUP_ID_NOT_FOUND for a group that is not a consumer-protocol group.",
         f"KIP-848; {_DEFS}ConsumerGroupDescribeResponse.json (Supported errors: GROUP_ID_NOT_FOUND); Kafka's "
         "GroupMetadataManager: 'Group %s is not a consumer group'",
         "A ConsumerGroupDescribe answered ErrorCode 0 for a group whose latest ListGroups answer before it "
         "(v5 and up: GroupType) said classic, with no ConsumerGroupHeartbeat joining the group (MemberEpoch 0, "
         "which may convert it) from that ListGroups on. Classic members alone do not prove a classic group "
         "(KIP-848 lets them join a consumer group), so only the broker's own GroupType is taken."),
    Rule("throttle_not_honoured", CLIENT, "warning",
         "A client sends nothing more on a connection until the ThrottleTimeMs of an answer its broker sent "
         "before throttling has passed.",
         f"KIP-219; {_DEFS}*Response.json ('Starting in version N, on quota violation, brokers send out responses "
         "before throttling'), the Java client's AbstractResponse.shouldClientThrottle",
         "A request sent on a connection after an answer with ThrottleTimeMs > 0, more than THROTTLE_START_MS "
         "after it and earlier than its time plus the throttle less a tolerance (THROTTLE_SLACK_MS or a tenth "
         "of the throttle, the larger), where the answer's api and version are ones a broker answers before "
         "it throttles (THROTTLED_AFTER_ANSWER). Silent on older versions (the broker held the answer back "
         "for the throttle instead). The requests checked are the connection's throttled ones and its first "
         "MAX_ORDERED answered; the first MAX_WINDOWS throttled answers of each connection are looked at "
         "(the summary says when a connection had more)."),
    Rule("closed_instead_of_answering", BROKER, "warning",
         "A broker answers every request it reads, with an error code where it cannot serve it; it does not close "
         "the connection instead.",
         f"the Kafka protocol guide (kafka.apache.org/protocol: requests on a connection are processed in order and "
         f"their responses return in that order); KIP-511 (a broker answers even an ApiVersions version it does not "
         f"support, UNSUPPORTED_VERSION); {_DEFS}*Response.json (ErrorCode); the Java client names the close a "
         f"disconnect (NetworkClient: 'Disconnected from node', the request failed)",
         "A request left unanswered because its broker closed the connection: the broker's FIN or RST came before "
         "the client's (kwire.native.tcp_flows records who closed first; an exchange's `closed_by`), the oldest of those pending "
         "at the close (a broker reads a connection's requests in order: the later ones are not counted), its body "
         "decoded whole, "
         "and its api and version are in the range the broker advertised in ApiVersions on that connection (on a "
         "connection whose ApiVersions the capture did not see, on the first of the same broker's that has one). "
         "Silent for ApiVersions itself, where the version was not advertised (version_not_advertised), where the "
         "client closed first (a consumer closing with a Fetch in flight), and where the broker may be shutting "
         "down: it answered no request after the close, on any connection (the capture ended, or the broker went "
         "away), or it closed another connection open at the same time within SHUTDOWN_NS of this one. The first "
         "MAX_CLOSES such requests are looked at."),
)

RULES: dict[str, Rule] = {r.id: r for r in RULES_LIST}
SHUTDOWN_NS = 1_000_000_000  # closed_instead_of_answering: closes of one broker this near may be its shutdown
MAX_CLOSES = 256  # requests left unanswered by a broker's close, kept for closed_instead_of_answering
MAX_ORDERED = 256  # answered requests per connection kept for responses_out_of_order

# throttle_not_honoured: the first version of each api whose answer a broker sends before it throttles (KIP-219),
# from the comments of Kafka's message definitions ("Starting in version N, on quota violation, brokers send out
# responses before throttling") and, for the apis whose definitions do not say (Produce, and those made after
# KIP-219: 0), the Java client's <Api>Response.shouldClientThrottle (apache/kafka trunk 1eb7644, 2024-10-25). An
# api missing here is one the Java client never throttles itself on (AbstractResponse's default: false).
THROTTLED_AFTER_ANSWER = {
    "Produce": 6, "Fetch": 8, "ListOffsets": 3, "Metadata": 6, "OffsetCommit": 4, "OffsetFetch": 4,
    "FindCoordinator": 2, "JoinGroup": 3, "Heartbeat": 2, "LeaveGroup": 2, "SyncGroup": 2, "DescribeGroups": 2,
    "ListGroups": 2, "ApiVersions": 2, "CreateTopics": 3, "DeleteTopics": 2, "DeleteRecords": 1,
    "InitProducerId": 1, "AddPartitionsToTxn": 1, "AddOffsetsToTxn": 1, "EndTxn": 1, "TxnOffsetCommit": 1,
    "DescribeAcls": 1, "CreateAcls": 1, "DeleteAcls": 1, "DescribeConfigs": 2, "AlterConfigs": 1,
    "AlterReplicaLogDirs": 1, "DescribeLogDirs": 1, "CreatePartitions": 1, "CreateDelegationToken": 1,
    "RenewDelegationToken": 1, "ExpireDelegationToken": 1, "DescribeDelegationToken": 1, "DeleteGroups": 1,
    "ElectLeaders": 0, "IncrementalAlterConfigs": 0, "AlterPartitionReassignments": 0,
    "ListPartitionReassignments": 0, "OffsetDelete": 0, "DescribeUserScramCredentials": 0,
    "AlterUserScramCredentials": 0, "BrokerRegistration": 0, "BrokerHeartbeat": 0, "UnregisterBroker": 0,
    "DescribeTopicPartitions": 0,
}
MAX_WINDOWS = 16  # throttled answers per connection kept for throttle_not_honoured
THROTTLE_START_MS = 1  # a request within this of the answer may have been written before the client read it
THROTTLE_SLACK_MS = 10  # the throttle's end: a client's timer and the capture's clock


def throttled_after_answer(api, version) -> bool:
    """Did the broker send this answer before throttling (KIP-219), so that the client must wait its throttle?"""
    first = THROTTLED_AFTER_ANSWER.get(api)
    return first is not None and type(version) is int and version >= first
