#!/usr/bin/env python3
"""Record the problems Kafka operators chase, with real clients and their own view as ground truth.

Each problem is a scenario run in a fresh network namespace under tcpdump (the namespace, tcpdump
and their guarantees come from scripts/record_capture.py): real confluent-kafka clients (and a
kafka-python producer: pip install kafka-python; KafkaJS in the end-to-end recordings of
scripts/problems_e2e.py: KWIRE_NODE_MODULES names its node_modules) against librdkafka's mock cluster (faults injected
through its C API, or by a proxy that rewrites answers: scripts/problem_kit.py) or Tansu, and the same
workload without the fault as a clean counterpart. Three files per recording:

    captures/problems/NAME.pcap.gz              the capture (only client <-> broker/proxy traffic)
    captures/problems/NAME.pcap.truth.log.gz    every client's librdkafka debug log (stderr; kafka-python's
                                                log, logger kafka at DEBUG), whole
    captures/problems/NAME.pcap.truth.jsonl     the clients' callbacks and the scenario's actions,
                                                one JSON object a line with wall-clock "ts"

Run as root:  python scripts/record_problems.py --problem member-expired --out-dir captures/problems
              python scripts/record_problems.py --all --out-dir captures/problems
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))

import problems_e2e  # noqa: E402
from problem_kit import FaultProxy, FaultRules, MockCluster, Tansu, Truth, create_topics  # noqa: E402
from record_capture import (RecordError, Tcpdump, _last_json, _versions, in_namespace,  # noqa: E402
                            network_namespace, why_not_recordable)

ROLES = str(Path(__file__).resolve().parent / "problem_roles.py")
TOPIC = "kwire-orders"
GROUP = "kwire-app"
PARTITIONS = 6
# Kafka error codes the scenarios inject.
NOT_LEADER_OR_FOLLOWER, ILLEGAL_GENERATION = 6, 22
PRODUCE, FETCH, OFFSET_COMMIT, JOIN_GROUP, HEARTBEAT = 0, 1, 8, 11, 12


class Scene:
    """What a scenario works with inside the namespace: its truth writer, client processes, and the
    clock of the run (`at(t)` sleeps until t seconds after the start)."""

    def __init__(self, truth_path: str):
        self.truth_path = truth_path
        self.truth = Truth(truth_path, "scenario")
        self.procs: dict[str, subprocess.Popen] = {}
        self.start = time.monotonic()
        self.summary: dict = {}

    def at(self, t: float) -> None:
        delay = self.start + t - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def spawn(self, role: str, client_id: str, **spec) -> subprocess.Popen:
        spec.update(client_id=client_id, truth=self.truth_path)
        proc = subprocess.Popen([sys.executable, ROLES, role, json.dumps(spec)], stdout=subprocess.DEVNULL)
        self.procs[client_id] = proc
        self.truth("spawned", client_id=client_id, role=role, pid=proc.pid)
        return proc

    def kill(self, client_id: str) -> None:
        proc = self.procs[client_id]
        proc.send_signal(signal.SIGKILL)
        self.truth("killed", client_id=client_id, pid=proc.pid)
        proc.wait(10)

    def stop_all(self, timeout: float = 30) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for client_id, proc in self.procs.items():
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise RecordError(f"{client_id} did not stop")
            if proc.returncode not in (0, -signal.SIGKILL):
                raise RecordError(f"{client_id} exited {proc.returncode}")


class Producer(threading.Thread):
    """A confluent-kafka Producer sending `rate` messages/s to every partition in turn until stopped;
    delivery reports and errors go to the truth file."""

    def __init__(self, scene: Scene, bootstrap: str, client_id: str = "kwire-producer", rate: float = 5,
                 topic: str = TOPIC, partitions: int = PARTITIONS, **conf):
        super().__init__(daemon=True)
        from confluent_kafka import Producer as KafkaProducer

        self.truth = Truth(scene.truth_path, client_id)
        settings = {"bootstrap.servers": bootstrap, "client.id": client_id, "enable.idempotence": True,
                    "linger.ms": 5, "debug": "protocol,eos"}
        settings.update(conf)
        self.producer = KafkaProducer(settings)
        self.rate, self.topic, self.partitions = rate, topic, partitions
        self.acks_logged = False  # every delivery report to the truth ("acked" with its offset)
        self.stopping = threading.Event()
        self.sent = self.delivered = 0
        self.errors: list[str] = []

    def _report(self, err, msg) -> None:
        if err is not None:
            self.errors.append(str(err))
            self.truth("delivery_failed", error=str(err), partition=msg.partition())
        else:
            self.delivered += 1
            if self.acks_logged:
                self.truth("acked", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
                           key=msg.key().decode())

    def run(self) -> None:
        i = 0
        while not self.stopping.wait(1 / self.rate):
            self.producer.produce(self.topic, key=f"k{i}".encode(), value=f"order {i}".encode(),
                                  partition=i % self.partitions, on_delivery=self._report)
            self.producer.poll(0)
            i += 1
        self.sent = i
        self.producer.flush(30)
        self.truth("flushed", sent=self.sent, delivered=self.delivered, errors=len(self.errors))

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)


def _consumer_conf(**extra) -> dict:
    conf = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000, "fetch.wait.max.ms": 500}
    conf.update(extra)
    return conf


def _group_workload(scene: Scene, mock: MockCluster, consumers: int, protocol: str = "classic",
                    conf: dict | None = None) -> Producer:
    mock.create_topic(TOPIC, PARTITIONS)
    mock.coordinator("group", GROUP, 1)
    producer = Producer(scene, mock.bootstraps)
    producer.start()
    member_conf = conf if conf is not None else _consumer_conf()
    if protocol == "consumer":
        member_conf = {"group.protocol": "consumer", "fetch.wait.max.ms": 500, **(conf or {})}
    for n in range(1, consumers + 1):
        scene.spawn("consumer", f"kwire-consumer-{n}", bootstrap=mock.bootstraps, group=GROUP, topics=[TOPIC],
                    conf=member_conf)
    return producer


def _finish(scene: Scene, producer: Producer, end: float) -> None:
    scene.at(end)
    scene.stop_all()
    producer.stop()
    if producer.errors:
        scene.summary["producer_errors"] = producer.errors[:5]


# ---- scenarios on the mock cluster ------------------------------------------------------------


def clean_classic(scene: Scene, mock: MockCluster) -> None:
    producer = _group_workload(scene, mock, 2)
    _finish(scene, producer, 16)


def member_expired(scene: Scene, mock: MockCluster) -> None:
    producer = _group_workload(scene, mock, 3)
    scene.at(9)
    scene.kill("kwire-consumer-3")
    _finish(scene, producer, 24)


def rebalance_storm(scene: Scene, mock: MockCluster) -> None:
    producer = _group_workload(scene, mock, 2)
    scene.at(6)
    flapper = scene.spawn("flapping", "kwire-flapper", bootstrap=mock.bootstraps, group=GROUP, topics=[TOPIC],
                          times=5, stay_s=1.0, pause_s=0.5, conf=_consumer_conf())
    flapper.wait(120)
    _finish(scene, producer, time.monotonic() - scene.start + 4)


def join_stuck(scene: Scene, mock: MockCluster) -> None:
    # The coordinator answers the member's JoinGroup 12 s late; the member states a rebalance timeout
    # (max.poll.interval.ms) of 7 s.
    mock.push_error_rtts(1, JOIN_GROUP, [(0, 12000)])
    producer = _group_workload(scene, mock, 1, conf=_consumer_conf(**{"max.poll.interval.ms": 7000}))
    _finish(scene, producer, 30)


def clean_kip848(scene: Scene, mock: MockCluster) -> None:
    mock.setting("set_group_consumer_session_timeout_ms", 6000)
    mock.setting("set_group_consumer_heartbeat_interval_ms", 500)
    producer = _group_workload(scene, mock, 2, protocol="consumer")
    _finish(scene, producer, 16)


def kip848_expired(scene: Scene, mock: MockCluster) -> None:
    mock.setting("set_group_consumer_session_timeout_ms", 6000)
    mock.setting("set_group_consumer_heartbeat_interval_ms", 500)
    producer = _group_workload(scene, mock, 3, protocol="consumer")
    scene.at(9)
    scene.kill("kwire-consumer-3")
    _finish(scene, producer, 24)


def slow_broker(scene: Scene, mock: MockCluster) -> None:
    producer = _group_workload(scene, mock, 2)
    scene.at(6)
    mock.set_rtt(2, 150)
    scene.at(20)
    mock.set_rtt(2, 0)
    _finish(scene, producer, 26)


def error_burst(scene: Scene, mock: MockCluster) -> None:
    producer = _group_workload(scene, mock, 2)
    scene.at(7)
    mock.push_errors(PRODUCE, [NOT_LEADER_OR_FOLLOWER] * 4)
    scene.at(12)
    mock.push_errors(HEARTBEAT, [ILLEGAL_GENERATION] * 2)
    _finish(scene, producer, 22)


def unanswered(scene: Scene, mock: MockCluster) -> None:
    # The coordinator sits on three OffsetCommits for 20 s; the consumers give up after 5 s
    # (socket.timeout.ms) and reconnect.
    producer = _group_workload(scene, mock, 2, conf=_consumer_conf(**{"socket.timeout.ms": 5000}))
    scene.at(7)
    mock.push_error_rtts(1, OFFSET_COMMIT, [(0, 20000)] * 3)
    _finish(scene, producer, 26)


def pending_cap(scene: Scene, mock: MockCluster) -> None:
    # One producer pipelines big batches (256 KiB, 40 requests in flight) to a broker that answers
    # each request 2 s late: its connection holds megabytes of unanswered Produce requests, past a
    # lowered KWIRE_MAX_PENDING_BYTES (the tests use 1 MiB). Values are text, so the capture
    # compresses well.
    from confluent_kafka import Producer as KafkaProducer

    mock.create_topic(TOPIC, 1)
    truth = Truth(scene.truth_path, "kwire-bulk-producer")
    producer = KafkaProducer({"bootstrap.servers": mock.bootstraps, "client.id": "kwire-bulk-producer",
                              "enable.idempotence": False, "max.in.flight.requests.per.connection": 40,
                              "batch.size": 262144, "linger.ms": 100, "compression.type": "none",
                              "message.max.bytes": 1000000, "debug": "protocol"})
    producer.list_topics(TOPIC, timeout=10)  # connected and the topic known before the broker stalls
    mock.set_rtt(1, 2000)
    delivered = []
    value = b"kwire pending-cap order " * 2500  # 60 KB of text
    for i in range(48):
        producer.produce(TOPIC, key=b"k%d" % i, value=value, partition=0,
                         on_delivery=lambda err, msg: delivered.append(err is None))
        producer.poll(0)
    left = producer.flush(60)
    truth("flushed", sent=48, delivered=sum(delivered), failed=delivered.count(False), left=left)
    scene.summary["delivered"] = sum(delivered)
    mock.set_rtt(1, 0)


def _behind_proxies(scene: Scene, mock: MockCluster, rules: FaultRules) -> dict:
    """A FaultProxy before each broker, advertised in its place and made the bootstrap: broker id -> proxy
    (the summary notes the brokers' own ports, which the capture leaves out, and the proxies')."""
    proxies = {}
    for broker_id, port in mock.ports.items():
        proxy = FaultProxy(0, port, rules)
        proxy.start()
        mock.advertise(broker_id, proxy.port)
        proxies[broker_id] = proxy
    scene.summary["cut_ports"] = sorted(mock.ports.values())
    scene.summary["proxy_ports"] = {str(b): p.port for b, p in proxies.items()}
    mock.bootstraps = ",".join(f"127.0.0.1:{p.port}" for p in proxies.values())
    return proxies


def proxy_faults(scene: Scene, mock: MockCluster) -> None:
    # Every client goes through a proxy per broker; consumer 1's Fetch answers say "throttled
    # 300 ms" 20 times; the ApiVersions answers a client named kwire-fragile gets are corrupted
    # (it cannot parse them, hangs up, reconnects).
    rules = FaultRules(scene.truth, corrupt_api_versions={"kwire-fragile"}, throttle={"kwire-consumer-1": (300, 20)})
    proxies = _behind_proxies(scene, mock, rules)
    producer = _group_workload(scene, mock, 2)
    scene.at(5)
    fragile = Producer(scene, f"127.0.0.1:{proxies[1].port}", client_id="kwire-fragile", rate=2,
                       **{"debug": "protocol,broker", "message.timeout.ms": 8000})
    fragile.start()
    scene.at(15)
    fragile.stopping.set()
    _finish(scene, producer, 22)
    for proxy in proxies.values():
        proxy.stop()


def join_left_behind(scene: Scene, mock: MockCluster) -> None:
    # Every client goes through a proxy per broker (as proxy_faults). From 8 s the proxies keep the
    # JoinGroup requests of kwire-consumer-1 and kwire-consumer-2 to themselves (never forwarded, never
    # answered: a path that lost them) while kwire-consumer-3 joins, and from 16 s a flapper joins and
    # leaves twice: the group forms generations without the two, who wait on in their joins (their
    # rebalance timeout, max.poll.interval.ms, is the default 300 s).
    rules = FaultRules(scene.truth)
    proxies = _behind_proxies(scene, mock, rules)
    producer = _group_workload(scene, mock, 2)
    scene.at(8)
    rules.hold_requests(["kwire-consumer-1", "kwire-consumer-2"], JOIN_GROUP)
    scene.truth("proxy_hold_requests", client_ids=["kwire-consumer-1", "kwire-consumer-2"], api_key=JOIN_GROUP)
    scene.spawn("consumer", "kwire-consumer-3", bootstrap=mock.bootstraps, group=GROUP, topics=[TOPIC],
                conf=_consumer_conf())
    scene.at(16)
    flapper = scene.spawn("flapping", "kwire-flapper", bootstrap=mock.bootstraps, group=GROUP, topics=[TOPIC],
                          times=2, stay_s=1.0, pause_s=0.5, conf=_consumer_conf())
    flapper.wait(120)
    _finish(scene, producer, time.monotonic() - scene.start + 4)
    for proxy in proxies.values():
        proxy.stop()


def _share_scenario(scene: Scene, mock: MockCluster, rules: dict) -> None:
    mock.setting("sharegroup_set_record_lock_duration", 2000)
    mock.setting("sharegroup_set_max_delivery_attempts", 3)
    mock.setting("sharegroup_set_heartbeat_interval", 1000)
    mock.create_topic("kwire-tasks", 1)
    scene.spawn("share", "kwire-share-consumer", bootstrap=mock.bootstraps, group="kwire-workers",
                topics=["kwire-tasks"], run_s=24, rules=rules, slow_s=3.0)
    scene.at(4)
    producer = Producer(scene, mock.bootstraps, client_id="kwire-producer", rate=10, topic="kwire-tasks",
                        partitions=1)
    producer.start()
    scene.at(7)
    producer.stop()
    scene.at(26)
    scene.stop_all()


def share_redelivery(scene: Scene, mock: MockCluster) -> None:
    # offset % 10: 3 released once, 5 rejected, 7 worked on for 3 s the first time (its 2 s lock
    # expires), 9 released every time (archived after 3 deliveries); the rest accepted.
    _share_scenario(scene, mock, {"modulus": 10, "3": ["release", 1], "5": ["reject", 1], "7": ["slow", 1],
                                  "9": ["release", 99]})


def clean_share(scene: Scene, mock: MockCluster) -> None:
    _share_scenario(scene, mock, {"modulus": 10})


# ---- records written twice: a Produce answer rewritten after the broker stored the batch ----------

PAYMENTS = "kwire-payments"
TANSU_PORT = 19092


def _kafka_python_debug_log() -> None:
    """kafka-python's own log (logger kafka, DEBUG) on stderr: what the truth log keeps of its clients."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("kafka").addHandler(handler)
    logging.getLogger("kafka").setLevel(logging.DEBUG)


