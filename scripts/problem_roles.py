"""Client processes of the problem recordings: each a real confluent-kafka client with its own truth.

Run as `python scripts/problem_roles.py ROLE SPEC_JSON` by scripts/record_problems.py (inside the
recording's namespace), stderr going to the recording's truth log (librdkafka's debug output), and
their callbacks appended to the recording's truth file (problem_kit.Truth):

- consumer: a group member (group.protocol classic or consumer). Logs "assigned" / "revoked" /
  "lost" with the partitions and its member id, "consumed" counts, "closed". SIGTERM closes it
  (LeaveGroup); SIGKILL kills it where it stands (its member expires).
- flapping: joins the group, waits for its assignment, stays `stay_s`, closes; `times` times.
- share: a ShareConsumer in explicit acknowledgement mode that acknowledges each record by a rule
  on its offset (ACCEPT, RELEASE, REJECT, or "slow": it works on the record longer than the
  acquisition lock, so the lock expires before its ACCEPT), and logs every delivery with its
  delivery count.
- txn-reader: a read_committed consumer of one assigned partition (no group), logging each record.
- reader: a consumer of one assigned partition (no group) logging each record's offset, key, value
  and timestamp (the records written twice show at two offsets).
- py-reader: kafka-python's KafkaConsumer of one assigned partition from offset 0 (no group), logging
  each record's offset as its poll returns it.
- committer: a confluent-kafka consumer of one assigned partition from offset 0 that commits by hand
  (synchronously, every `every` records), working `work_s` on each record for its first `slow_s`
  seconds; logs "consumed" (offset) and "committed" (the offsets its commit returned, after it returned)
  and what its on_commit callback reported ("commit_result").
- py-committer: kafka-python's KafkaConsumer of one assigned partition from offset 0 committing its
  position by hand every `every_s` seconds; logs "consumed" and "committed" (the position committed,
  after commit() returned).
- py-consumer: kafka-python's KafkaConsumer in the group (its log, logger kafka at DEBUG, to stderr);
  "assigned" with its member id, "closed" (its LeaveGroup, v3+ on a broker that offers it, names itself).
"""

from __future__ import annotations

import json
import signal
import sys
import time

from problem_kit import Truth

_stop = False


def _on_term(signum, frame) -> None:
    global _stop
    _stop = True


def _partitions(parts) -> list[list]:
    return sorted([p.topic, p.partition] for p in parts)


def consumer_role(spec: dict, truth: Truth) -> None:
    from confluent_kafka import Consumer

    conf = {"bootstrap.servers": spec["bootstrap"], "group.id": spec["group"], "client.id": spec["client_id"],
            "auto.offset.reset": "earliest", "debug": spec.get("debug", "protocol,cgrp"),
            "enable.auto.commit": True, "auto.commit.interval.ms": 1000}
    conf.update(spec.get("conf", {}))
    consumer = Consumer(conf)

    def assigned(c, parts):
        truth("assigned", partitions=_partitions(parts), member_id=c.memberid())

    def revoked(c, parts):
        truth("revoked", partitions=_partitions(parts), member_id=c.memberid())

    def lost(c, parts):
        truth("lost", partitions=_partitions(parts), member_id=c.memberid())

    consumer.subscribe(spec["topics"], on_assign=assigned, on_revoke=revoked, on_lost=lost)
    truth("started", group=spec["group"], protocol=conf.get("group.protocol", "classic"))
    end = time.monotonic() + spec.get("run_s", 3600)
    count = 0
    while not _stop and time.monotonic() < end:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            count += 1
            if count % 50 == 0:
                truth("consumed", count=count, member_id=consumer.memberid())
    member = consumer.memberid()
    consumer.close()
    truth("closed", consumed=count, member_id=member)


def flapping_role(spec: dict, truth: Truth) -> None:
    from confluent_kafka import Consumer

    for round_ in range(spec["times"]):
        if _stop:
            break
        conf = {"bootstrap.servers": spec["bootstrap"], "group.id": spec["group"], "client.id": spec["client_id"],
                "auto.offset.reset": "earliest", "debug": spec.get("debug", "protocol,cgrp")}
        conf.update(spec.get("conf", {}))
        consumer = Consumer(conf)
        got = []
        consumer.subscribe(spec["topics"], on_assign=lambda c, parts: got.append(_partitions(parts)))
        truth("joining", round=round_)
        deadline = time.monotonic() + 30
        while not got and time.monotonic() < deadline and not _stop:
            consumer.poll(0.2)
        truth("assigned", round=round_, partitions=got[0] if got else None, member_id=consumer.memberid())
        stay = time.monotonic() + spec.get("stay_s", 1.0)
        while time.monotonic() < stay:
            consumer.poll(0.2)
        member = consumer.memberid()
        consumer.close()
        truth("closed", round=round_, member_id=member)
        time.sleep(spec.get("pause_s", 0.5))


