"""aiokafka's AIOKafkaAdminClient doing what it can of an operator's admin work (topics, partitions,
configs, records, groups, cluster), each operation's return value or exception in the truth file
(scripts/admin_truth.py). Run by scripts/record_admin.py in its namespace.

aiokafka has no ACL, SCRAM or incremental-config calls; AlterConfigs (the whole-set api) is what it sends.
"""

from __future__ import annotations

import asyncio

from admin_truth import AdminTruth

TOPIC_A, TOPIC_B = "kwire-aio-orders", "kwire-aio-audit"
GROUP = "kwire-aio-group"


def run(bootstrap: str, truth_path: str, broker: str) -> dict:
    return asyncio.run(_run(bootstrap, truth_path))


async def _run(bootstrap: str, truth_path: str) -> dict:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic, RecordsToDelete
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

    truth = AdminTruth(truth_path, "aiokafka")
    op = truth.aop
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="kwire-admin-aiokafka", request_timeout_ms=8000)
    await admin.start()
    await op("create_topics", {"topics": [{"topic": TOPIC_A, "num_partitions": 3, "replication_factor": 1,
                                           "config": {"retention.ms": "3600000"}},
                                          {"topic": TOPIC_B, "num_partitions": 2, "replication_factor": 1}]},
             lambda: admin.create_topics([NewTopic(TOPIC_A, 3, 1, topic_configs={"retention.ms": "3600000"}),
                                          NewTopic(TOPIC_B, 2, 1)], timeout_ms=5000))
    await op("create_partitions", {"topic": TOPIC_B, "new_total_count": 4},
             lambda: admin.create_partitions({TOPIC_B: NewPartitions(4)}, timeout_ms=5000))
    await op("list_topics", {}, admin.list_topics)
    cluster = await op("describe_cluster", {}, admin.describe_cluster)
    broker_id = str(min(b["node_id"] for b in cluster["brokers"])) if cluster else "0"
    await op("describe_topics", {"topics": [TOPIC_A, TOPIC_B]}, lambda: admin.describe_topics([TOPIC_A, TOPIC_B]))
    await op("describe_configs", {"resources": [["TOPIC", TOPIC_A], ["BROKER", broker_id]]},
             lambda: admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, TOPIC_A),
                                             ConfigResource(ConfigResourceType.BROKER, broker_id)],
                                            include_synonyms=True))
    await op("alter_configs", {"resources": [{"resource": ["TOPIC", TOPIC_A], "set": {"retention.ms": "7200000"}},
                                             {"resource": ["BROKER", broker_id],
                                              "set": {"ssl.keystore.password": "aio-keystore-s3cret"}}]},
             lambda: admin.alter_configs([
                 ConfigResource(ConfigResourceType.TOPIC, TOPIC_A, {"retention.ms": "7200000"}),
                 ConfigResource(ConfigResourceType.BROKER, broker_id,
                                {"ssl.keystore.password": "aio-keystore-s3cret"})]))
    await op("produce", {"topic": TOPIC_A, "partition": 0, "records": 5},
             lambda: _produce(bootstrap, AIOKafkaProducer))
    await op("consume_commit", {"group": GROUP, "topic": TOPIC_A, "partition": 0},
             lambda: _consume_commit(bootstrap, AIOKafkaConsumer, TopicPartition))
    await op("delete_records", {"partitions": [[TOPIC_A, 0, 2]]},
             lambda: admin.delete_records({TopicPartition(TOPIC_A, 0): RecordsToDelete(2)}, timeout_ms=5000))
    await op("list_consumer_groups", {}, admin.list_consumer_groups)
    await op("describe_consumer_groups", {"groups": [GROUP]}, lambda: admin.describe_consumer_groups([GROUP]))
    await op("list_consumer_group_offsets", {"group": GROUP}, lambda: admin.list_consumer_group_offsets(GROUP))
    await op("find_coordinator", {"group": GROUP}, lambda: admin.find_coordinator(GROUP))
    await op("delete_topics", {"topics": [TOPIC_A, TOPIC_B]},
             lambda: admin.delete_topics([TOPIC_A, TOPIC_B], timeout_ms=5000))
    await admin.close()
    truth.close()
    return {"operations": truth.done, "failed": truth.failed}


async def _produce(bootstrap: str, producer_class) -> dict:
    producer = producer_class(bootstrap_servers=bootstrap, client_id="kwire-aio-producer", linger_ms=5)
    await producer.start()
    try:
        sent = [await producer.send_and_wait(TOPIC_A, key=f"k{i}".encode(), value=f"order-{i}".encode(), partition=0)
                for i in range(5)]
    finally:
        await producer.stop()
    return {"offsets": [m.offset for m in sent]}


async def _consume_commit(bootstrap: str, consumer_class, tp_class) -> dict:
    """Read partition 0 in a group (manual assignment) and commit, so the group has offsets."""
    consumer = consumer_class(bootstrap_servers=bootstrap, client_id="kwire-aio-consumer", group_id=GROUP,
                              enable_auto_commit=False, auto_offset_reset="earliest")
    await consumer.start()
    try:
        tp = tp_class(TOPIC_A, 0)
        consumer.assign([tp])
        batches = await consumer.getmany(tp, timeout_ms=5000)
        offsets = [m.offset for m in batches.get(tp, [])]
        await consumer.commit({tp: (max(offsets) + 1) if offsets else 0})
    finally:
        await consumer.stop()
    return {"offsets_read": offsets}