def _tansu(scene: Scene) -> Tansu:
    """A Tansu broker on TANSU_PORT (its own log thrown away), its version in the recording's summary."""
    tansu = Tansu(TANSU_PORT, open(os.devnull, "w"))
    scene.summary["tansu"] = tansu.version()
    return tansu


class PythonProducer(threading.Thread):
    """kafka-python's KafkaProducer (not idempotent, acks all) sending `rate` messages/s to
    kwire-payments[0] until stopped; each acknowledgement ("acked", with its offset) and failure goes to
    the truth file, the client's own log (logger kafka, DEBUG) to stderr: the truth log."""

    def __init__(self, scene: Scene, bootstrap: str, client_id: str, rate: float = 10):
        super().__init__(daemon=True)
        from kafka import KafkaProducer

        _kafka_python_debug_log()
        self.truth = Truth(scene.truth_path, client_id)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, client_id=client_id, enable_idempotence=False,
                                      acks="all", retries=5, linger_ms=5, max_in_flight_requests_per_connection=1)
        self.rate = rate
        self.stopping = threading.Event()
        self.errors: list[str] = []

    def run(self) -> None:
        i = 0
        while not self.stopping.wait(1 / self.rate):
            key = f"p{i}"
            future = self.producer.send(PAYMENTS, key=key.encode(), value=f"payment {i}".encode(), partition=0)
            future.add_callback(lambda md, key=key: self.truth("acked", topic=md.topic, partition=md.partition,
                                                               offset=md.offset, key=key))
            future.add_errback(lambda exc: (self.errors.append(str(exc)),
                                            self.truth("delivery_failed", error=str(exc), partition=0)))
            i += 1
        self.producer.flush(30)
        self.producer.close(10)
        self.truth("flushed", sent=i, errors=len(self.errors))

    def stop(self) -> None:
        self.stopping.set()
        self.join(60)


