"""What a group api exchange tells about its group: members, generations, assignments, commits.

`group_observations(ex, out)` appends tuples (kwire.analytics.observe explains the form) for the
apis of classic groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), KIP-848 consumer groups
(ConsumerGroupHeartbeat), share groups (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge) and
offset commits (OffsetCommit, TxnOffsetCommit):

    ("gc", group, broker)                               the group's coordinator answered this
    ("gm", group, member, ts, client_id, client, protocol, evidence)   a request of this member
    ("gp", group, generation, member, ts)               the member is in this generation
    ("gs", group, generation, ts, leader, evidence, protocol)   the generation exists from ts (its leader;
                                                        protocol: the JoinGroup answer's ProtocolName, the
                                                        assignor, or None)
    ("ga", group, member, generation, ts, assignment, evidence)   the member was given these partitions
    ("gj", group, generation, ts)                       a JoinGroup of this generation's rebalance
    ("gy", group, generation, ts)                       a SyncGroup answered for this generation
    ("gl", group, member, ts)                           the member left (LeaveGroup, epoch -1 or -2)
    ("gr", group, ts)                                   REBALANCE_IN_PROGRESS answered
    ("go", group, topic, partition, ts, offset)         an offset committed (answered without error)
    ("ec", response ts, group, topic, partition, offset)   the same, for end-to-end lag in time of commits
                                                        (kwire.analytics.end_to_end; the answer's time)
    ("js", group, member, client_id, client, ts, latency_ns, rebalance_timeout_ms, evidence)
                                                        a JoinGroup not answered, or answered after its
                                                        rebalance timeout
    ("jw", group, member, client_id, client, ts, latency_ns, rebalance_timeout_ms, evidence)
                                                        a JoinGroup not answered (latency None), or answered
                                                        JOIN_WAIT_MIN_NS or more after it was sent
    ("rj",)                                             a KIP-848 or share member (re)joins (epoch 0)

A generation is the classic GenerationId, or for KIP-848 consumer and share groups the member epoch
a heartbeat answer gives. An assignment is ((topic, (partitions...)), ...) sorted; KIP-848 topics are
named by id until kwire.analytics names them. Times are ns; a request's time unless said otherwise.
"""

from __future__ import annotations

from kwire.native.exchange_enrich import topic_label
from kwire.codec.consumer_protocol import ASSIGNMENT_KEY, assignment_partitions
from kwire.model import PAIRED, Exchange
from kwire.analytics import tags as T

CLASSIC, CONSUMER, SHARE = "classic", "consumer", "share"
REBALANCE_IN_PROGRESS = 27
JOIN_WAIT_MIN_NS = 1_000_000_000  # a JoinGroup answered sooner cannot have waited while another generation formed
GROUP_APIS = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "TxnOffsetCommit",
                        "ConsumerGroupHeartbeat", "ShareGroupHeartbeat", "ShareFetch", "ShareAcknowledge"})


def _evidence(ex: Exchange) -> tuple:
    return (ex.ts_ns, ex.client, ex.broker, ex.correlation_id, ex.api)


def _assignment(parts: dict[str, list[int]]) -> tuple:
    return tuple((topic, tuple(sorted(set(p)))) for topic, p in sorted(parts.items()))


def _member(out: list, ex: Exchange, group: str, member, protocol) -> None:
    if member:
        out.append((T.MEMBER, group, member, ex.ts_ns, ex.client_id, ex.client, protocol, _evidence(ex)))


def _join(ex: Exchange, group: str, out: list) -> None:
    request, response = ex.request, ex.response
    member = request.get("MemberId") or None
    timeout = request.get("RebalanceTimeoutMs", request.get("SessionTimeoutMs"))
    if response and response.get("ErrorCode") == 0:
        generation = response.get("GenerationId")
        member = response.get("MemberId") or member
        at = ex.response_ts_ns
        out.append((T.GENERATION, group, generation, at, response.get("Leader") or None, _evidence(ex),
                    response.get("ProtocolName") or None))
        out.append((T.JOIN, group, generation, ex.ts_ns))
        if member:
            out.append((T.IN_GENERATION, group, generation, member, at))
        for other in response.get("Members") or ():
            if other.get("MemberId"):
                out.append((T.IN_GENERATION, group, generation, other["MemberId"], at))
    _member(out, ex, group, member, CLASSIC)
    # (paired without its answer's time: an answer a capture gap took, kwire.native.kafka_pairing)
    latency = ex.response_ts_ns - ex.ts_ns if ex.status == PAIRED and ex.response_ts_ns is not None else None
    unanswered = ex.request_ts_ns is not None and ex.status != PAIRED
    if isinstance(timeout, int) and (unanswered or latency is not None and latency >= timeout * 1_000_000):
        out.append((T.JOIN_STUCK, group, member, ex.client_id, ex.client, ex.ts_ns, latency, timeout, _evidence(ex)))
    if unanswered or latency is not None and latency >= JOIN_WAIT_MIN_NS:
        out.append((T.JOIN_WAIT, group, member, ex.client_id, ex.client, ex.ts_ns, latency,
                    timeout if isinstance(timeout, int) else None, _evidence(ex)))


