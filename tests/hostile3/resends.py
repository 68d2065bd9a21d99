"""Test-only: captures of producers that are not idempotent resending records after failed sends (issue 49,
answers that changed from run to run): thousands of failed sends, many of them written twice, sized so the
resend tables pass their caps (16,384 records of failed sends at `scale` 1).

`resends(path, scale=1, seed=1)` writes, with kwire's own pcap writer (tests/campaign/traffic.py), the traffic
of a few producers (client ids, each on one connection, Produce v9 with no producer id: not idempotent) to the
partitions of topic "pay", and of a consumer reading them back (Fetch v12). A Produce is answered
NOT_LEADER_OR_FOLLOWER or REQUEST_TIMED_OUT (base offset -1) about a third of the time, sometimes after the
broker stored the batch (the answer lost the write: the records are then in the log twice), or is never
answered; the producer puts the failed records back at the head of its queue (as librdkafka does) and sends them
again, beside new ones, in a later batch, one to three sends later, or straight away (after a send never
answered, on a new connection: the producer gave up on the old one). The consumer's Fetch
answers carry the batches as the broker stored them (a v2 batch's CRC does not cover its base offset), so both
copies of a record written twice are read. Every record of a producer has its own CreateTime, key and value.
Sizes: `scale` 1 is about 2,600 Produce exchanges, 1,000 failed sends, 20,000 records of failed sends, 1.5 MB.
"""

from __future__ import annotations

import random

from kwire.capture.pcapwrite import PcapWriter
from tests.campaign.traffic import ETHERNET, Traffic, client_address
from tests.codec.test_records_encoder import v2_batch
from tests.render.hostile import exchange

TOPIC = "pay"
PARTITIONS = 4
PRODUCERS = 4
NOT_LEADER, TIMED_OUT = 6, 7
START_MS = 1_795_305_690_000


class _Broker:
    """The partitions' logs: stored batches (base offset, batch bytes), and what the consumer has read."""

    def __init__(self) -> None:
        self.logs: list[list[tuple[int, list]]] = [[] for _ in range(PARTITIONS)]
        self.ends = [0] * PARTITIONS
        self.read = [0] * PARTITIONS  # stored batches the consumer has been given

    def store(self, partition: int, records: list) -> int:
        base = self.ends[partition]
        self.logs[partition].append((base, records))
        self.ends[partition] += len(records)
        return base


def _batch(records: list, base_offset: int = 0) -> bytes:
    """A v2 batch of (CreateTime ms, key, value) records, no producer id: as a producer that is not idempotent
    sends it (base offset 0) or as the broker stores it (its offset)."""
    base_ts = min(r[0] for r in records)
    return v2_batch([(key, value, (), ts - base_ts) for ts, key, value in records], base_ts=base_ts,
                    base_offset=base_offset)


def _produce(corr: int, client_id: str, partition: int, batch: bytes, error: int, base: int):
    frames = exchange(0, 9, corr, client_id, {"Acks": -1, "TimeoutMs": 30000, "TopicData": [
        {"Name": TOPIC, "PartitionData": [{"Index": partition, "Records": batch}]}]},
        {"Responses": [{"Name": TOPIC, "PartitionResponses": [
            {"Index": partition, "ErrorCode": error, "BaseOffset": -1 if error else base, "LogAppendTimeMs": -1,
             "LogStartOffset": 0, "RecordErrors": [], "ErrorMessage": None}]}], "ThrottleTimeMs": 0})
    return frames


def _fetch(corr: int, broker: _Broker, partition: int):
    log = broker.logs[partition]
    new = log[broker.read[partition]:]
    broker.read[partition] = len(log)
    data = b"".join(_batch(records, base) for base, records in new)
    request = {"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 64 << 20, "IsolationLevel": 0,
               "SessionId": 0, "SessionEpoch": -1,
               "Topics": [{"Topic": TOPIC, "Partitions": [
                   {"Partition": partition, "CurrentLeaderEpoch": -1, "FetchOffset": new[0][0] if new else 0,
                    "LogStartOffset": -1, "PartitionMaxBytes": 64 << 20}]}],
               "ForgottenTopicsData": [], "RackId": ""}
    answer = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": TOPIC, "Partitions": [
        {"PartitionIndex": partition, "ErrorCode": 0, "HighWatermark": broker.ends[partition],
         "LastStableOffset": broker.ends[partition], "LogStartOffset": 0, "AbortedTransactions": None,
         "PreferredReadReplica": -1, "Records": data}]}]}
    return exchange(1, 12, corr, "pay-reader", request, answer)


