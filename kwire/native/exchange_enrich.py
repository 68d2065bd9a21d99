"""Facts one exchange lends to others: topic names for topic ids, and consumer lag.

Since Fetch v13, Produce v13, ShareFetch, OffsetFetch v10 and the group heartbeats, many apis name
topics by id only. A response that states a topic's name and id side by side (Metadata, CreateTopics,
the group describes) teaches the mapping; the Enricher then writes "TopicName" right after each topic
id it can resolve, in every struct that names its topic by id only (requests and responses). Which
fields hold topic names and ids comes from the schemas' marks (kwire.codec.marks), so which
exchanges the Enricher reads or changes is a fact of each (api, version): `enriched()`. It also
works out lag per fetched partition:
HighWatermark minus the FetchOffset the client asked for (remembered per connection, since
incremental fetch sessions leave unchanged partitions out of the request) and stores it in
`exchange.extra["lag"]` as rows {topic, partition, fetch_offset, high_watermark, lag,
last_stable_offset}, and `exchange.extra["fetch"]`: {isolation_level, record_bytes, empty,
aborted_transactions}: what a user chasing a stalled read_committed consumer looks for.
Share fetches get `exchange.extra["share"]`: records acquired and redeliveries per partition.
"""

from __future__ import annotations

from kwire.codec.marks import TOPICS, Tree, entity_tree, pair_tree
from kwire.codec.schema import TOPIC_ID, TOPIC_NAME
from kwire.codec.schemas import schema_for
from kwire.fields import reduce_by_fields, set_fields
from kwire.model import Exchange

ISOLATION = {0: "read_uncommitted", 1: "read_committed"}
MAX_TOPICS = 1 << 16
MAX_OFFSETS = 1 << 18
FETCH_KEY = 1
SHARE_FETCH_KEY = 78
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
_TOPIC_IDS = frozenset({TOPIC_ID})
_EMPTY: tuple = ()


class _Plan:
    """What the Enricher does with one (api, version): the marked trees it walks."""

    __slots__ = ("request_ids", "response_ids", "pairs", "active")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self, api_key: int, version: int):
        request, response = schema_for(api_key, "request"), schema_for(api_key, "response")
        ok = request is not None and version in request.valid
        self.request_ids = entity_tree(request, version, TOPICS) if ok else _EMPTY
        self.response_ids = entity_tree(response, version, TOPICS) if ok else _EMPTY
        self.pairs = pair_tree(response, version) if ok else _EMPTY
        has_ids = ok and bool(entity_tree(request, version, _TOPIC_IDS) or entity_tree(response, version, _TOPIC_IDS))
        self.active = has_ids or bool(self.pairs) or api_key == FETCH_KEY


_PLANS: dict[tuple[int, int], _Plan] = {}


def _plan(api_key, version) -> _Plan | None:
    if api_key is None or version is None:
        return None
    plan = _PLANS.get((api_key, version))
    if plan is None:
        plan = _Plan(api_key, version)
        if len(_PLANS) < 4096:  # bounded: the wire chooses these numbers
            _PLANS[(api_key, version)] = plan
    return plan


def enriched(api_key: int | None, version: int | None) -> bool:
    """Does the Enricher read or change exchanges of this api and version? (It teaches or names
    topic ids, or remembers fetch offsets for lag.) Those exchanges need the capture's order;
    kwire.parallel decodes every other exchange in worker processes."""
    plan = _plan(api_key, version)
    return plan is not None and plan.active


def topic_pairs(api_key: int | None, version: int | None, response: dict | None) -> list[tuple[str, str]]:
    """The (topic id, topic name) pairs a response states side by side (the zero id left out)."""
    plan = _plan(api_key, version)
    if plan is None or not plan.pairs or not response:
        return []
    out: list[tuple[str, str]] = []
    _collect_pairs(response, plan.pairs, out)
    return out


def _collect_pairs(node: dict, tree: Tree, out: list) -> None:
    tid = name = None
    for key, field, sub in tree:
        value = node.get(key)
        if sub is None:
            if field.entity == TOPIC_ID:
                tid = value
            elif field.entity == TOPIC_NAME:
                name = value
        elif type(value) is list:
            for item in value:
                if type(item) is dict:
                    _collect_pairs(item, sub, out)
        elif type(value) is dict:
            _collect_pairs(value, sub, out)
    if type(tid) is str and type(name) is str and name and tid != ZERO_UUID:
        out.append((tid, name))