def _sync(ex: Exchange, group: str, out: list) -> None:
    request, response = ex.request, ex.response
    generation, member = request.get("GenerationId"), request.get("MemberId") or None
    _member(out, ex, group, member, CLASSIC)
    if member:  # a null member id (a non-nullable field sent null) names no member
        out.append((T.IN_GENERATION, group, generation, member, ex.ts_ns))
    for item in request.get("Assignments") or ():
        decoded = item.get(ASSIGNMENT_KEY)
        if decoded and "error" not in decoded and item.get("MemberId"):
            out.append((T.ASSIGNMENT, group, item["MemberId"], generation, ex.ts_ns,
                        _assignment(assignment_partitions(decoded)), _evidence(ex)))
    if response and response.get("ErrorCode") == 0:
        out.append((T.SYNC, group, generation, ex.response_ts_ns))
        decoded = response.get(ASSIGNMENT_KEY)
        if member and (decoded is not None and "error" not in decoded or not response.get("Assignment")):
            out.append((T.ASSIGNMENT, group, member, generation, ex.response_ts_ns,
                        _assignment(assignment_partitions(decoded)), _evidence(ex)))


def _heartbeat(ex: Exchange, group: str, out: list) -> None:
    request = ex.request
    _member(out, ex, group, request.get("MemberId"), CLASSIC)
    if request.get("MemberId"):
        out.append((T.IN_GENERATION, group, request.get("GenerationId"), request["MemberId"], ex.ts_ns))


def _leave(ex: Exchange, group: str, out: list) -> None:
    request = ex.request
    members = [request.get("MemberId")] + [m.get("MemberId") for m in request.get("Members") or ()]
    for member in members:
        if member:
            _member(out, ex, group, member, CLASSIC)
            out.append((T.LEFT, group, member, ex.ts_ns))


def _epoch_heartbeat(ex: Exchange, group: str, out: list, protocol: str) -> None:
    request, response = ex.request, ex.response
    member = (response or {}).get("MemberId") or request.get("MemberId") or None
    _member(out, ex, group, member, protocol)
    if request.get("MemberEpoch") in (-1, -2) and member:
        out.append((T.LEFT, group, member, ex.ts_ns))
        return
    if request.get("MemberEpoch") == 0:
        out.append((T.REJOIN,))
    if not response or response.get("ErrorCode") != 0 or not member:
        return
    epoch, at = response.get("MemberEpoch"), ex.response_ts_ns
    if not isinstance(epoch, int) or epoch <= 0:
        return  # joined, not yet in a generation
    out.append((T.GENERATION, group, epoch, at, None, _evidence(ex), None))
    out.append((T.IN_GENERATION, group, epoch, member, at))
    assignment = response.get("Assignment")
    if assignment is not None:
        parts = {}
        for topic in assignment.get("TopicPartitions") or ():
            parts.setdefault(topic_label(topic), []).extend(topic.get("Partitions") or ())
        out.append((T.ASSIGNMENT, group, member, epoch, at, _assignment(parts), _evidence(ex)))


def _commit(ex: Exchange, group: str, out: list) -> None:
    request, response = ex.request, ex.response
    _member(out, ex, group, request.get("MemberId"), None)
    if ex.status != PAIRED or not response:
        return
    failed = set()
    for topic in response.get("Topics") or ():
        for part in topic.get("Partitions") or ():
            if part.get("ErrorCode"):
                failed.add((topic_label(topic), part.get("PartitionIndex")))
    for topic in request.get("Topics") or ():
        label = topic_label(topic)
        for part in topic.get("Partitions") or ():
            key = (label, part.get("PartitionIndex"))
            if key not in failed and isinstance(part.get("CommittedOffset"), int):
                out.append((T.OFFSET_COMMIT, group, label, key[1], ex.ts_ns, part["CommittedOffset"]))
                if type(key[1]) is int and type(label) is str and type(group) is str:  # kwire.analytics.end_to_end
                    out.append((T.E2E_COMMIT, ex.response_ts_ns, group, label, key[1], part["CommittedOffset"]))


def _share_member(ex: Exchange, group: str, out: list) -> None:
    _member(out, ex, group, ex.request.get("MemberId"), SHARE)


def _rebalancing(ex: Exchange, group: str, out: list) -> None:
    response = ex.response
    if response and response.get("ErrorCode") == REBALANCE_IN_PROGRESS:
        out.append((T.REBALANCING, group, ex.ts_ns))


_READERS = {
    "JoinGroup": _join,
    "SyncGroup": _sync,
    "Heartbeat": _heartbeat,
    "LeaveGroup": _leave,
    "OffsetCommit": _commit,
    "TxnOffsetCommit": _commit,
    "ConsumerGroupHeartbeat": lambda ex, group, out: _epoch_heartbeat(ex, group, out, CONSUMER),
    "ShareGroupHeartbeat": lambda ex, group, out: _epoch_heartbeat(ex, group, out, SHARE),
    "ShareFetch": _share_member,
    "ShareAcknowledge": _share_member,
}


def group_observations(ex: Exchange, out: list) -> None:
    request = ex.request
    group = request.get("GroupId") if request else None
    if not isinstance(group, str):
        return
    if ex.status == PAIRED and ex.api not in ("ShareFetch", "ShareAcknowledge"):
        out.append((T.COORDINATOR, group, ex.broker))
    _READERS[ex.api](ex, group, out)
    if ex.api in ("Heartbeat", "SyncGroup", "OffsetCommit", "JoinGroup"):
        _rebalancing(ex, group, out)