def _dup_write(scene: Scene, mock: MockCluster | None, client: str, make_producer) -> None:
    """One broker behind a proxy (the mock cluster's, or Tansu when `mock` is None); a reader of
    kwire-payments[0] logs every record; a producer `client` sends 10 records/s for 7 s; at 4 s and at
    6.5 s the proxy answers one of its Produce requests NOT_LEADER_OR_FOLLOWER after the broker stored
    the batch (BaseOffset -1, as a broker's error answer says): the producer sends the records again."""
    rules = FaultRules(scene.truth)
    with _payments_broker(scene, mock, rules) as bootstrap:
        scene.spawn("reader", "kwire-payments-reader", bootstrap=bootstrap, group="kwire-payments-audit",
                    topic=PAYMENTS, partition=0, run_s=30)
        scene.at(2)
        producer = make_producer(bootstrap)
        producer.start()
        for at in (4, 6.5):
            scene.at(at)
            rules.fail_produce(client, NOT_LEADER_OR_FOLLOWER, 1)
            scene.truth("proxy_fail_produce", client_id=client, error_code=NOT_LEADER_OR_FOLLOWER, count=1)
        scene.at(9)
        producer.stop()
        scene.at(12)
        scene.stop_all()
        if producer.errors:
            scene.summary["producer_errors"] = producer.errors[:5]


