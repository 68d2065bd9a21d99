"""A scripted KRaft sequence with known truth: three controllers elect a leader, three brokers register
and heartbeat, one broker is fenced, one falls behind on the metadata log, the leader resigns and a
new one is elected, a broker shuts down and an admin unregisters it.

There is no JVM Kafka here, so the bodies are written by kio's serialisers (an independent encoder,
`kio.serial.entity_writer`), framed with Kafka's headers (tests.kafka.frames) and carried in TCP
connections (one per pair of nodes, kept open, sequence numbers running on) as Ethernet/IPv4 packets
in a pcap. `TRUTH` is what the sequence did; `python -m tests.analytics.kraft_sequence OUT.pcap`
writes the capture (captures/kraft/kraft-quorum.pcap is that file).
"""

from __future__ import annotations

import datetime
import io
import sys
import uuid

from kio.schema.errors import ErrorCode
from kio.serial import entity_writer
from kio.static.primitive import i16, i32, i32Timedelta, i64, u16

from kwire.codec.schemas import schema_for
from tests.capture.builders import pcap
from tests.fuzz.conversation import ACK, FIN, PSH, SYN, ether_ipv4_tcp
from tests.kafka.frames import request_frame, response_frame

NS = 1_000_000_000
START_NS = 1_790_000_000 * NS
META = "__cluster_metadata"
CONTROLLERS = {1: b"\x7f\x00\x00\x0b", 2: b"\x7f\x00\x00\x0c", 3: b"\x7f\x00\x00\x0d"}  # 127.0.0.11-13:9093
BROKERS = {4: b"\x7f\x00\x00\x04", 5: b"\x7f\x00\x00\x05", 6: b"\x7f\x00\x00\x06"}
ADMIN = b"\x7f\x00\x00\x09"
ZERO = i32Timedelta.parse(datetime.timedelta(0))

# What the sequence does (the test's truth).
TRUTH = {
    "leaders": [(1, 1), (2, 2)],  # (leader, epoch) in order
    "elections": [(1, 1, [2, 3]), (2, 2, [1, 3])],  # (candidate, epoch, voters granting)
    "resignations": [(1, 1)],
    "broker_epochs": {4: 100, 5: 101, 6: 102},
    "fenced": {5: [(30, 36, False)], 6: [(52, None, True)]},  # broker: [(from s, to s or None, asked)]
    "behind": {6: (32, 38)},  # broker: (first, last heartbeat s) seen behind BEHIND_S
    "unregistered": {6: 56},
}
HEARTBEAT_S = 2
END_S = 60


def kio_bytes(entity) -> bytes:
    buf = io.BytesIO()
    entity_writer(type(entity))(buf, entity)
    return buf.getvalue()


def _flexible(api_key: int, version: int) -> bool:
    return schema_for(api_key, "request").is_flexible(version)


class Connection:
    """One TCP connection, opened on first use and kept: packets at the times asked for."""

    def __init__(self, out: list, client: tuple, broker: tuple):
        self.out, self.client, self.broker = out, client, broker
        self.seq = {0: 1000, 1: 900000}
        self.open = False
        self.corr = 0

    def _emit(self, ts: int, d: int, flags: int, payload: bytes = b"") -> None:
        ends = (self.client, self.broker)
        self.out.append((ts, ether_ipv4_tcp(ends[d], ends[1 - d], self.seq[d], self.seq[1 - d], flags, payload)))
        self.seq[d] += len(payload)

    def exchange(self, ts: int, api_key: int, version: int, request, response, client_id: str,
                 latency_ns: int = 300_000) -> None:
        if not self.open:
            self.seq[0] -= 1
            self._emit(ts - 3000, 0, SYN)
            self.seq[0] += 1
            self.seq[1] -= 1
            self._emit(ts - 2000, 1, SYN | ACK)
            self.seq[1] += 1
            self._emit(ts - 1000, 0, ACK)
            self.open = True
        self.corr += 1
        flexible = _flexible(api_key, version)
        self._emit(ts, 0, ACK | PSH, request_frame(api_key, version, self.corr, client_id, kio_bytes(request), flexible))
        if response is not None:
            self._emit(ts + latency_ns, 1, ACK | PSH, response_frame(self.corr, kio_bytes(response), flexible))

    def close(self, ts: int) -> None:
        if self.open:
            self._emit(ts, 0, FIN | ACK)
            self.seq[0] += 1
            self._emit(ts + 1000, 1, FIN | ACK)
            self.seq[1] += 1
            self._emit(ts + 2000, 0, ACK)