_ACKS = {"accept": "ACCEPT", "release": "RELEASE", "reject": "REJECT"}


def share_rule(rules: dict, offset: int, delivery: int) -> str:
    """What the share consumer does with a record: rules map "offset % modulus" to [action, up to
    which delivery] ("slow": accepted after the lock ran out); anything else is accepted."""
    action, until = rules.get(str(offset % rules["modulus"]), ("accept", 0))
    return action if delivery <= until else "accept"


def share_role(spec: dict, truth: Truth) -> None:
    import confluent_kafka

    consumer = confluent_kafka.ShareConsumer({
        "bootstrap.servers": spec["bootstrap"], "group.id": spec["group"], "client.id": spec["client_id"],
        "share.acknowledgement.mode": "explicit", "debug": spec.get("debug", "protocol")})
    actions: dict[tuple, str] = {}  # (partition, offset) -> the last acknowledgement asked for

    def committed(offsets, error) -> None:
        for tp, done in offsets.items():
            for offset in sorted(done):
                truth("ack_result", topic=tp.topic, partition=tp.partition, offset=offset,
                      action=actions.get((tp.partition, offset)), error=str(error) if error else None)

    consumer.set_acknowledgement_commit_callback(committed)
    consumer.subscribe(spec["topics"])
    truth("started", group=spec["group"])
    end = time.monotonic() + spec["run_s"]
    while not _stop and time.monotonic() < end:
        for msg in consumer.poll(0.5):
            if msg.error():
                truth("error", error=str(msg.error()))
                continue
            action = share_rule(spec["rules"], msg.offset(), msg.delivery_count())
            truth("delivered", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
                  delivery_count=msg.delivery_count(), action=action)
            actions[(msg.partition(), msg.offset())] = "accept" if action == "slow" else action
            if action == "slow":
                time.sleep(spec["slow_s"])
            consumer.acknowledge(msg, getattr(confluent_kafka.AcknowledgeType, _ACKS.get(action, "ACCEPT")))
        consumer.commit_async()
    consumer.close()
    truth("closed")


def txn_reader_role(spec: dict, truth: Truth) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": spec["bootstrap"], "group.id": spec["group"],
                         "client.id": spec["client_id"], "isolation.level": "read_committed",
                         "enable.auto.commit": False, "fetch.wait.max.ms": 500,
                         "debug": spec.get("debug", "protocol")})
    consumer.assign([TopicPartition(spec["topic"], spec["partition"], 0)])
    truth("started", topic=spec["topic"], partition=spec["partition"])
    end = time.monotonic() + spec["run_s"]
    while not _stop and time.monotonic() < end:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            truth("consumed", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
                  value=(msg.value() or b"").decode("utf-8", "replace"))
    consumer.close()
    truth("closed")


