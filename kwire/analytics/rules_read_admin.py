"""What an exchange of topics, committed offsets or groups shows the rules read over time (kwire.analytics.rules:
validate_only_created, offset_metadata_not_kept, consumer_group_describe_classic). Observations:

    ("rt", what, req_ns, ans_ns, names, evidence)    topics: what is VALIDATED (CreateTopics validateOnly answered
                                                     ErrorCode 0), CREATED (a CreateTopics without validateOnly,
                                                     answered or not), EXISTS (CreateTopics answered
                                                     TOPIC_ALREADY_EXISTS, a Metadata answer listing it) or AUTO (a
                                                     Metadata request that may create it); ans_ns None unanswered
    ("ro", what, group, req_ns, ans_ns, items, evidence)   offsets: what is COMMIT, TXN_COMMIT (answered ErrorCode 0
                                                     for the partition), UNCERTAIN (a commit not answered) or READ
                                                     (an OffsetFetch answer); items ((topic, partition, offset,
                                                     metadata), ...), metadata as `metadata_key` keeps it
    ("rg", what, req_ns, ans_ns, items, evidence)    groups: what is SAID (ListGroups' GroupType: items ((group,
                                                     type), ...)), JOINED (a ConsumerGroupHeartbeat with MemberEpoch
                                                     0: ((group, None),)) or DESCRIBED (ConsumerGroupDescribe answered
                                                     ErrorCode 0: ((group, GroupState), ...))

Read from the decoded bodies only; a field of the wrong type is not read, nothing raises.
"""

from __future__ import annotations

from zlib import crc32

from kwire.analytics import tags as T
from kwire.native.exchange_enrich import topic_label
from kwire.model import NO_RESPONSE, PAIRED, Exchange

VALIDATED, CREATED, EXISTS, AUTO = "validated", "created", "exists", "auto"
COMMIT, TXN_COMMIT, UNCERTAIN, READ = "commit", "txn_commit", "uncertain", "read"
SAID, JOINED, DESCRIBED = "said", "joined", "described"
TOPIC_ALREADY_EXISTS = 36
MAX_METADATA = 256  # characters of a metadata string kept as it is; longer ones by length and CRC-32


def _evidence(ex: Exchange) -> tuple:
    return (ex.ts_ns, ex.client, ex.broker, ex.correlation_id, ex.api)


def _answered(ex: Exchange):
    return ex.response_ts_ns or ex.ts_ns


def metadata_key(value):
    """A metadata string as the rules compare it: itself, or (when long) its start, length and CRC-32."""
    if type(value) is not str or len(value) <= MAX_METADATA:
        return value if type(value) is str else None
    return f"{value[:64]}... ({len(value)} characters, CRC-32 {crc32(value.encode('utf-8', 'replace')):08x})"


def _structs(value):
    return [v for v in value if type(v) is dict] if type(value) is list else []


def _create_topics(ex: Exchange, out: list) -> None:
    request = ex.request
    if not request:
        return
    names = tuple(t.get("Name") for t in _structs(request.get("Topics")) if type(t.get("Name")) is str)
    if not names:
        return
    ev = _evidence(ex)
    if ex.status == PAIRED and ex.response:
        answered = _answered(ex)
        codes = {t.get("Name"): t.get("ErrorCode") for t in _structs(ex.response.get("Topics"))}
        exists = tuple(n for n in names if codes.get(n) == TOPIC_ALREADY_EXISTS)
        if exists:
            out.append((T.RULE_TOPIC, EXISTS, ex.ts_ns, answered, exists, ev))
        if request.get("validateOnly") is True:
            valid = tuple(n for n in names if codes.get(n) == 0)
            if valid:
                out.append((T.RULE_TOPIC, VALIDATED, ex.ts_ns, answered, valid, ev))
            return
    if request.get("validateOnly") is not True:
        out.append((T.RULE_TOPIC, CREATED, ex.ts_ns, None, names, ev))


def _metadata(ex: Exchange, out: list) -> None:
    request, response = ex.request, ex.response
    ev = _evidence(ex)
    if request:
        named = tuple(t.get("Name") for t in _structs(request.get("Topics")) if type(t.get("Name")) is str)
        if named and ((ex.api_version or 0) < 4 or request.get("AllowAutoTopicCreation") is True):
            out.append((T.RULE_TOPIC, AUTO, ex.ts_ns, None, named, ev))
    if ex.status == PAIRED and response:
        listed = tuple(t.get("Name") for t in _structs(response.get("Topics"))
                       if t.get("ErrorCode") == 0 and type(t.get("Name")) is str)
        if listed:
            out.append((T.RULE_TOPIC, EXISTS, ex.ts_ns, _answered(ex), listed, ev))