def _vote(conn: Connection, ts: int, candidate: int, epoch: int, voter: int, granted: bool) -> None:
    from kio.schema.vote.v1 import request as q, response as r
    request = q.VoteRequest(cluster_id="kwire-kraft", voter_id=i32(voter), topics=(q.TopicData(topic_name=META, partitions=(
        q.PartitionData(partition_index=i32(0), replica_epoch=i32(epoch), replica_id=i32(candidate),
                        replica_directory_id=None, voter_directory_id=None, last_offset_epoch=i32(epoch - 1),
                        last_offset=i64(1000 * epoch)),)),))
    response = r.VoteResponse(error_code=ErrorCode.none, topics=(r.TopicData(topic_name=META, partitions=(
        r.PartitionData(partition_index=i32(0), error_code=ErrorCode.none, leader_id=i32(-1), leader_epoch=i32(epoch),
                        vote_granted=granted),)),))
    conn.exchange(ts, 52, 1, request, response, f"raft-client-{candidate}")


def _begin(conn: Connection, ts: int, leader: int, epoch: int) -> None:
    from kio.schema.begin_quorum_epoch.v0 import request as q, response as r
    request = q.BeginQuorumEpochRequest(cluster_id="kwire-kraft", topics=(q.TopicData(topic_name=META, partitions=(
        q.PartitionData(partition_index=i32(0), leader_id=i32(leader), leader_epoch=i32(epoch)),)),))
    response = r.BeginQuorumEpochResponse(error_code=ErrorCode.none, topics=(r.TopicData(topic_name=META, partitions=(
        r.PartitionData(partition_index=i32(0), error_code=ErrorCode.none, leader_id=i32(leader),
                        leader_epoch=i32(epoch)),)),))
    conn.exchange(ts, 53, 0, request, response, f"raft-client-{leader}")


def _end(conn: Connection, ts: int, leader: int, epoch: int, successors: tuple) -> None:
    from kio.schema.end_quorum_epoch.v0 import request as q, response as r
    request = q.EndQuorumEpochRequest(cluster_id="kwire-kraft", topics=(q.TopicData(topic_name=META, partitions=(
        q.PartitionData(partition_index=i32(0), leader_id=i32(leader), leader_epoch=i32(epoch),
                        preferred_successors=tuple(i32(s) for s in successors)),)),))
    response = r.EndQuorumEpochResponse(error_code=ErrorCode.none, topics=(r.TopicData(topic_name=META, partitions=(
        r.PartitionData(partition_index=i32(0), error_code=ErrorCode.none, leader_id=i32(leader),
                        leader_epoch=i32(epoch)),)),))
    conn.exchange(ts, 54, 0, request, response, f"raft-client-{leader}")


def _register(conn: Connection, ts: int, broker: int, epoch: int) -> None:
    from kio.schema.broker_registration.v0 import request as q, response as r
    request = q.BrokerRegistrationRequest(
        broker_id=i32(broker), cluster_id="kwire-kraft", incarnation_id=uuid.UUID(int=broker),
        listeners=(q.Listener(name="PLAINTEXT", host=f"127.0.0.{broker}", port=u16(9092), security_protocol=i16(0)),),
        features=(q.Feature(name="metadata.version", min_supported_version=i16(1), max_supported_version=i16(20)),),
        rack=None)
    conn.exchange(ts, 62, 0, request, r.BrokerRegistrationResponse(throttle_time=ZERO, error_code=ErrorCode.none,
                                                                   broker_epoch=i64(epoch)), f"broker-{broker}")