def reader_role(spec: dict, truth: Truth) -> None:
    """A consumer of one assigned partition from its start (no group) that logs every record it gets:
    offset, key, value and CreateTime, so a record written twice shows at two offsets."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": spec["bootstrap"], "group.id": spec["group"],
                         "client.id": spec["client_id"], "enable.auto.commit": False, "fetch.wait.max.ms": 500,
                         "debug": spec.get("debug", "protocol")})
    consumer.assign([TopicPartition(spec["topic"], spec["partition"], 0)])
    truth("started", topic=spec["topic"], partition=spec["partition"])
    end = time.monotonic() + spec["run_s"]
    while not _stop and time.monotonic() < end:
        msg = consumer.poll(0.2)
        if msg is not None and not msg.error():
            truth("consumed", topic=msg.topic(), partition=msg.partition(), offset=msg.offset(),
                  key=(msg.key() or b"").decode(), value=(msg.value() or b"").decode(), timestamp=msg.timestamp()[1])
    consumer.close()
    truth("closed")


def committer_role(spec: dict, truth: Truth) -> None:
    from confluent_kafka import Consumer, TopicPartition

    def on_commit(err, parts) -> None:
        for p in parts:
            truth("commit_result", topic=p.topic, partition=p.partition, offset=p.offset,
                  error=str(err) if err is not None else (str(p.error) if p.error else None))

    consumer = Consumer({"bootstrap.servers": spec["bootstrap"], "group.id": spec["group"],
                         "client.id": spec["client_id"], "enable.auto.commit": False, "fetch.wait.max.ms": 500,
                         "on_commit": on_commit, "debug": spec.get("debug", "protocol")})
    consumer.assign([TopicPartition(spec["topic"], spec["partition"], 0)])
    truth("started", topic=spec["topic"], partition=spec["partition"], group=spec["group"])
    start = time.monotonic()
    end, count = start + spec["run_s"], 0
    while not _stop and time.monotonic() < end:
        msg = consumer.poll(0.2)
        if msg is None or msg.error():
            continue
        truth("consumed", topic=msg.topic(), partition=msg.partition(), offset=msg.offset())
        if time.monotonic() - start < spec["slow_s"]:
            time.sleep(spec["work_s"])
        count += 1
        if count % spec["every"] == 0:
            for p in consumer.commit(asynchronous=False) or ():
                truth("committed", topic=p.topic, partition=p.partition, offset=p.offset,
                      error=str(p.error) if p.error else None)
    consumer.close()
    truth("closed")


def py_committer_role(spec: dict, truth: Truth) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=spec["bootstrap"], client_id=spec["client_id"], group_id=spec["group"],
                             enable_auto_commit=False, fetch_max_wait_ms=500)
    part = TopicPartition(spec["topic"], spec["partition"])
    consumer.assign([part])
    consumer.seek(part, 0)
    truth("started", topic=spec["topic"], partition=spec["partition"], group=spec["group"])
    end = time.monotonic() + spec["run_s"]
    due = time.monotonic() + spec["every_s"]
    while not _stop and time.monotonic() < end:
        for records in consumer.poll(200).values():
            for record in records:
                truth("consumed", topic=record.topic, partition=record.partition, offset=record.offset)
        if time.monotonic() >= due:
            due += spec["every_s"]
            position = consumer.position(part)
            consumer.commit()
            truth("committed", topic=part.topic, partition=part.partition, offset=position, error=None)
    consumer.close()
    truth("closed")


def py_consumer_role(spec: dict, truth: Truth) -> None:
    import logging

    from kafka import KafkaConsumer

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("kafka").addHandler(handler)
    logging.getLogger("kafka").setLevel(logging.DEBUG)
    consumer = KafkaConsumer(*spec["topics"], bootstrap_servers=spec["bootstrap"], group_id=spec["group"],
                             client_id=spec["client_id"], auto_offset_reset="earliest",
                             session_timeout_ms=6000, heartbeat_interval_ms=1000)
    truth("started", group=spec["group"], protocol="classic")
    member, count = None, 0
    while not _stop:
        count += sum(len(batch) for batch in consumer.poll(200).values())
        now = consumer._coordinator._generation.member_id if consumer.assignment() else None
        if now and now != member:
            member = now
            truth("assigned", partitions=sorted([p.topic, p.partition] for p in consumer.assignment()), member_id=member)
    consumer.close()
    truth("closed", consumed=count, member_id=member)


def py_reader_role(spec: dict, truth: Truth) -> None:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=spec["bootstrap"], client_id=spec["client_id"], group_id=None,
                             enable_auto_commit=False, fetch_max_wait_ms=500)
    part = TopicPartition(spec["topic"], spec["partition"])
    consumer.assign([part])
    consumer.seek(part, 0)
    truth("started", topic=spec["topic"], partition=spec["partition"])
    end = time.monotonic() + spec["run_s"]
    while not _stop and time.monotonic() < end:
        for records in consumer.poll(200).values():
            for record in records:
                truth("consumed", topic=record.topic, partition=record.partition, offset=record.offset)
    consumer.close()
    truth("closed")


ROLES = {"consumer": consumer_role, "reader": reader_role, "flapping": flapping_role, "share": share_role,
         "txn-reader": txn_reader_role, "py-consumer": py_consumer_role, "py-reader": py_reader_role,
         "committer": committer_role, "py-committer": py_committer_role}


def main() -> None:
    role, spec = sys.argv[1], json.loads(sys.argv[2])
    signal.signal(signal.SIGTERM, _on_term)
    truth = Truth(spec["truth"], spec["client_id"])
    ROLES[role](spec, truth)


if __name__ == "__main__":
    main()
