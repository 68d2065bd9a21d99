"""The Kafka clients of tests/net/test_vxlan_netns.py, run inside the client's namespace: confluent-kafka
creates a topic, produces MESSAGES messages (each delivery confirmed by its own callback) and consumes
them back. Prints one JSON line: what the clients themselves saw (the test's ground truth)."""

from __future__ import annotations

import json
import sys
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

MESSAGES = 30


def main(bootstrap: str, topic: str) -> None:
    common = {"bootstrap.servers": bootstrap, "broker.address.family": "v4"}
    admin = AdminClient({**common, "client.id": "kwire-vxlan-admin"})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    delivered = []
    producer = Producer({**common, "client.id": "kwire-vxlan-producer", "linger.ms": 5})
    for i in range(MESSAGES):
        producer.produce(topic, f"value-{i}".encode(), on_delivery=lambda err, msg: delivered.append(err is None))
        producer.poll(0)
    producer.flush(30)
    consumer = Consumer({**common, "client.id": "kwire-vxlan-consumer", "group.id": "kwire-vxlan",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    received = []
    deadline = time.monotonic() + 60
    while len(received) < MESSAGES and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and not msg.error():
            received.append(msg.value().decode())
    consumer.close()
    print(json.dumps({"delivered": sum(delivered), "received": len(received)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
