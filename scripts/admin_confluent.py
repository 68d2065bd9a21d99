"""confluent-kafka's AdminClient (librdkafka) doing an operator's admin work, each operation's result in
the truth file (scripts/admin_truth.py). Run by scripts/record_admin.py inside its namespace.

A future's outcome is recorded per item: {"ok": result} or {"error": "KafkaError{...}"}; an operation
that raises before any future exists is an "error" line.
"""

from __future__ import annotations

import subprocess
import sys
import time

from admin_truth import AdminTruth, jsonable

TOPIC_A, TOPIC_B = "kwire-admin-orders", "kwire-admin-audit"
GROUP = "kwire-admin-group"
TIMEOUT = 15.0


def _outcomes(futures) -> dict:
    out = {}
    items = futures.items() if isinstance(futures, dict) else [("result", futures)]
    for key, future in items:
        try:
            out[str(key)] = {"ok": jsonable(future.result(TIMEOUT))}
        except Exception as exc:  # noqa: BLE001
            out[str(key)] = {"error": _error_text(exc)}
    return out


def _error_text(exc: BaseException) -> str:
    error = exc.args[0] if exc.args else None
    if hasattr(error, "name") and hasattr(error, "str"):  # a KafkaError
        return f"KafkaError{{code={error.name()},str={error.str()!r}}}"
    return f"{type(exc).__name__}: {exc}".rstrip(": ")


def run(bootstrap: str, truth_path: str, broker: str) -> dict:
    global TIMEOUT
    if broker == "mock":  # the mock has no controller (ControllerId 0 names no broker): admin calls wait out
        TIMEOUT = 5.0
    from confluent_kafka import ConsumerGroupTopicPartitions, ElectionType, TopicCollection, TopicPartition
    from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions,
                                       NewTopic, ResourceType)

    truth = AdminTruth(truth_path, "confluent-kafka")
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kwire-admin-confluent"})
    op = truth.op

    op("create_topics", {"topics": [{"topic": TOPIC_A, "num_partitions": 3, "replication_factor": 1,
                                     "config": {"retention.ms": "3600000"}},
                                    {"topic": TOPIC_B, "num_partitions": 2, "replication_factor": 1}]},
       lambda: _outcomes(admin.create_topics([NewTopic(TOPIC_A, 3, 1, config={"retention.ms": "3600000"}),
                                              NewTopic(TOPIC_B, 2, 1)], operation_timeout=10)))
    time.sleep(1)
    op("create_partitions", {"topic": TOPIC_B, "new_total_count": 4},
       lambda: _outcomes(admin.create_partitions([NewPartitions(TOPIC_B, 4)])))
    op("describe_cluster", {}, lambda: _outcomes(admin.describe_cluster(include_authorized_operations=True)))
    op("describe_topics", {"topics": [TOPIC_A, TOPIC_B]},
       lambda: _outcomes(admin.describe_topics(TopicCollection([TOPIC_A, TOPIC_B]))))
    broker_id = _first_broker(admin)
    op("describe_configs", {"resources": [["TOPIC", TOPIC_A], ["BROKER", broker_id]]},
       lambda: _outcomes(admin.describe_configs([ConfigResource(ResourceType.TOPIC, TOPIC_A),
                                                 ConfigResource(ResourceType.BROKER, broker_id)])))
    op("alter_configs", {"resource": ["TOPIC", TOPIC_A], "set_config": {"retention.ms": "7200000"}},
       lambda: _outcomes(admin.alter_configs([ConfigResource(ResourceType.TOPIC, TOPIC_A,
                                                             set_config={"retention.ms": "7200000"})])))
    op("incremental_alter_configs",
       {"resources": [{"resource": ["TOPIC", TOPIC_A], "SET": {"cleanup.policy": "compact"}},
                      {"resource": ["BROKER", broker_id], "SET": {"ssl.key.password": "kwire-s3cret-key"}}]},
       lambda: _outcomes(admin.incremental_alter_configs([
           ConfigResource(ResourceType.TOPIC, TOPIC_A, incremental_configs=[
               ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.SET)]),
           ConfigResource(ResourceType.BROKER, broker_id, incremental_configs=[
               ConfigEntry("ssl.key.password", "kwire-s3cret-key", incremental_operation=AlterConfigOpType.SET)]),
       ])))
    for name in ("create_acls", "describe_acls", "delete_acls"):
        isolated(name, bootstrap, truth_path)
    produced = _produce(bootstrap, TOPIC_A, truth)
    _consume_commit(bootstrap, TOPIC_A, truth)
    op("delete_records", {"partitions": [[TOPIC_A, 0, 2]]},
       lambda: _outcomes(admin.delete_records([TopicPartition(TOPIC_A, 0, 2)])))
    op("list_offsets", {"partitions": [[TOPIC_A, 0, "latest"]]},
       lambda: _outcomes(admin.list_offsets({TopicPartition(TOPIC_A, 0): _latest()})))
    op("list_consumer_groups", {}, lambda: _outcomes(admin.list_consumer_groups()))
    op("describe_consumer_groups", {"groups": [GROUP]}, lambda: _outcomes(admin.describe_consumer_groups([GROUP])))
    op("list_consumer_group_offsets", {"group": GROUP},
       lambda: _outcomes(admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(GROUP)])))
    op("alter_consumer_group_offsets", {"group": GROUP, "partitions": [[TOPIC_A, 0, 1], [TOPIC_A, 1, 0]]},
       lambda: _outcomes(admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(
           GROUP, [TopicPartition(TOPIC_A, 0, 1), TopicPartition(TOPIC_A, 1, 0)])])))
    op("delete_consumer_groups", {"groups": [GROUP]}, lambda: _outcomes(admin.delete_consumer_groups([GROUP])))
    op("elect_leaders", {"election_type": "PREFERRED", "partitions": [[TOPIC_A, 0]]},
       lambda: _outcomes(admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(TOPIC_A, 0)])))
    for name in ("describe_scram_all", "upsert_scram", "describe_scram_alice", "delete_scram"):
        isolated(name, bootstrap, truth_path)
    op("delete_topics", {"topics": [TOPIC_A, TOPIC_B]},
       lambda: _outcomes(admin.delete_topics([TOPIC_A, TOPIC_B], operation_timeout=10)))
    truth.close()
    return {"operations": truth.done, "failed": truth.failed, "produced": produced}