def _committed(request: dict, response: dict | None) -> list[tuple]:
    """(topic, partition, offset, metadata) of an OffsetCommit or TxnOffsetCommit: those answered ErrorCode 0,
    or (no response) all of the request's."""
    ok = None
    if response is not None:
        ok = {(topic_label(t), p.get("PartitionIndex")) for t in _structs(response.get("Topics"))
              for p in _structs(t.get("Partitions")) if p.get("ErrorCode") == 0}
    items = []
    for topic in _structs(request.get("Topics")):
        label = topic_label(topic)
        for part in _structs(topic.get("Partitions")):
            key = (label, part.get("PartitionIndex"))
            offset = part.get("CommittedOffset")
            if type(key[1]) is int and type(offset) is int and (ok is None or key in ok):
                items.append((label, key[1], offset, metadata_key(part.get("CommittedMetadata"))))
    return items


def _offset_commit(ex: Exchange, out: list) -> None:
    request = ex.request
    group = request.get("GroupId") if request else None
    if type(group) is not str:
        return
    if ex.status == PAIRED and ex.response:
        items = _committed(request, ex.response)
        what = TXN_COMMIT if ex.api == "TxnOffsetCommit" else COMMIT
        if items:
            out.append((T.RULE_OFFSET, what, group, ex.ts_ns, _answered(ex), tuple(items), _evidence(ex)))
    elif ex.status == NO_RESPONSE:
        items = _committed(request, None)
        if items:
            out.append((T.RULE_OFFSET, UNCERTAIN, group, ex.ts_ns, None, tuple(items), _evidence(ex)))


def _read_partitions(topics) -> list[tuple]:
    items = []
    for topic in _structs(topics):
        label = topic_label(topic)
        for part in _structs(topic.get("Partitions")):
            index, offset = part.get("PartitionIndex"), part.get("CommittedOffset")
            if part.get("ErrorCode") == 0 and type(index) is int and type(offset) is int and offset >= 0:
                items.append((label, index, offset, metadata_key(part.get("Metadata"))))
    return items


def _offset_fetch(ex: Exchange, out: list) -> None:
    request, response = ex.request, ex.response
    if ex.status != PAIRED or not request or not response or response.get("ErrorCode"):
        return
    ev, answered = _evidence(ex), _answered(ex)
    if "Groups" in response:  # v8 and up
        groups = [(g.get("GroupId"), _read_partitions(g.get("Topics"))) for g in _structs(response.get("Groups"))
                  if not g.get("ErrorCode")]
    else:
        groups = [(request.get("GroupId"), _read_partitions(response.get("Topics")))]
    for group, items in groups:
        if type(group) is str and items:
            out.append((T.RULE_OFFSET, READ, group, ex.ts_ns, answered, tuple(items), ev))


def _list_groups(ex: Exchange, out: list) -> None:
    response = ex.response
    if ex.status != PAIRED or not response or response.get("ErrorCode"):
        return
    said = tuple((g.get("GroupId"), g.get("GroupType").lower()) for g in _structs(response.get("Groups"))
                 if type(g.get("GroupId")) is str and type(g.get("GroupType")) is str and g.get("GroupType"))
    if said:
        out.append((T.RULE_GROUP, SAID, ex.ts_ns, _answered(ex), said, _evidence(ex)))


def _heartbeat(ex: Exchange, out: list) -> None:
    request = ex.request
    if request and request.get("MemberEpoch") == 0 and type(request.get("GroupId")) is str:
        out.append((T.RULE_GROUP, JOINED, ex.ts_ns, None, ((request["GroupId"], None),), _evidence(ex)))


def _describe(ex: Exchange, out: list) -> None:
    response = ex.response
    if ex.status != PAIRED or not response:
        return
    described = tuple((g.get("GroupId"), g.get("GroupState")) for g in _structs(response.get("Groups"))
                      if g.get("ErrorCode") == 0 and type(g.get("GroupId")) is str)
    if described:
        out.append((T.RULE_GROUP, DESCRIBED, ex.ts_ns, _answered(ex), described, _evidence(ex)))


READERS = {"CreateTopics": _create_topics, "Metadata": _metadata, "OffsetCommit": _offset_commit,
           "TxnOffsetCommit": _offset_commit, "OffsetFetch": _offset_fetch, "ListGroups": _list_groups,
           "ConsumerGroupHeartbeat": _heartbeat, "ConsumerGroupDescribe": _describe}