@contextlib.contextmanager
def _payments_broker(scene: Scene, mock: MockCluster | None, rules: FaultRules):
    """The bootstrap of a proxy in front of the broker that holds kwire-payments (1 partition)."""
    upstream = mock.ports[1] if mock is not None else TANSU_PORT
    proxy = FaultProxy(0, upstream, rules)
    proxy.start()
    scene.summary["cut_ports"] = [upstream]
    scene.summary["proxy_ports"] = {"1": proxy.port}
    bootstrap = f"127.0.0.1:{proxy.port}"
    tansu = None
    try:
        if mock is not None:
            mock.create_topic(PAYMENTS, 1)
            mock.advertise(1, proxy.port)
        else:
            from confluent_kafka.admin import AdminClient, NewTopic

            tansu = Tansu(TANSU_PORT, open(os.devnull, "w"), advertised_port=proxy.port)
            scene.summary["tansu"] = tansu.version()
            admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kwire-admin"})
            for future in admin.create_topics([NewTopic(PAYMENTS, 1, 1)]).values():
                future.result(15)
        yield bootstrap
    finally:
        proxy.stop()
        if tansu is not None:
            tansu.close()


def _rdkafka_payments(scene: Scene, client: str, idempotent: bool):
    def make(bootstrap: str) -> Producer:
        producer = Producer(scene, bootstrap, client_id=client, rate=10, topic=PAYMENTS, partitions=1,
                            **{"enable.idempotence": idempotent, "acks": "all"})
        producer.acks_logged = True
        return producer
    return make


def dup_write_librdkafka(scene: Scene, mock: MockCluster) -> None:
    _dup_write(scene, mock, "kwire-payer", _rdkafka_payments(scene, "kwire-payer", False))


def dup_write_idempotent(scene: Scene, mock: MockCluster | None) -> None:
    _dup_write(scene, mock, "kwire-safe-payer", _rdkafka_payments(scene, "kwire-safe-payer", True))


def dup_write_kafka_python(scene: Scene, mock: MockCluster | None) -> None:
    import kafka

    scene.summary["kafka_python"] = kafka.__version__
    _dup_write(scene, mock, "kwire-py-payer", lambda bootstrap: PythonProducer(scene, bootstrap, "kwire-py-payer"))


# ---- scenarios on Tansu -----------------------------------------------------------------------


def _txn_scenario(scene: Scene, stall_s: float, abort_round: int | None = None) -> None:
    """A transactional producer writes 3 records to kwire-ledger[0] per transaction (3 rounds when
    `stall_s`, round 1 held open that long; else 8); round `abort_round` is aborted, not committed. A
    read_committed reader logs every record it is handed (truth `consumed`, with the value)."""
    from confluent_kafka import Producer as KafkaProducer

    tansu = _tansu(scene)
    try:
        create_topics(tansu.bootstrap, {"kwire-ledger": 1})
        truth = Truth(scene.truth_path, "kwire-txn-producer")
        producer = KafkaProducer({"bootstrap.servers": tansu.bootstrap, "client.id": "kwire-txn-producer",
                                  "transactional.id": "kwire-ledger-writer", "debug": "protocol,eos"})
        producer.init_transactions(15)
        scene.spawn("txn-reader", "kwire-ledger-reader", bootstrap=tansu.bootstrap, group="kwire-ledger-audit",
                    topic="kwire-ledger", partition=0, run_s=30)
        scene.at(4)
        n = 0
        for round_ in range(3 if stall_s else 8):
            producer.begin_transaction()
            truth("begin_transaction", round=round_)
            for _ in range(3):
                producer.produce("kwire-ledger", value=f"entry {n}".encode(), partition=0)
                n += 1
            producer.flush(10)
            truth("produced", round=round_, count=3, topic="kwire-ledger", partition=0)
            time.sleep(stall_s if round_ == 1 else 0.5)
            if round_ == abort_round:
                producer.abort_transaction(15)
                truth("aborted", round=round_, values=[f"entry {k}" for k in range(n - 3, n)])
            else:
                producer.commit_transaction(15)
                truth("committed", round=round_)
            time.sleep(1)
        scene.at(time.monotonic() - scene.start + 3)
        scene.stop_all()
    finally:
        tansu.close()


def member_removed(scene: Scene, mock: None) -> None:
    # Tansu on 127.0.0.1:19092; a Producer and 2 consumers in kwire-app, and a kafka-python KafkaConsumer
    # (`kwire-py-consumer`, whose own LeaveGroup is a v3+ naming itself); at 8 s an operator's kafka-python
    # KafkaAdminClient (`kwire-operator`) removes kwire-consumer-2's member from the group
    # (remove_group_members: one LeaveGroup v3+ naming it), which rejoins; the consumers then close
    # (their own LeaveGroups).
    from kafka import KafkaAdminClient
    from kafka.admin import MemberToRemove

    _kafka_python_debug_log()
    tansu = _tansu(scene)
    try:
        create_topics(tansu.bootstrap, {TOPIC: PARTITIONS})
        producer = Producer(scene, tansu.bootstrap)
        producer.start()
        for n in (1, 2):
            scene.spawn("consumer", f"kwire-consumer-{n}", bootstrap=tansu.bootstrap, group=GROUP, topics=[TOPIC],
                        conf=_consumer_conf())
        scene.spawn("py-consumer", "kwire-py-consumer", bootstrap=tansu.bootstrap, group=GROUP, topics=[TOPIC])
        scene.at(8)
        victim = [e for e in _truth_events(scene.truth_path) if e["event"] == "assigned"
                  and e["who"] == "kwire-consumer-2"][-1]["member_id"]
        operator = KafkaAdminClient(bootstrap_servers=tansu.bootstrap, client_id="kwire-operator")
        result = operator.remove_group_members(GROUP, [MemberToRemove(member_id=victim)])
        scene.truth("removed_group_members", client_id="kwire-operator", group=GROUP, member_ids=[victim],
                    result={str(k): getattr(v, "__name__", str(v)) for k, v in result.items()})
        operator.close()
        _finish(scene, producer, 18)
    finally:
        tansu.close()