def _latest():
    from confluent_kafka.admin import OffsetSpec

    return OffsetSpec.latest()


def _acl(binding) -> dict:
    return {"restype": binding.restype.name, "name": binding.name, "resource_pattern_type":
            binding.resource_pattern_type.name, "principal": binding.principal, "host": binding.host,
            "operation": binding.operation.name, "permission_type": binding.permission_type.name}


def _first_broker(admin) -> str:
    metadata = admin.list_topics(timeout=TIMEOUT)
    return str(min(metadata.brokers))


def _produce(bootstrap: str, topic: str, truth: AdminTruth) -> int:
    """Five records on partition 0 (so DeleteRecords has something to delete)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "client.id": "kwire-admin-producer", "linger.ms": 5})
    delivered = []
    for i in range(5):
        producer.produce(topic, key=f"k{i}", value=f"order-{i}", partition=0,
                         on_delivery=lambda err, msg: delivered.append(err is None))
    truth.op("produce", {"topic": topic, "partition": 0, "records": 5},
             lambda: {"undelivered": producer.flush(TIMEOUT), "delivered": sum(delivered)})
    return sum(delivered)


def _consume_commit(bootstrap: str, topic: str, truth: AdminTruth) -> None:
    """A group member that reads partition 0 and commits, then leaves (the group then has offsets)."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": "kwire-admin-consumer", "group.id": GROUP,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})

    def read_and_commit():
        consumer.assign([TopicPartition(topic, 0, 0)])
        got, deadline = [], time.monotonic() + TIMEOUT
        while len(got) < 5 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                got.append(msg.offset())
        committed = consumer.commit(offsets=[TopicPartition(topic, 0, (max(got) + 1) if got else 0)],
                                    asynchronous=False)
        return {"offsets_read": got, "committed": [[tp.topic, tp.partition, tp.offset] for tp in committed]}

    try:
        truth.op("consume_commit", {"group": GROUP, "topic": topic, "partition": 0}, read_and_commit)
    finally:
        consumer.close()


