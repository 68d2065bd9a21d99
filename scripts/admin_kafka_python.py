"""kafka-python's KafkaAdminClient doing an operator's admin work, each operation's return value (or
exception) in the truth file (scripts/admin_truth.py). Run by scripts/record_admin.py in its namespace.

kafka-python picks each api's version from the broker's ApiVersions answer and refuses locally
(IncompatibleBrokerVersion, UnsupportedVersionError) what the broker does not offer: such an operation
is an error line with nothing on the wire. `run_pinned` runs the same work with the client told a
broker version (api_version=(3, 5), a setting users give to skip the probe): it then sends what the
broker does not offer, and the broker's answer (Tansu closes the connection) is on the wire too.
"""

from __future__ import annotations

from admin_truth import AdminTruth

TOPIC_A, TOPIC_B = "kwire-kp-orders", "kwire-kp-audit"
GROUP = "kwire-kp-group"
PINNED: tuple | None = None  # api_version given to every client (run_pinned)


def run(bootstrap: str, truth_path: str, broker: str) -> dict:
    from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, AlterConfigOp,
                             ConfigResource, ConfigResourceType, NewTopic, ResourcePattern, ResourcePatternFilter,
                             ResourceType, ScramMechanism, UserScramCredentialDeletion, UserScramCredentialUpsertion)
    from kafka.structs import OffsetAndMetadata

    truth = AdminTruth(truth_path, "kafka-python" if PINNED is None else f"kafka-python api_version={PINNED}")
    op = truth.op
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kwire-admin-kafka-python",
                             request_timeout_ms=8000, **_version_hint(broker))
    op("create_topics", {"topics": [{"topic": TOPIC_A, "num_partitions": 3, "replication_factor": 1,
                                     "config": {"retention.ms": "3600000"}},
                                    {"topic": TOPIC_B, "num_partitions": 2, "replication_factor": 1}]},
       lambda: admin.create_topics([NewTopic(TOPIC_A, 3, 1, topic_configs={"retention.ms": "3600000"}),
                                    NewTopic(TOPIC_B, 2, 1)], timeout_ms=5000))
    op("create_partitions", {"topic": TOPIC_B, "new_total_count": 4},
       lambda: admin.create_partitions({TOPIC_B: 4}, timeout_ms=5000))
    op("list_topics", {}, admin.list_topics)
    cluster = op("describe_cluster", {}, admin.describe_cluster)
    broker_id = str(min(b["broker_id"] for b in cluster["brokers"])) if cluster else "0"
    op("describe_topics", {"topics": [TOPIC_A, TOPIC_B]}, lambda: admin.describe_topics([TOPIC_A, TOPIC_B]))
    op("describe_topic_partitions", {"topics": [TOPIC_A]}, lambda: admin.describe_topic_partitions([TOPIC_A]))
    op("describe_configs", {"resources": [["TOPIC", TOPIC_A], ["BROKER", broker_id]]},
       lambda: admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC_A),
                                       ConfigResource(ConfigResourceType.BROKER, broker_id)], config_filter="all"))
    op("alter_configs", {"incremental": False, "resource": ["TOPIC", TOPIC_A], "set": {"retention.ms": "7200000"}},
       lambda: admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC_A, {"retention.ms": "7200000"})],
                                   incremental=False, raise_on_unknown=False))
    op("alter_configs", {"incremental": True, "resource": ["TOPIC", TOPIC_A], "SET": {"cleanup.policy": "compact"}},
       lambda: admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC_A,
                                                   {"cleanup.policy": (AlterConfigOp.SET, "compact")})],
                                   incremental=True, raise_on_unknown=False))
    op("alter_configs", {"incremental": True, "resource": ["BROKER", broker_id],
                         "SET": {"sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule "
                                                     "required username=\"kp\" password=\"kp-s3cret\";"}},
       lambda: admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, broker_id, {"sasl.jaas.config": (
           AlterConfigOp.SET, "org.apache.kafka.common.security.plain.PlainLoginModule required "
                              "username=\"kp\" password=\"kp-s3cret\";")})], incremental=True, raise_on_unknown=False))
    acl = ACL("User:carol", "*", ACLOperation.WRITE, ACLPermissionType.ALLOW,
              ResourcePattern(ResourceType.TOPIC, TOPIC_A, ACLResourcePatternType.LITERAL))
    op("create_acls", {"acls": [{"principal": "User:carol", "host": "*", "operation": "WRITE",
                                 "permission_type": "ALLOW", "resource_type": "TOPIC", "name": TOPIC_A,
                                 "pattern_type": "LITERAL"}]}, lambda: admin.create_acls([acl]))
    any_filter = ACLFilter(None, None, ACLOperation.ANY, ACLPermissionType.ANY,
                           ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))
    op("describe_acls", {"filter": "ANY"}, lambda: admin.describe_acls(any_filter))
    carol = ACLFilter("User:carol", None, ACLOperation.ANY, ACLPermissionType.ANY,
                      ResourcePatternFilter(ResourceType.TOPIC, TOPIC_A, ACLResourcePatternType.LITERAL))
    op("delete_acls", {"filters": [{"principal": "User:carol", "resource_type": "TOPIC", "name": TOPIC_A}]},
       lambda: admin.delete_acls([carol]))
    op("produce", {"topic": TOPIC_A, "partition": 0, "records": 5}, lambda: _produce(bootstrap, KafkaProducer, broker))
    op("delete_records", {"partitions": [[TOPIC_A, 0, 2]]},
       lambda: admin.delete_records({TopicPartition(TOPIC_A, 0): 2}, timeout_ms=5000))
    op("list_partition_offsets", {"partitions": [[TOPIC_A, 0, "latest"]]},
       lambda: admin.list_partition_offsets({TopicPartition(TOPIC_A, 0): -1}))
    op("alter_group_offsets", {"group": GROUP, "offsets": [[TOPIC_A, 0, 3], [TOPIC_A, 1, 0]]},
       lambda: admin.alter_group_offsets(GROUP, {TopicPartition(TOPIC_A, 0): OffsetAndMetadata(3, "", -1),
                                                 TopicPartition(TOPIC_A, 1): OffsetAndMetadata(0, "", -1)}))
    op("list_groups", {}, admin.list_groups)
    op("describe_groups", {"groups": [GROUP]}, lambda: admin.describe_groups([GROUP]))
    op("list_group_offsets", {"group": GROUP}, lambda: admin.list_group_offsets({GROUP: None}))
    op("delete_group_offsets", {"group": GROUP, "partitions": [[TOPIC_A, 1]]},
       lambda: admin.delete_group_offsets(GROUP, [TopicPartition(TOPIC_A, 1)]))
    op("delete_groups", {"groups": [GROUP]}, lambda: admin.delete_groups([GROUP]))
    op("list_partition_reassignments", {}, admin.list_partition_reassignments)
    op("elect_leaders", {"election_type": "PREFERRED", "partitions": {TOPIC_A: [0]}},
       lambda: admin.elect_leaders(0, {TOPIC_A: [0]}, raise_errors=False))
    op("describe_log_dirs", {}, admin.describe_log_dirs)
    op("describe_producers", {"partitions": [[TOPIC_A, 0]]},
       lambda: admin.describe_producers([TopicPartition(TOPIC_A, 0)]))
    op("list_transactions", {}, admin.list_transactions)
    op("describe_features", {}, admin.describe_features)
    op("describe_user_scram_credentials", {"users": None}, admin.describe_user_scram_credentials)
    op("alter_user_scram_credentials",
       {"upsertions": [{"user": "dave", "mechanism": "SCRAM_SHA_512", "iterations": 8192,
                        "password": "dave-password", "salt": "kwire-kp-salt"}]},
       lambda: admin.alter_user_scram_credentials([UserScramCredentialUpsertion(
           "dave", ScramMechanism.SCRAM_SHA_512, "dave-password", iterations=8192, salt=b"kwire-kp-salt")]))
    op("describe_user_scram_credentials", {"users": ["dave"]}, lambda: admin.describe_user_scram_credentials(["dave"]))
    op("alter_user_scram_credentials", {"deletions": [{"user": "dave", "mechanism": "SCRAM_SHA_512"}]},
       lambda: admin.alter_user_scram_credentials([UserScramCredentialDeletion("dave", ScramMechanism.SCRAM_SHA_512)]))
    op("delete_topics", {"topics": [TOPIC_A, TOPIC_B]},
       lambda: admin.delete_topics([TOPIC_A, TOPIC_B], timeout_ms=5000))
    admin.close()
    truth.close()
    return {"operations": truth.done, "failed": truth.failed}


def _produce(bootstrap: str, producer_class, broker: str) -> dict:
    producer = producer_class(bootstrap_servers=bootstrap, client_id="kwire-kp-producer", linger_ms=5,
                              **_version_hint(broker))
    futures = [producer.send(TOPIC_A, key=f"k{i}".encode(), value=f"order-{i}".encode(), partition=0)
               for i in range(5)]
    producer.flush(10)
    offsets = [f.get(timeout=10).offset for f in futures]
    producer.close()
    return {"offsets": offsets}


def run_pinned(bootstrap: str, truth_path: str, broker: str) -> dict:
    global PINNED
    PINNED = (3, 5)
    return run(bootstrap, truth_path, broker)


def _version_hint(broker: str) -> dict:
    """The mock refuses kafka-python's ApiVersions v3 probe with UNSUPPORTED_VERSION in a body
    kafka-python cannot read (the mock's layout, see kwire.codec.version_refusal), and kafka-python
    gives up bootstrapping. Told a broker version before ApiVersions v3 (2.3), it asks v2 first."""
    if PINNED is not None:
        return {"api_version": PINNED}
    return {"api_version": (2, 3)} if broker == "mock" else {}