def txn_offsets_bare(scene: Scene, mock: None) -> None:
    # Tansu on 127.0.0.1:19092. An exactly-once app (a Consumer `kwire-eos-consumer` in group kwire-eos-app and a
    # transactional Producer `kwire-eos-producer`) reads 3 records of kwire-ledger and commits its position in its
    # transaction with the consumer's own group metadata (a member's commit: no change); then a kafka-python
    # transactional KafkaProducer `kwire-offsets-writer` sets group kwire-ledger-audit's offset of kwire-ledger[0]
    # with a bare group id (sendOffsetsToTransaction(offsets, "kwire-ledger-audit"): TxnOffsetCommit with no member
    # id, generation -1: a change from outside the group); an admin reads the group's offsets back.
    from confluent_kafka import Consumer, Producer as KafkaProducer, TopicPartition
    from kafka import KafkaAdminClient, KafkaProducer as PyProducer
    from kafka.structs import OffsetAndMetadata, TopicPartition as PyPartition

    _kafka_python_debug_log()
    tansu = _tansu(scene)
    try:
        create_topics(tansu.bootstrap, {"kwire-ledger": 1, "kwire-ledger-out": 1})
        plain = KafkaProducer({"bootstrap.servers": tansu.bootstrap, "client.id": "kwire-producer"})
        for n in range(6):
            plain.produce("kwire-ledger", value=f"entry {n}".encode(), partition=0)
        plain.flush(10)
        scene.truth("produced", topic="kwire-ledger", partition=0, count=6)
        _eos_app(scene, tansu, Consumer, KafkaProducer, TopicPartition)
        scene.at(time.monotonic() - scene.start + 1)
        writer = PyProducer(bootstrap_servers=tansu.bootstrap, client_id="kwire-offsets-writer",
                            transactional_id="kwire-offsets-tool")
        writer.init_transactions()
        writer.begin_transaction()
        writer.send("kwire-ledger-out", value=b"marker", partition=0)
        offsets = {PyPartition("kwire-ledger", 0): OffsetAndMetadata(5, "", -1)}
        writer.send_offsets_to_transaction(offsets, "kwire-ledger-audit")
        writer.commit_transaction()
        scene.truth("sent_offsets", client_id="kwire-offsets-writer", group="kwire-ledger-audit", bare=True,
                    offsets={"kwire-ledger/0": 5})
        writer.close()
        reader = KafkaAdminClient(bootstrap_servers=tansu.bootstrap, client_id="kwire-offsets-reader")
        got = reader.list_group_offsets({"kwire-ledger-audit": None})
        scene.truth("group_offsets", group="kwire-ledger-audit",
                    offsets={f"{tp.topic}/{tp.partition}": om.offset for tp, om in got["kwire-ledger-audit"].items()})
        reader.close()
        scene.at(time.monotonic() - scene.start + 2)
    finally:
        tansu.close()


def _eos_app(scene: Scene, tansu, Consumer, KafkaProducer, TopicPartition) -> None:
    """A consume-transform-produce app: its offsets go in its transaction with the consumer's own group metadata."""
    consumer = Consumer({"bootstrap.servers": tansu.bootstrap, "client.id": "kwire-eos-consumer",
                         "group.id": "kwire-eos-app", "enable.auto.commit": False, "auto.offset.reset": "earliest",
                         "isolation.level": "read_committed", "debug": "protocol,cgrp", **_consumer_conf()})
    producer = KafkaProducer({"bootstrap.servers": tansu.bootstrap, "client.id": "kwire-eos-producer",
                              "transactional.id": "kwire-eos", "debug": "protocol,eos"})
    producer.init_transactions(15)
    consumer.subscribe(["kwire-ledger"])
    got, deadline = [], time.monotonic() + 20
    while len(got) < 3 and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            got.append(msg)
    producer.begin_transaction()
    for msg in got[:3]:
        producer.produce("kwire-ledger-out", value=msg.value().upper(), partition=0)
    position = [TopicPartition("kwire-ledger", 0, got[2].offset() + 1)]
    producer.send_offsets_to_transaction(position, consumer.consumer_group_metadata(), 15)
    producer.commit_transaction(15)
    scene.truth("sent_offsets", client_id="kwire-eos-producer", group="kwire-eos-app", bare=False,
                offsets={"kwire-ledger/0": got[2].offset() + 1})
    consumer.close()
    scene.truth("closed", client_id="kwire-eos-consumer")


def _kafka_clients_jars() -> str:
    """The classpath of kafka-clients and what it needs: KWIRE_KAFKA_CLIENTS_LIB (a folder of jars), else pyflink/lib
    of an installed shigawire-apache-flink-libraries (kafka-clients 3.9.1)."""
    lib = os.environ.get("KWIRE_KAFKA_CLIENTS_LIB")
    if not lib:
        import importlib.util

        spec = importlib.util.find_spec("pyflink")
        if spec is None or not spec.submodule_search_locations:
            raise RecordError("no kafka-clients: set KWIRE_KAFKA_CLIENTS_LIB or pip install "
                              "shigawire-apache-flink-libraries")
        lib = str(Path(list(spec.submodule_search_locations)[0]) / "lib")
    jars = [str(p) for p in sorted(Path(lib).glob("*.jar"))
            if p.name.startswith(("kafka-clients", "lz4", "snappy", "zstd", "slf4j"))]
    if not any("kafka-clients" in j for j in jars):
        raise RecordError(f"no kafka-clients jar in {lib}")
    return ":".join(jars)


def java_silenced(scene: Scene, mock: MockCluster) -> None:
    # 1 mock broker. The Java client (kafka-clients 3.9.1: a producer `kwire-java-producer` sending one record, an
    # admin `kwire-java-admin` describing the cluster, 12 s each, then open 6 s more) asks ApiVersions v4; the mock (v3 at most) refuses
    # it with a body the Java client reads as a 1,179,648 ms throttle, and each connection goes quiet; the truth:
    # each call's outcome and the client's own request and response counters.
    # The workload's Producer (librdkafka, which reads the mock's refusal as the mock means it) goes on meanwhile.
    mock.create_topic(TOPIC, PARTITIONS)
    classpath = _kafka_clients_jars()
    producer = Producer(scene, mock.bootstraps)
    producer.start()
    with tempfile.TemporaryDirectory(prefix="kwire-java-") as classes:
        source = Path(__file__).resolve().parent / "java" / "JavaClients.java"
        subprocess.run(["javac", "-cp", classpath, "-d", classes, str(source)], check=True, capture_output=True)
        scene.at(2)
        proc = subprocess.run(["java", "-cp", f"{classpath}:{classes}", "JavaClients", mock.bootstraps,
                               scene.truth_path, "12", "6"], stdout=sys.stderr, stderr=sys.stderr, timeout=90)
        if proc.returncode != 0:
            raise RecordError(f"the Java clients exited {proc.returncode}")
    _finish(scene, producer, time.monotonic() - scene.start + 2)


