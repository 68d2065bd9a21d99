"""Test-only: TCP traffic written packet by packet into a pcap with kwire's own writer
(kwire.capture.pcapwrite.PcapWriter), for captures too big to hold in memory: SYN floods, acks=0
producer floods, many record batches. Frames are Ethernet/IPv4 as tests/fuzz/conversation makes
them (no checksums: kwire does not check them); Kafka frames come from tests/kafka/frames and
tests/render/hostile (bodies encoded from kwire's schemas).

- `Traffic(writer)`: the clock and the packets; `connection(client, broker)` a Connection whose
  `send(direction, data)` cuts data into segments (the other side ACKs), `close()` sends FINs.
- `syn_flood(path, n)`: n connections that send a SYN and nothing more, then one Kafka exchange.
- `acks0_flood(path, total, request_bytes)`: one producer sending Produce acks=0 requests of about
  `request_bytes` until `total` bytes, never answered.
- `batch_flood(path, batches, per_request)`: Produce exchanges (answered) carrying `batches` record
  batches of one record each, `per_request` per request.
- `empty_batches(path, n)`: one Produce request whose one partition holds n empty record batches.
- `write_read_flood(path, batches, partitions)`: `batches` one-record batches written and read: Produce
  exchanges (an idempotent producer, `partitions` partitions a request, one batch each, answered with the
  base offsets), each followed by a consumer's Fetch exchange delivering those batches at those offsets:
  `batches` writes and as many deliveries for end-to-end latency to keep (its bounds).
- `short_connections(path, n)`: n connections, each a handshake, one Metadata exchange and FINs.
"""

from __future__ import annotations

from kwire.capture.pcapwrite import PcapWriter
from tests.codec.test_records_encoder import v2_batch
from tests.fuzz.conversation import ACK, FIN, PSH, SYN, ether_ipv4_tcp
from tests.kafka.frames import request_frame
from tests.render.hostile import encode_body, exchange, produce_exchange

ETHERNET = 1
BROKER = (bytes([10, 255, 0, 1]), 9092)
START_NS = 1_795_305_690 * 10**9


def client_address(i: int) -> tuple[bytes, int]:
    """A distinct (address, port) for connection i: 10.a.b.c, ports 1024-65023."""
    host = 1 + i // 64_000
    return bytes([10, (host >> 16) & 0xFF, (host >> 8) & 0xFF, host & 0xFF]), 1024 + i % 64_000


class Traffic:
    def __init__(self, writer: PcapWriter, start_ns: int = START_NS, step_ns: int = 1000):
        self.writer = writer
        self.ts = start_ns
        self.step_ns = step_ns

    def packet(self, src, dst, seq: int, ack: int, flags: int, payload: bytes = b"") -> None:
        self.writer.write_packet(self.ts, ether_ipv4_tcp(src, dst, seq, ack, flags, payload))
        self.ts += self.step_ns

    def syn(self, client, broker=BROKER) -> None:
        self.packet(client, broker, 1000, 0, SYN)

    def connection(self, client, broker=BROKER) -> Connection:
        return Connection(self, client, broker)


class Connection:
    """One TCP connection, handshake written when made."""

    def __init__(self, traffic: Traffic, client, broker):
        self.traffic = traffic
        self.ends = (client, broker)
        self.seq = [1000, 500_000]
        traffic.packet(client, broker, 999, 0, SYN)
        traffic.packet(broker, client, 499_999, 1000, SYN | ACK)
        traffic.packet(client, broker, 1000, 500_000, ACK)

    def send(self, direction: int, data: bytes, mss: int = 1448) -> None:
        src, dst = self.ends[direction], self.ends[1 - direction]
        seq = self.seq
        view = memoryview(data)
        for i in range(0, len(data), mss):
            piece = bytes(view[i:i + mss])
            self.traffic.packet(src, dst, seq[direction], seq[1 - direction], ACK | PSH, piece)
            seq[direction] += len(piece)
        self.traffic.packet(dst, src, seq[1 - direction], seq[direction], ACK)

    def exchange(self, frames) -> None:
        for direction, data in frames:
            self.send(direction, data)

    def close(self) -> None:
        client, broker = self.ends
        seq = self.seq
        self.traffic.packet(client, broker, seq[0], seq[1], FIN | ACK)
        self.traffic.packet(broker, client, seq[1], seq[0] + 1, FIN | ACK)
        self.traffic.packet(client, broker, seq[0] + 1, seq[1] + 1, ACK)


def _metadata(corr: int, client_id: str):
    return exchange(3, 9, corr, client_id, {"Topics": [{"Name": "t"}]},
                    {"Brokers": [{"NodeId": 1, "Host": "broker", "Port": 9092}],
                     "Topics": [{"Name": "t", "Partitions": [{"PartitionIndex": 0}]}]})