def _heartbeat(conn: Connection, ts: int, broker: int, epoch: int, offset: int, fenced: bool, shutdown: bool) -> None:
    from kio.schema.broker_heartbeat.v0 import request as q, response as r
    request = q.BrokerHeartbeatRequest(broker_id=i32(broker), broker_epoch=i64(epoch), current_metadata_offset=i64(offset),
                                       want_fence=False, want_shut_down=shutdown)
    response = r.BrokerHeartbeatResponse(throttle_time=ZERO, error_code=ErrorCode.none, is_caught_up=not fenced,
                                         is_fenced=fenced, should_shut_down=shutdown)
    conn.exchange(ts, 63, 0, request, response, f"broker-{broker}")


def _unregister(conn: Connection, ts: int, broker: int) -> None:
    from kio.schema.unregister_broker.v0 import request as q, response as r
    conn.exchange(ts, 64, 0, q.UnregisterBrokerRequest(broker_id=i32(broker)),
                  r.UnregisterBrokerResponse(throttle_time=ZERO, error_code=ErrorCode.none, error_message=None),
                  "adminclient-1")


def _offset(broker: int, s: int) -> int:
    """The metadata offset broker reports at second s: 10 a second; broker 6 stalls from 20 s to 40 s."""
    if broker == 6 and 20 <= s < 40:
        return 200
    return 10 * s


def _fenced(broker: int, s: int) -> bool:
    if s < 4:
        return True  # registered fenced, unfenced once caught up
    return any(start <= s < (end if end is not None else END_S + 1) for start, end, _ in TRUTH["fenced"].get(broker, ()))


def records() -> list[tuple[int, bytes]]:
    out: list = []
    at = lambda s: START_NS + int(s * NS)  # noqa: E731
    raft = {(a, b): Connection(out, (CONTROLLERS[a], 40000 + b), (CONTROLLERS[b], 9093))
            for a in CONTROLLERS for b in CONTROLLERS if a != b}
    links = {(b, c): Connection(out, (BROKERS[b], 41000 + c), (CONTROLLERS[c], 9093)) for b in BROKERS for c in (1, 2)}
    for voter in (2, 3):
        _vote(raft[(1, voter)], at(0) + voter * 1000, 1, 1, voter, True)
    for voter in (2, 3):
        _begin(raft[(1, voter)], at(0.1) + voter * 1000, 1, 1)
    for broker, epoch in TRUTH["broker_epochs"].items():
        _register(links[(broker, 1)], at(1) + broker * 1000, broker, epoch)
    for s in range(2, END_S, HEARTBEAT_S):
        leader = 1 if s < 45 else 2
        if s == 46:
            for voter in (2, 3):
                _end(raft[(1, voter)], at(45) + voter * 1000, 1, 1, (2, 3))
            for voter in (1, 3):
                _vote(raft[(2, voter)], at(45.5) + voter * 1000, 2, 2, voter, True)
            for voter in (1, 3):
                _begin(raft[(2, voter)], at(45.6) + voter * 1000, 2, 2)
        for broker, epoch in TRUTH["broker_epochs"].items():
            if broker == 6 and s >= TRUTH["unregistered"][6]:
                continue
            shutdown = broker == 6 and s >= 52
            _heartbeat(links[(broker, leader)], at(s) + broker * 10_000_000, broker, epoch, _offset(broker, s),
                       _fenced(broker, s), shutdown)
    admin = Connection(out, (ADMIN, 42000), (CONTROLLERS[2], 9093))
    _unregister(admin, at(TRUTH["unregistered"][6]), 6)
    for conn in [*raft.values(), *links.values(), admin]:
        conn.close(at(END_S))
    return sorted(out, key=lambda r: r[0])


def capture_bytes() -> bytes:
    return pcap(records(), nano=True)


if __name__ == "__main__":
    with open(sys.argv[1], "wb") as f:
        f.write(capture_bytes())