def java_throttled(scene: Scene, mock: None) -> None:
    # Tansu behind a proxy, which answers the first 20 Fetch requests of the Java consumer `kwire-java-consumer`
    # (kafka-clients 3.9.1, partition 0 of kwire-payments from the start, no group, 10 s) with ThrottleTimeMs 300:
    # the Java client honours KIP-219 (NetworkClient sends nothing more to a throttled node until its time is up).
    # A librdkafka producer writes kwire-payments meanwhile. The truth: the proxy's throttled answers, the records
    # the consumer read and its own fetch-throttle-time metrics.
    rules = FaultRules(scene.truth, throttle={"kwire-java-consumer": (300, 20)})
    classpath = _kafka_clients_jars()
    with (_payments_broker(scene, None, rules) as bootstrap,
          tempfile.TemporaryDirectory(prefix="kwire-java-") as classes):
        source = Path(__file__).resolve().parent / "java" / "JavaClients.java"
        subprocess.run(["javac", "-cp", classpath, "-d", classes, str(source)], check=True, capture_output=True)
        producer = Producer(scene, bootstrap, rate=10, topic=PAYMENTS, partitions=1)
        producer.start()
        scene.at(2)
        proc = subprocess.run(["java", "-cp", f"{classpath}:{classes}", "JavaClients", "consume", bootstrap,
                               scene.truth_path, PAYMENTS, "10"], stdout=sys.stderr, stderr=sys.stderr, timeout=60)
        if proc.returncode != 0:
            raise RecordError(f"the Java consumer exited {proc.returncode}")
        _finish(scene, producer, time.monotonic() - scene.start + 1)


def _truth_events(path: str) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def txn_stall(scene: Scene, mock: None) -> None:
    _txn_scenario(scene, 8.0)


def txn_stall_short(scene: Scene, mock: None) -> None:
    _txn_scenario(scene, 3.0)


def txn_clean(scene: Scene, mock: None) -> None:
    _txn_scenario(scene, 0.0)


def end_to_end(scene: Scene, mock: None) -> None:
    # Tansu; topic kwire-e2e (1 partition); a transactional confluent-kafka producer writes 8 rounds of
    # 3 records, each committed 0.5 s after its flush but round 3, held open 7 s before its commit. Its
    # truth: "sent" at each produce() call and "delivered" from each delivery callback (with the offset).
    # Readers of partition 0 from offset 0, each logging every record as its poll returns it ("consumed",
    # offset): kwire-e2e-committed (confluent-kafka, read_committed: round 3 reaches it ~7 s late),
    # kwire-e2e-default (confluent-kafka, no isolation.level set: librdkafka's default is read_committed too)
    # and kwire-e2e-py (kafka-python, whose default is read_uncommitted: round 3 reaches it at once).
    from confluent_kafka import Producer as KafkaProducer

    tansu = _tansu(scene)
    try:
        create_topics(tansu.bootstrap, {"kwire-e2e": 1})
        truth = Truth(scene.truth_path, "kwire-e2e-producer")
        producer = KafkaProducer({"bootstrap.servers": tansu.bootstrap, "client.id": "kwire-e2e-producer",
                                  "transactional.id": "kwire-e2e-writer", "linger.ms": 5, "debug": "protocol,eos"})
        producer.init_transactions(15)
        common = dict(bootstrap=tansu.bootstrap, topic="kwire-e2e", partition=0, run_s=40)
        scene.spawn("txn-reader", "kwire-e2e-committed", group="kwire-e2e-audit", **common)
        scene.spawn("reader", "kwire-e2e-default", group="kwire-e2e-live", **common)
        scene.spawn("py-reader", "kwire-e2e-py", **common)
        scene.at(6)

        def delivered(err, msg) -> None:
            truth("delivered", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
                  error=None if err is None else str(err))

        n = 0
        for round_ in range(8):
            producer.begin_transaction()
            truth("begin_transaction", round=round_)
            for _ in range(3):
                truth("sent", round=round_, n=n)
                producer.produce("kwire-e2e", value=f"entry {n}".encode(), partition=0, on_delivery=delivered)
                n += 1
            producer.flush(10)
            time.sleep(7.0 if round_ == 3 else 0.5)
            producer.commit_transaction(15)
            truth("committed", round=round_)
            time.sleep(1)
        scene.at(time.monotonic() - scene.start + 3)
        scene.stop_all()
    finally:
        tansu.close()


def end_to_end_commits(scene: Scene, mock: None) -> None:
    # Tansu; topic kwire-e2e-commits (1 partition); a confluent-kafka producer writes a record every 0.25 s
    # for 20 s ("sent" at each produce() call, "delivered" from each delivery callback, with the offset).
    # Two groups commit partition 0 by hand (assigned, no membership): kwire-e2e-slow (confluent-kafka,
    # group kwire-e2e-slow-group) works 0.5 s on each record for its first 14 s, committing every 3 records,
    # so its committed offset falls behind in time and catches up once it works fast; kwire-e2e-pycommit
    # (kafka-python, group kwire-e2e-py-group) commits its position every 2 s. Their truth: "committed" with
    # the offset, when the client's commit returned.
    from confluent_kafka import Producer as KafkaProducer

    tansu = _tansu(scene)
    try:
        create_topics(tansu.bootstrap, {"kwire-e2e-commits": 1})
        truth = Truth(scene.truth_path, "kwire-e2e-writer")
        producer = KafkaProducer({"bootstrap.servers": tansu.bootstrap, "client.id": "kwire-e2e-writer",
                                  "linger.ms": 5, "debug": "protocol"})
        common = dict(bootstrap=tansu.bootstrap, topic="kwire-e2e-commits", partition=0, run_s=36)
        scene.spawn("committer", "kwire-e2e-slow", group="kwire-e2e-slow-group", every=3, work_s=0.5, slow_s=14,
                    **common)
        scene.spawn("py-committer", "kwire-e2e-pycommit", group="kwire-e2e-py-group", every_s=2.0, **common)
        scene.at(5)

        def delivered(err, msg) -> None:
            truth("delivered", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
                  error=None if err is None else str(err))

        for n in range(80):
            scene.at(5 + n * 0.25)
            truth("sent", n=n)
            producer.produce("kwire-e2e-commits", value=f"entry {n}".encode(), partition=0, on_delivery=delivered)
            producer.poll(0)
        producer.flush(10)
        scene.at(42)
        scene.stop_all()
    finally:
        tansu.close()