def _name_ids(node: dict, tree: Tree, names: dict) -> None:
    """Insert "TopicName" right after the topic id of every struct of `node` that names its topic by
    id only, where `names` knows the id; field order is kept."""
    id_key = None
    named = False
    for key, field, sub in tree:
        value = node.get(key)
        if sub is None:
            if field.entity == TOPIC_ID and type(value) is str:
                id_key = key
            elif field.entity == TOPIC_NAME and value:
                named = True
        elif type(value) is list:
            for item in value:
                if type(item) is dict:
                    _name_ids(item, sub, names)
        elif type(value) is dict:
            _name_ids(value, sub, names)
    if id_key is None or named or "TopicName" in node:
        return
    name = names.get(node[id_key])
    if name is None:
        return
    items = list(node.items())
    node.clear()
    for key, value in items:
        node[key] = value
        if key == id_key:
            node["TopicName"] = name


def topic_label(topic: dict) -> str:
    """How Fetch, Produce and the share apis' topic structs are named in figures: the name the wire or
    the Enricher gives ("Topic", "TopicName", "Name"), else the id."""
    return topic.get("Topic") or topic.get("TopicName") or topic.get("Name") or topic.get("TopicId") or "?"


def _wire_topic(topic: dict) -> str | None:
    """The topic as the wire names it (a name before Fetch v13, an id since): stable whether or not a
    Metadata answer has named the id yet."""
    return topic.get("Topic") or topic.get("TopicId")


class Enricher:
    __slots__ = ("topic_names", "fetch_offsets")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.topic_names: dict[str, str] = {}
        self.fetch_offsets: dict[tuple[int, str, int], int] = {}

    def enrich(self, ex: Exchange) -> None:
        plan = _PLANS.get((ex.api_key, ex.api_version)) or _plan(ex.api_key, ex.api_version)
        if plan is None or not plan.active:
            return  # most exchanges: one dict lookup
        names = self.topic_names
        if plan.pairs and ex.response:
            self._learn(ex.response, plan.pairs)
        if names:
            if ex.request and plan.request_ids:
                _name_ids(ex.request, plan.request_ids, names)
            if ex.response and plan.response_ids:
                _name_ids(ex.response, plan.response_ids, names)
        if ex.api_key == FETCH_KEY:
            self._lag(ex)
        elif ex.api_key == SHARE_FETCH_KEY and ex.response:
            self._share(ex)

    def _learn(self, response: dict, pairs: Tree) -> None:
        found: list[tuple[str, str]] = []
        _collect_pairs(response, pairs, found)
        names = self.topic_names
        for tid, name in found:
            if len(names) < MAX_TOPICS or tid in names:
                names[tid] = name

    def _lag(self, ex: Exchange) -> None:
        conn = ex.connection_id
        if ex.request and ex.response is not None:
            level = ex.request.get("IsolationLevel")
            record_bytes = 0
            aborted = 0
            for topic in ex.response.get("Responses") or ():
                for part in topic.get("Partitions") or ():
                    records = part.get("Records")
                    if records is not None:
                        record_bytes += len(records)
                    aborted += len(part.get("AbortedTransactions") or ())
            ex.extra["fetch"] = {
                "isolation_level": ISOLATION.get(level, level) if level is not None else "read_uncommitted",
                "record_bytes": record_bytes,
                "empty": record_bytes == 0,
                "aborted_transactions": aborted,
            }
        if ex.request:
            for topic in ex.request.get("Topics") or ():
                wire = _wire_topic(topic)
                for part in topic.get("Partitions") or ():
                    key = (conn, wire, part.get("Partition"))
                    if len(self.fetch_offsets) < MAX_OFFSETS or key in self.fetch_offsets:
                        self.fetch_offsets[key] = part.get("FetchOffset")
        if not ex.response:
            return
        rows = []
        for topic in ex.response.get("Responses") or ():
            label = topic_label(topic)
            wire = _wire_topic(topic)
            for part in topic.get("Partitions") or ():
                index = part.get("PartitionIndex")
                hw = part.get("HighWatermark")
                offset = self.fetch_offsets.get((conn, wire, index))
                if hw is None or hw < 0 or offset is None or offset < 0:
                    continue
                row = {"topic": label, "partition": index, "fetch_offset": offset,
                       "high_watermark": hw, "lag": max(hw - offset, 0)}
                lso = part.get("LastStableOffset")
                if lso is not None and lso >= 0:
                    row["last_stable_offset"] = lso
                rows.append(row)
        if rows:
            ex.extra["lag"] = rows

    def _share(self, ex: Exchange) -> None:
        rows = []
        for topic in ex.response.get("Responses") or ():
            label = topic_label(topic)
            for part in topic.get("Partitions") or ():
                acquired = 0
                redelivered = 0
                for batch in part.get("AcquiredRecords") or ():
                    n = batch.get("LastOffset", 0) - batch.get("FirstOffset", 0) + 1
                    acquired += n
                    if batch.get("DeliveryCount", 1) > 1:
                        redelivered += n
                rows.append({"topic": label, "partition": part.get("PartitionIndex"),
                             "acquired": acquired, "redelivered": redelivered})
        if rows:
            ex.extra["share"] = rows