class _Producer:
    """One producer's queue per partition: records made, failed ones put back at its head."""

    def __init__(self, rng: random.Random, number: int, traffic: Traffic, ports: list) -> None:
        self.rng, self.number, self.traffic, self.ports = rng, number, traffic, ports
        self.conn = traffic.connection(client_address(ports.pop()))
        self.answered = False  # a Produce of this connection was answered
        self.client_id = f"payer-{number}"
        self.corr = 0
        self.made = 0
        self.retry: dict[int, list] = {}  # partition -> failed records waiting, and sends to wait before
        self.wait: dict[int, int] = {}
        self.failed: set[tuple] = set()  # records of its failed sends
        self.resent: set[tuple] = set()  # those sent again since

    def records(self, partition: int, now_ms: int) -> list:
        """The next batch's records: a failed batch's first (when its turn has come), then new ones."""
        out = []
        if partition in self.retry and self.wait[partition] <= 0:
            out = self.retry.pop(partition)
        elif partition in self.retry:
            self.wait[partition] -= 1
        for _ in range(self.rng.randint(0 if out else 1, 30)):
            self.made += 1
            out.append((now_ms + self.made % 7, f"k{self.number}-{self.made}".encode(),
                        b"v" * self.rng.randint(0, 6)))
        return out

    def send(self, broker: _Broker, now_ms: int) -> tuple[int, int]:
        """One Produce exchange; (1 when it failed, records of it that failed)."""
        rng = self.rng
        partition = rng.randrange(PARTITIONS)
        records = self.records(partition, now_ms)
        self.resent.update(r for r in records if r in self.failed)
        self.corr += 1
        fate = rng.random()
        failed = fate < 0.36 and partition not in self.retry
        error = (NOT_LEADER if rng.random() < 0.7 else TIMED_OUT) if failed else 0
        written = not failed or rng.random() < 0.5  # an error answer that lost the write
        base = broker.store(partition, records) if written else -1
        frames = _produce(self.corr, self.client_id, partition, _batch(records), error, base)
        if failed and rng.random() < 0.1 and self.answered:  # never answered: the producer gives up on the
            self.conn.exchange(frames[:1])                      # connection (one that had an answer: Kafka)
            self.conn.close()
            self.conn = self.traffic.connection(client_address(self.ports.pop()))
            self.answered = False
        else:
            self.conn.exchange(frames)
            self.answered = True
        if failed:
            self.failed.update(records)
            self.retry[partition] = records
            self.wait[partition] = rng.choice((0, 0, 1, 2, 3))
        return int(failed), len(records) if failed else 0


def resends(path, scale: int = 1, seed: int = 1) -> dict:
    """Writes the capture; returns {"produce": Produce exchanges, "failed": failed sends, "failed_records":
    records of failed sends (a record whose resend failed too counts again), "resent": records of failed sends
    sent again later (once each)}."""
    rng = random.Random(seed)
    broker = _Broker()
    counts = {"produce": 0, "failed": 0, "failed_records": 0}
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer, start_ns=START_MS * 1_000_000, step_ns=20_000)
        ports = list(range(64_000 * scale, 0, -1))  # client addresses, a new one for each connection
        reader = traffic.connection(client_address(0))
        producers = [_Producer(rng, i, traffic, ports) for i in range(PRODUCERS)]
        fetches = 0
        for step in range(4600 * scale):
            now_ms = START_MS + step * 5
            failed, records = rng.choice(producers).send(broker, now_ms)
            counts["produce"] += 1
            counts["failed"] += failed
            counts["failed_records"] += records
            if step % 16 == 15:
                fetches += 1
                reader.exchange(_fetch(fetches, broker, fetches % PARTITIONS))
        for producer in producers:
            producer.conn.close()
        reader.close()
    counts["resent"] = sum(len(p.resent) for p in producers)
    return counts