def end_to_end_kafkajs(scene: Scene, mock: None) -> None:
    # Tansu; KafkaJS's producer and two consumers (scripts/problems_e2e.py, scripts/e2e_kafkajs.js).
    tansu = _tansu(scene)
    try:
        problems_e2e.kafkajs(scene, tansu)
    finally:
        tansu.close()


def end_to_end_aiokafka(scene: Scene, mock: None) -> None:
    # Tansu; aiokafka's producer, a group member and an assigned reader (scripts/problems_e2e.py).
    tansu = _tansu(scene)
    try:
        problems_e2e.aiokafka(scene, tansu)
    finally:
        tansu.close()


def txn_abort(scene: Scene, mock: None) -> None:
    _txn_scenario(scene, 0.0, abort_round=2)


BROKER_RULES_TOPICS = {"validated": "kwire-validated", "offsets": "kwire-checkpoints"}
BROKER_RULES_GROUP = "kwire-checkpointer"
CHECKPOINT = "kwire checkpoint 3"


def broker_rules(scene: Scene, mock: None) -> None:
    tansu = _tansu(scene)
    try:
        create_topics(tansu.bootstrap, {BROKER_RULES_TOPICS["offsets"]: 1})
        _broker_rules(scene, tansu.bootstrap)
    finally:
        tansu.close()


def broker_rules_mock(scene: Scene, mock: MockCluster) -> None:
    mock.create_topic(BROKER_RULES_TOPICS["offsets"], 1)
    _broker_rules(scene, mock.bootstraps)