# Operations run each in a process of its own: librdkafka aborts the whole process (an assertion in
# rd_kafka_admin_response_parse) on some answers it cannot parse (Tansu's CreateAcls), so a crash costs
# one operation, recorded as an error with the client's own log lines.


def _acl_bindings():
    from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

    return [AclBinding(ResourceType.TOPIC, TOPIC_A, ResourcePatternType.LITERAL, "User:alice", "*",
                       AclOperation.READ, AclPermissionType.ALLOW),
            AclBinding(ResourceType.GROUP, "kwire-", ResourcePatternType.PREFIXED, "User:bob", "10.0.0.1",
                       AclOperation.DESCRIBE, AclPermissionType.DENY)]


def op_create_acls(admin):
    acls = _acl_bindings()
    return "create_acls", {"acls": [_acl(a) for a in acls]}, lambda: _outcomes(admin.create_acls(acls))


def op_describe_acls(admin):
    from confluent_kafka.admin import (AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType,
                                       ResourceType)

    any_filter = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                  AclOperation.ANY, AclPermissionType.ANY)
    return "describe_acls", {"filter": "ANY"}, lambda: _outcomes(admin.describe_acls(any_filter))


def op_delete_acls(admin):
    from confluent_kafka.admin import (AclBindingFilter, AclOperation, AclPermissionType, ResourcePatternType,
                                       ResourceType)

    alice = AclBindingFilter(ResourceType.TOPIC, TOPIC_A, ResourcePatternType.LITERAL, "User:alice", None,
                             AclOperation.ANY, AclPermissionType.ANY)
    return ("delete_acls", {"filters": [{"resource_type": "TOPIC", "name": TOPIC_A, "pattern_type": "LITERAL",
                                         "principal": "User:alice"}]},
            lambda: _outcomes(admin.delete_acls([alice])))


def op_describe_scram_all(admin):
    return ("describe_user_scram_credentials", {"users": None},
            lambda: _outcomes(admin.describe_user_scram_credentials()))


def op_upsert_scram(admin):
    from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

    upsert = UserScramCredentialUpsertion("alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                          b"alice-password", b"kwire-salt-0123")
    return ("alter_user_scram_credentials",
            {"upsertions": [{"user": "alice", "mechanism": "SCRAM_SHA_256", "iterations": 4096,
                             "password": "alice-password", "salt": "kwire-salt-0123"}]},
            lambda: _outcomes(admin.alter_user_scram_credentials([upsert])))


def op_describe_scram_alice(admin):
    return ("describe_user_scram_credentials", {"users": ["alice"]},
            lambda: _outcomes(admin.describe_user_scram_credentials(["alice"])))


def op_delete_scram(admin):
    from confluent_kafka.admin import ScramMechanism, UserScramCredentialDeletion

    return ("alter_user_scram_credentials", {"deletions": [{"user": "alice", "mechanism": "SCRAM_SHA_256"}]},
            lambda: _outcomes(admin.alter_user_scram_credentials(
                [UserScramCredentialDeletion("alice", ScramMechanism.SCRAM_SHA_256)])))


ISOLATED = {f.__name__[3:]: f for f in (op_create_acls, op_describe_acls, op_delete_acls, op_describe_scram_all,
                                        op_upsert_scram, op_describe_scram_alice, op_delete_scram)}


def isolated(name: str, bootstrap: str, truth_path: str) -> None:
    """Run ISOLATED[name] in a child process; a crash is an error line with the client's last log lines."""
    proc = subprocess.run([sys.executable, __file__, name, bootstrap, truth_path], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        operation, arguments, _ = ISOLATED[name](None)
        truth = AdminTruth(truth_path, "confluent-kafka")
        log = [line for line in proc.stderr.splitlines() if line.strip()][-4:]
        truth.write({"ts": round(time.time(), 6), "client": "confluent-kafka", "operation": operation,
                     "arguments": jsonable(arguments),
                     "error": f"process exited {proc.returncode}: " + " | ".join(log)})
        truth.close()


def _isolated_main(name: str, bootstrap: str, truth_path: str) -> None:
    from confluent_kafka.admin import AdminClient

    truth = AdminTruth(truth_path, "confluent-kafka")
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kwire-admin-confluent"})
    truth.op(*ISOLATED[name](admin))
    truth.close()


if __name__ == "__main__":
    _isolated_main(*sys.argv[1:4])
