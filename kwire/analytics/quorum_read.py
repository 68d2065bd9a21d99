"""What one KRaft controller exchange tells of the quorum: `quorum_events(ex)` -> event tuples.

Read from the controllers' apis (Kafka's field names; the partitions of the metadata log, one in
practice):

    ("leader", ts_ns, leader_id, epoch, api, evidence)       BeginQuorumEpoch (a new leader says so),
                                                             a Vote, BeginQuorumEpoch or EndQuorumEpoch
                                                             answer, a DescribeQuorum answer
    ("resign", ts_ns, leader_id, epoch, evidence)            EndQuorumEpoch (the leader steps down)
    ("vote", ts_ns, candidate, epoch, voter, granted, pre_vote, evidence)
                                                             Vote: granted None when not answered
    ("register", ts_ns, broker_id, broker_epoch, result, evidence)        BrokerRegistration
    ("heartbeat", ts_ns, broker_id, broker_epoch, metadata_offset, fenced, wants, result, evidence)
                                                             BrokerHeartbeat: fenced is the answer's
                                                             IsFenced (None unanswered); wants "fence",
                                                             "shutdown" or None (what the broker asked)
    ("unregister", ts_ns, broker_id, result, evidence)       UnregisterBroker

A leader id or epoch below 0 (Kafka's "not known") is no leader. An evidence is kwire.analytics.
observe's (ts_ns, client, broker, correlation_id, api).
"""

from __future__ import annotations

from kwire.kafka.error_codes import error_name
from kwire.model import PAIRED, Exchange

QUORUM_APIS = frozenset({"Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "DescribeQuorum", "BrokerRegistration",
                         "BrokerHeartbeat", "UnregisterBroker"})


def _evidence(ex: Exchange) -> tuple:
    return (ex.ts_ns, ex.client, ex.broker, ex.correlation_id, ex.api)


def _partitions(body) -> list[dict]:
    return [p for t in (body or {}).get("Topics") or () if type(t) is dict
            for p in t.get("Partitions") or () if type(p) is dict]


def _result(ex: Exchange) -> str:
    if ex.status != PAIRED:
        return "no_response"
    if not ex.response:
        return "undecoded"
    code = ex.response.get("ErrorCode")
    return "ok" if not code else error_name(code)


def _leaders(ex: Exchange, body, out: list) -> None:
    ts = ex.response_ts_ns if body is ex.response and ex.response_ts_ns else ex.ts_ns
    for p in _partitions(body):
        leader, epoch = p.get("LeaderId"), p.get("LeaderEpoch")
        if type(leader) is int and type(epoch) is int and leader >= 0 and epoch >= 0 and not p.get("ErrorCode"):
            out.append(("leader", ts, leader, epoch, ex.api, _evidence(ex)))


def _vote(ex: Exchange, out: list) -> None:
    request = ex.request or {}
    answers = _partitions(ex.response) if ex.status == PAIRED else []
    voter = request.get("VoterId")
    if type(voter) is not int or voter < 0:
        voter = ex.broker  # a voter that does not give its id (v0): its address
    for i, p in enumerate(_partitions(request)):
        answer = answers[i] if i < len(answers) else None
        granted = None if answer is None else bool(answer.get("VoteGranted"))
        out.append(("vote", ex.ts_ns, p.get("ReplicaId"), p.get("ReplicaEpoch"), voter, granted,
                    bool(p.get("PreVote")), _evidence(ex)))
    _leaders(ex, ex.response, out)


def _begin(ex: Exchange, out: list) -> None:
    _leaders(ex, ex.request, out)
    _leaders(ex, ex.response, out)


def _end(ex: Exchange, out: list) -> None:
    for p in _partitions(ex.request):
        if type(p.get("LeaderId")) is int and p["LeaderId"] >= 0:
            out.append(("resign", ex.ts_ns, p["LeaderId"], p.get("LeaderEpoch"), _evidence(ex)))
    _leaders(ex, ex.response, out)


def _register(ex: Exchange, out: list) -> None:
    request = ex.request or {}
    epoch = (ex.response or {}).get("BrokerEpoch")
    out.append(("register", ex.ts_ns, request.get("BrokerId"), epoch if type(epoch) is int and epoch >= 0 else None,
                _result(ex), _evidence(ex)))


def _heartbeat(ex: Exchange, out: list) -> None:
    request = ex.request or {}
    answered = ex.status == PAIRED and ex.response
    fenced = bool(ex.response.get("IsFenced")) if answered and not ex.response.get("ErrorCode") else None
    wants = "shutdown" if request.get("WantShutDown") else "fence" if request.get("WantFence") else None
    out.append(("heartbeat", ex.ts_ns, request.get("BrokerId"), request.get("BrokerEpoch"),
                request.get("CurrentMetadataOffset"), fenced, wants, _result(ex), _evidence(ex)))


def _unregister(ex: Exchange, out: list) -> None:
    out.append(("unregister", ex.ts_ns, (ex.request or {}).get("BrokerId"), _result(ex), _evidence(ex)))


def _describe(ex: Exchange, out: list) -> None:
    _leaders(ex, ex.response, out)


_READERS = {"Vote": _vote, "BeginQuorumEpoch": _begin, "EndQuorumEpoch": _end, "DescribeQuorum": _describe,
            "BrokerRegistration": _register, "BrokerHeartbeat": _heartbeat, "UnregisterBroker": _unregister}


def quorum_events(ex: Exchange) -> list[tuple]:
    if ex.api not in QUORUM_APIS or not ex.request and not ex.response:
        return []
    out: list[tuple] = []
    _READERS[ex.api](ex, out)
    return out