def syn_flood(path, n: int) -> None:
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        for i in range(n):
            traffic.syn(client_address(i))
        conn = traffic.connection(client_address(n))
        conn.exchange(_metadata(1, "after-the-flood"))
        conn.close()


def acks0_flood(path, total: int, request_bytes: int = 16 << 10) -> int:
    """Returns the number of Produce requests written."""
    record = bytes(range(256)) * max(1, (request_bytes - 200) // 256)
    body = encode_body(0, "request", 9, {"Acks": 0, "TimeoutMs": 30000, "TopicData": [
        {"Name": "t", "PartitionData": [{"Index": 0, "Records": v2_batch([(b"k", record)])}]}]})
    written = 0
    corr = 1
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        conn.exchange(_metadata(corr, "flood"))
        while written < total:
            corr += 1
            frame = request_frame(0, 9, corr, "flood", body, flexible=True)
            conn.send(0, frame)
            written += len(frame)
        conn.close()
    return corr - 1


def batch_flood(path, batches: int, per_request: int = 1000) -> int:
    """Returns the number of Produce exchanges written. An idempotent producer: batch i has base
    sequence i (so no batch looks sent twice)."""
    corr = 1
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        conn.exchange(_metadata(corr, "batches"))
        left = batches
        while left > 0:
            corr += 1
            n = min(per_request, left)
            records = b"".join(v2_batch([(b"k", b"value")], base_offset=i, producer_id=7, producer_epoch=0,
                                        base_sequence=i) for i in range(batches - left, batches - left + n))
            conn.exchange(produce_exchange(corr, [records], client_id="batches"))
            left -= n
        conn.close()
    return corr - 1


def _fetch_exchange(corr: int, offset: int, records: list[bytes]):
    """A consumer's Fetch v12 exchange: partition i of "t" asked from `offset`, answered with records[i]."""
    n = len(records)
    request = {"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 1 << 20, "IsolationLevel": 0,
               "SessionId": 0, "SessionEpoch": -1, "Topics": [{"Topic": "t", "Partitions": [
                   {"Partition": i, "CurrentLeaderEpoch": 0, "FetchOffset": offset, "LastFetchedEpoch": -1,
                    "LogStartOffset": -1, "PartitionMaxBytes": 1 << 20} for i in range(n)]}],
               "ForgottenTopicsData": [], "RackId": ""}
    response = {"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0, "Responses": [{"Topic": "t", "Partitions": [
        {"PartitionIndex": i, "ErrorCode": 0, "HighWatermark": offset + 1, "LastStableOffset": offset + 1,
         "LogStartOffset": 0, "AbortedTransactions": [], "PreferredReadReplica": -1, "Records": records[i]}
        for i in range(n)]}]}
    return exchange(1, 12, corr, "reader", request, response)


def write_read_flood(path, batches: int, partitions: int = 100) -> int:
    """Returns the number of Produce exchanges written (as many Fetch exchanges follow them)."""
    rounds = -(-batches // partitions)
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        producer, consumer = traffic.connection(client_address(0)), traffic.connection(client_address(1))
        producer.exchange(_metadata(1, "writer"))
        for k in range(rounds):
            batch = [v2_batch([(b"k", b"value")], base_offset=0, producer_id=7, producer_epoch=0,
                              base_sequence=k, base_ts=START_NS // 10**6 + k) for _ in range(partitions)]
            request = {"Acks": -1, "TimeoutMs": 30000, "TopicData": [{"Name": "t", "PartitionData": [
                {"Index": i, "Records": batch[i]} for i in range(partitions)]}]}
            response = {"Responses": [{"Name": "t", "PartitionResponses": [
                {"Index": i, "ErrorCode": 0, "BaseOffset": k} for i in range(partitions)]}]}
            producer.exchange(exchange(0, 9, k + 2, "writer", request, response))
            delivered = [b[:0] + k.to_bytes(8, "big") + b[8:] for b in batch]  # the base offset is outside the CRC
            consumer.exchange(_fetch_exchange(k + 1, k, delivered))
        producer.close()
        consumer.close()
    return rounds


def empty_batches(path, n: int) -> None:
    empty = v2_batch([])
    with PcapWriter(str(path), ETHERNET) as writer:
        conn = Traffic(writer).connection(client_address(0))
        conn.exchange(_metadata(1, "empty"))
        conn.exchange(produce_exchange(2, [empty * n], client_id="empty"))
        conn.close()


def short_connections(path, n: int) -> None:
    with PcapWriter(str(path), ETHERNET) as writer:
        traffic = Traffic(writer)
        for i in range(n):
            conn = traffic.connection(client_address(i))
            conn.exchange(_metadata(1, f"client-{i % 1000}"))
            conn.close()