def _broker_rules(scene: Scene, bootstrap: str) -> None:
    # Tansu on 127.0.0.1:19092 (broker-rules) or 1 mock broker (broker-rules-mock), confluent-kafka clients, each
    # answer as the client took it in the truth:
    # an AdminClient `kwire-rules-admin` asks CreateTopics kwire-validated with validate_only (nothing to be
    # made), then lists the topics and asks the same validate-only create again; a Consumer `kwire-checkpointer`
    # (classic group kwire-checkpointer) commits kwire-checkpoints[0] at 3 with the metadata CHECKPOINT and reads
    # its committed offset back; the admin lists and describes the consumer groups (a classic group: Kafka
    # answers ConsumerGroupDescribe GROUP_ID_NOT_FOUND for it) and deletes kwire-checkpoints[0]'s records
    # below 1.
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    validated, offsets = BROKER_RULES_TOPICS["validated"], BROKER_RULES_TOPICS["offsets"]
    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kwire-rules-admin"})
    for _ in range(2):  # the second: the topic the first made exists, or it does not
        _admin_call(scene, "create_topics_validate_only", validated, lambda: admin.create_topics(
            [NewTopic(validated, 1, 1)], validate_only=True)[validated].result(15))
        listed = sorted(admin.list_topics(timeout=15).topics)
        scene.truth("listed_topics", client_id="kwire-rules-admin", topics=listed,
                    has_validated=validated in listed)
    consumer = Consumer({"bootstrap.servers": bootstrap, "client.id": BROKER_RULES_GROUP,
                         "group.id": BROKER_RULES_GROUP, "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(offsets, 0, 3, metadata=CHECKPOINT)], asynchronous=False)
    scene.truth("offset_committed", client_id=BROKER_RULES_GROUP, group=BROKER_RULES_GROUP, topic=offsets,
                partition=0, offset=3, metadata=CHECKPOINT, member=False)  # not a member: a change of the group
    got = consumer.committed([TopicPartition(offsets, 0)], timeout=15)[0]
    scene.truth("offset_read", client_id=BROKER_RULES_GROUP, group=BROKER_RULES_GROUP, topic=offsets,
                partition=0, offset=got.offset, metadata=got.metadata)
    consumer.close()
    listing = admin.list_consumer_groups().result(15)
    scene.truth("listed_groups", client_id="kwire-rules-admin",
                groups={g.group_id: str(g.type) for g in listing.valid})
    _admin_call(scene, "describe_consumer_groups", BROKER_RULES_GROUP, lambda: _described(
        admin.describe_consumer_groups([BROKER_RULES_GROUP])[BROKER_RULES_GROUP].result(15)))
    part = TopicPartition(offsets, 0, 1)
    _admin_call(scene, "delete_records", offsets,
                lambda: str(admin.delete_records([part], request_timeout=10)[part].result(20)))
    scene.at(time.monotonic() - scene.start + 1)


def broker_rules_java(scene: Scene, mock: None) -> None:
    # Tansu on 127.0.0.1:19092; the Apache Kafka Java client (kafka-clients 3.9.1: scripts/java/JavaBrokerRules.java)
    # makes the calls of broker-rules (kwire-java-checkpoints made first by `kwire-admin`), each outcome as the client
    # took it in the truth.
    classpath = _kafka_clients_jars()
    tansu = _tansu(scene)
    try:
        create_topics(tansu.bootstrap, {"kwire-java-checkpoints": 1})
        with tempfile.TemporaryDirectory(prefix="kwire-java-") as classes:
            source = Path(__file__).resolve().parent / "java" / "JavaBrokerRules.java"
            subprocess.run(["javac", "-cp", classpath, "-d", classes, str(source)], check=True, capture_output=True)
            proc = subprocess.run(["java", "-cp", f"{classpath}:{classes}", "JavaBrokerRules", tansu.bootstrap,
                                   scene.truth_path], stdout=sys.stderr, stderr=sys.stderr, timeout=120)
            if proc.returncode != 0:
                raise RecordError(f"the Java clients exited {proc.returncode}")
        scene.at(time.monotonic() - scene.start + 1)
    finally:
        tansu.close()


def _described(group) -> dict:
    return {"group_id": group.group_id, "type": str(group.type), "state": str(group.state),
            "members": len(group.members)}


def _admin_call(scene: Scene, operation: str, subject: str, call) -> None:
    """One admin call's outcome, as the client took it, in the truth (a failure is data, not a stop)."""
    try:
        result = call()
        scene.truth(operation, client_id="kwire-rules-admin", subject=subject, ok=True,
                    result=result if isinstance(result, (dict, str)) else None)
    except Exception as exc:  # the client's own error: the truth
        scene.truth(operation, client_id="kwire-rules-admin", subject=subject, ok=False, error=str(exc))


# name -> (runner, mock brokers or 0 for Tansu)
PROBLEMS = {
    "clean-classic": (clean_classic, 3),
    "member-expired": (member_expired, 3),
    "rebalance-storm": (rebalance_storm, 3),
    "join-stuck": (join_stuck, 3),
    "join-left-behind": (join_left_behind, 3),
    "clean-kip848": (clean_kip848, 3),
    "kip848-expired": (kip848_expired, 3),
    "slow-broker": (slow_broker, 3),
    "error-burst": (error_burst, 3),
    "unanswered": (unanswered, 3),
    "proxy-faults": (proxy_faults, 3),
    "pending-cap": (pending_cap, 1),
    "clean-share": (clean_share, 1),
    "share-redelivery": (share_redelivery, 1),
    "dup-write-librdkafka": (dup_write_librdkafka, 1),
    "dup-write-kafka-python": (dup_write_kafka_python, 0),
    "dup-write-idempotent": (dup_write_idempotent, 0),
    "txn-clean": (txn_clean, 0),
    "txn-stall": (txn_stall, 0),
    "txn-abort": (txn_abort, 0),
    "txn-stall-short": (txn_stall_short, 0),
    "member-removed": (member_removed, 0),
    "txn-offsets-bare": (txn_offsets_bare, 0),
    "java-silenced": (java_silenced, 1),
    "java-throttled": (java_throttled, 0),
    "end-to-end": (end_to_end, 0),
    "broker-rules": (broker_rules, 0),
    "broker-rules-mock": (broker_rules_mock, 1),
    "broker-rules-java": (broker_rules_java, 0),
    "end-to-end-commits": (end_to_end_commits, 0),
    "end-to-end-kafkajs": (end_to_end_kafkajs, 0),
    "end-to-end-aiokafka": (end_to_end_aiokafka, 0),
    "end-to-end-share": (problems_e2e.share, 1),
}


def run_problem(name: str, truth_path: str) -> dict:
    """Run one scenario here (inside the namespace); returns its summary."""
    runner, brokers = PROBLEMS[name]
    scene = Scene(truth_path)
    scene.truth("scenario", problem=name, monotonic_start=scene.start)
    mock = None
    if brokers:
        mock = MockCluster(brokers, scene.truth)
        scene.truth("mock_cluster", bootstraps=mock.bootstraps, ports={str(k): v for k, v in mock.ports.items()})
        scene.summary["bootstraps"] = mock.bootstraps
    try:
        runner(scene, mock)
    finally:
        for proc in scene.procs.values():
            if proc.poll() is None:
                proc.kill()
        if mock is not None:
            mock.close()
    scene.summary.update(problem=name, seconds=round(time.monotonic() - scene.start, 3), **_versions())
    return scene.summary


def _cut(raw: Path, out: Path, ports: list[int]) -> None:
    """Copy `raw` to `out` without the packets of the proxy's upstream legs."""
    if not ports:
        shutil.move(str(raw), out)
        return
    expr = "!(" + " || ".join(f"tcp.port == {p}" for p in ports) + ")"
    proc = subprocess.run(["tshark", "-r", str(raw), "-Y", expr, "-F", "pcap", "-w", str(out)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RecordError(f"tshark could not cut the proxy legs: {proc.stderr.strip()}")
    raw.unlink()


def record(name: str, out_dir: Path, timeout: float = 180, netns: str | None = None) -> Path:
    reason = why_not_recordable()
    if reason:
        raise RecordError(reason)
    with tempfile.TemporaryDirectory(prefix="kwire-problem-") as scratch:  # tcpdump's raw capture, removed after
        return _record(name, out_dir, timeout, Path(scratch) / "raw.pcap", netns)


def _record(name: str, out_dir: Path, timeout: float, raw: Path, netns: str | None = None) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}.pcap"
    log_path, jsonl_path = Path(f"{out}.truth.log"), Path(f"{out}.truth.jsonl")
    jsonl_path.unlink(missing_ok=True)
    argv = [sys.executable, str(Path(__file__).resolve()), "--in-namespace", "--problem", name,
            "--truth-jsonl", str(jsonl_path.resolve())]
    with network_namespace(netns) as ns:
        dump = Tcpdump(ns, raw)
        dump.start()
        try:
            with log_path.open("w") as log:
                log.write(f"# kwire record_problems: {json.dumps({'problem': name, **_versions()}, sort_keys=True)}\n")
                log.write(f"# command: {shlex.join(['scripts/record_problems.py', '--problem', name])}\n")
                log.flush()
                child = subprocess.Popen(in_namespace(ns, *argv), stdout=subprocess.PIPE, stderr=log, text=True,
                                         start_new_session=True)
                try:
                    child_out, _ = child.communicate(timeout=timeout)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
                    child.communicate()
                    raise RecordError(f"{name} did not finish in time; see {log_path}") from None
        finally:
            try:
                _, dropped = dump.stop()
            finally:
                dump.kill()
    summary = _last_json(child_out)
    if child.returncode != 0 or summary is None or "error" in summary:
        raise RecordError(f"{name} failed (exit {child.returncode}): {(summary or {}).get('error', child_out[-500:])}")
    if dropped:
        raise RecordError(f"tcpdump dropped {dropped} packets")
    _cut(raw, out, summary.get("cut_ports", []))
    with log_path.open("a") as log:
        log.write(f"# summary: {json.dumps(summary, sort_keys=True)}\n")
    for path in (out, log_path):  # kwire and the tests read gzip as it is
        subprocess.run(["gzip", "-9", "-n", "-f", str(path)], check=True)
    return Path(f"{out}.gz")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--problem", "problems", multiple=True, type=click.Choice(sorted(PROBLEMS)))
@click.option("--all", "everything", is_flag=True, help="record every problem")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("captures/problems"),
              show_default=True)
@click.option("--netns", help="the network namespace's name (default: kwire-rec-PID-RANDOM)")
@click.option("--in-namespace", is_flag=True, hidden=True)
@click.option("--truth-jsonl", hidden=True)
def main(problems, everything, out_dir, netns, in_namespace, truth_jsonl) -> None:
    """Record problem scenarios (and their clean counterparts) with ground truth."""
    if in_namespace:
        try:
            summary = run_problem(problems[0], truth_jsonl)
        except Exception as exc:  # reported to the recorder as data, on stdout
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
            sys.exit(1)
        print(json.dumps(summary, sort_keys=True), flush=True)
        return
    names = sorted(PROBLEMS) if everything else list(problems)
    try:
        for name in names:
            out = record(name, out_dir, netns=netns)
            click.echo(f"{out}: {out.stat().st_size} bytes")
    except RecordError as exc:
        click.echo(f"record_problems: {exc}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
