"""The end-to-end recordings of scripts/record_problems.py whose clients are not its own: each a scenario
(scene, broker) run inside the recording's namespace, with the clients' own times as truth (issue 47):

- `kafkajs(scene, tansu)`: KafkaJS (scripts/e2e_kafkajs.js, node; KafkaJS from `KWIRE_NODE_MODULES`, an
  `npm install kafkajs@2.2.4` folder's node_modules, never committed) producing to kwire-js-e2e (2
  partitions) on Tansu, two KafkaJS consumers in groups of their own reading it; truth: the producer's
  `sent` / `delivered` (n, partition, offset) and each consumer's `consumed` (partition, offset).
- `aiokafka(scene, tansu)`: aiokafka's producer (`kwire-aio-producer`, acks all) sending 20 records, one
  send_and_wait() each, 5 a second, round-robin over kwire-aio-e2e's 2 partitions on Tansu; two aiokafka
  consumers (fetch_max_wait_ms 500) from its start: `kwire-aio-member` in group kwire-aio-e2e (subscribed) and
  `kwire-aio-reader` (assigned, no group); truth as KafkaJS's: `sent` / `delivered` (n, partition, offset), each
  consumer's `consumed` (partition, offset) as getone() returns the record; aiokafka's log (INFO) to stderr.
- `share(scene, mock)`: a confluent-kafka Producer (`kwire-share-producer`, not idempotent, connected
  first) writing 30 records, 10 a second, to kwire-e2e-tasks (1 partition) on librdkafka's mock cluster, each logged `sent` (n) before its produce()
  call and `acked` (n, offset) from its delivery callback; a ShareConsumer (scripts/problem_roles.py's
  share role, group kwire-e2e-workers) logging each record its poll returns (`delivered`, with its
  delivery count) and acknowledging by offset % 10: 3 released once, 6 rejected, 9 released twice (so
  delivered three times), the rest accepted.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path

from problem_kit import Truth, create_topics

HERE = Path(__file__).resolve().parent
JS_TOPIC = "kwire-js-e2e"
SHARE_TOPIC = "kwire-e2e-tasks"
SHARE_RULES = {"modulus": 10, "3": ["release", 1], "6": ["reject", 1], "9": ["release", 2]}


def _node_modules() -> str:
    where = os.environ.get("KWIRE_NODE_MODULES", "")
    if not (Path(where) / "kafkajs" / "package.json").exists():
        raise RuntimeError("KWIRE_NODE_MODULES must name a node_modules folder holding kafkajs "
                           "(npm install --prefix DIR kafkajs@2.2.4)")
    return where


def kafkajs(scene, tansu) -> None:
    modules = _node_modules()
    create_topics(tansu.bootstrap, {JS_TOPIC: 2})
    package = json.loads((Path(modules) / "kafkajs" / "package.json").read_text())
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    scene.summary.update(kafkajs=package["version"], node=node)
    scene.truth("kafkajs_started", topic=JS_TOPIC, partitions=2, messages=20)
    proc = subprocess.run(["node", str(HERE / "e2e_kafkajs.js"), tansu.bootstrap, scene.truth_path, JS_TOPIC, "2", "20"],
                          env=dict(os.environ, NODE_PATH=modules, KAFKAJS_NO_PARTITIONER_WARNING="1"),
                          stdout=subprocess.PIPE, text=True, timeout=120)
    lines = proc.stdout.strip().splitlines()
    summary = json.loads(lines[-1]) if lines else {"error": "no summary"}
    if proc.returncode != 0 or "error" in summary:
        raise RuntimeError(f"e2e_kafkajs.js exited {proc.returncode}: {summary.get('error')}")
    scene.summary["kafkajs_run"] = summary


AIO_TOPIC = "kwire-aio-e2e"


async def _aio_consume(consumer, truth: Truth, stop) -> None:
    while not stop.is_set():
        try:
            msg = await asyncio.wait_for(consumer.getone(), 0.5)
        except asyncio.TimeoutError:
            continue
        truth("consumed", topic=msg.topic, partition=msg.partition, offset=msg.offset)


async def _aio_run(scene, bootstrap: str) -> dict:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    member = AIOKafkaConsumer(AIO_TOPIC, bootstrap_servers=bootstrap, client_id="kwire-aio-member",
                              group_id="kwire-aio-e2e", auto_offset_reset="earliest", enable_auto_commit=False,
                              fetch_max_wait_ms=500)
    reader = AIOKafkaConsumer(bootstrap_servers=bootstrap, client_id="kwire-aio-reader", group_id=None,
                              enable_auto_commit=False, fetch_max_wait_ms=500)
    await member.start()
    await reader.start()
    reader.assign([TopicPartition(AIO_TOPIC, p) for p in (0, 1)])
    await reader.seek_to_beginning()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(_aio_consume(c, Truth(scene.truth_path, who), stop))
             for c, who in ((member, "kwire-aio-member"), (reader, "kwire-aio-reader"))]
    deadline = time.monotonic() + 30
    while not member.assignment() and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    scene.truth("aio_member_assigned", partitions=sorted(p.partition for p in member.assignment()))
    await asyncio.sleep(1)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id="kwire-aio-producer", acks="all")
    await producer.start()
    truth = Truth(scene.truth_path, "kwire-aio-producer")
    for n in range(20):
        started = time.monotonic()
        truth("sent", n=n, partition=n % 2)
        md = await producer.send_and_wait(AIO_TOPIC, f"entry {n}".encode(), partition=n % 2)
        truth("delivered", n=n, partition=md.partition, offset=md.offset)
        await asyncio.sleep(max(0, 0.2 - (time.monotonic() - started)))
    await asyncio.sleep(3)
    stop.set()
    await asyncio.gather(*tasks)
    await producer.stop()
    await member.stop()
    await reader.stop()
    return {"sent": 20}


def aiokafka(scene, tansu) -> None:
    import aiokafka as aio
    import logging
    import sys

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("aiokafka").addHandler(handler)
    logging.getLogger("aiokafka").setLevel(logging.INFO)
    create_topics(tansu.bootstrap, {AIO_TOPIC: 2})
    scene.summary["aiokafka"] = aio.__version__
    scene.summary["aiokafka_run"] = asyncio.run(_aio_run(scene, tansu.bootstrap))


def share(scene, mock) -> None:
    from confluent_kafka import Producer

    mock.setting("sharegroup_set_record_lock_duration", 2000)
    mock.setting("sharegroup_set_max_delivery_attempts", 3)
    mock.setting("sharegroup_set_heartbeat_interval", 1000)
    mock.create_topic(SHARE_TOPIC, 1)
    scene.spawn("share", "kwire-share-consumer", bootstrap=mock.bootstraps, group="kwire-e2e-workers",
                topics=[SHARE_TOPIC], run_s=20, rules=SHARE_RULES, slow_s=0)
    scene.at(4)
    truth = Truth(scene.truth_path, "kwire-share-producer")
    producer = Producer({"bootstrap.servers": mock.bootstraps, "client.id": "kwire-share-producer",
                         "linger.ms": 5, "enable.idempotence": False, "debug": "protocol"})
    producer.list_topics(SHARE_TOPIC, timeout=10)  # connected before the first produce(): its times are the wire's

    def acked(err, msg, n) -> None:
        truth("acked", n=n, partition=msg.partition(), offset=msg.offset(), error=None if err is None else str(err))

    for n in range(30):
        truth("sent", n=n)
        producer.produce(SHARE_TOPIC, value=f"task {n}".encode(), partition=0,
                         on_delivery=lambda err, msg, n=n: acked(err, msg, n))
        producer.poll(0)
        time.sleep(0.1)
        producer.poll(0)
    producer.flush(30)
    scene.at(22)
    scene.stop_all()
