"""Facts one exchange lends to others: topic names for topic ids, and consumer lag.

Since Fetch v13, ShareFetch and OffsetFetch v10 name topics by id only. A Metadata response seen
earlier in the capture maps ids to names; the Enricher then writes "TopicName" right after each
"TopicId" it can resolve (in requests and responses). It also works out lag per fetched partition:
HighWatermark minus the FetchOffset the client asked for (remembered per connection, since
incremental fetch sessions leave unchanged partitions out of the request) and stores it in
`exchange.extra["lag"]` as rows {topic, partition, fetch_offset, high_watermark, lag,
last_stable_offset}, and `exchange.extra["fetch"]`: {isolation_level, record_bytes, empty,
aborted_transactions}: what a user chasing a stalled read_committed consumer looks for.
Share fetches get `exchange.extra["share"]`: records acquired and redeliveries per partition.
"""

from __future__ import annotations

from kwire.model import Exchange

ISOLATION = {0: "read_uncommitted", 1: "read_committed"}
MAX_TOPICS = 1 << 16
MAX_OFFSETS = 1 << 18
# The apis the Enricher reads or changes (Metadata teaches topic names; the others get them, and
# Fetch and ShareFetch their lag and share facts); it leaves every other exchange alone.
ENRICHED_APIS = frozenset({"Metadata", "Fetch", "ShareFetch", "ShareAcknowledge", "OffsetFetch",
                           "OffsetCommit", "ListOffsets"})


def _wire_topic(topic: dict) -> str | None:
    """The topic as the wire names it (a name before Fetch v13, an id since): stable whether or not a
    Metadata answer has named the id yet."""
    return topic.get("Topic") or topic.get("TopicId")


class Enricher:
    def __init__(self) -> None:
        self.topic_names: dict[str, str] = {}
        self.fetch_offsets: dict[tuple[int, str, int], int] = {}

    def enrich(self, ex: Exchange) -> None:
        api = ex.api
        if api not in ENRICHED_APIS:
            return  # most exchanges: one set lookup
        if api == "Metadata":
            self._learn_metadata(ex.response)
            return
        if self.topic_names:
            if ex.request:
                self._name_topics(ex.request)
            if ex.response:
                self._name_topics(ex.response)
        if api == "Fetch":
            self._lag(ex)
        elif api == "ShareFetch" and ex.response:
            self._share(ex)

    def _learn_metadata(self, body: dict | None) -> None:
        if not body:
            return
        for topic in body.get("Topics") or ():
            tid, name = topic.get("TopicId"), topic.get("Name")
            if tid and name and tid != "AAAAAAAAAAAAAAAAAAAAAA" and len(self.topic_names) < MAX_TOPICS:
                self.topic_names[tid] = name

    def _name_topics(self, node) -> None:
        """Insert TopicName after every resolvable TopicId, preserving the field order."""
        if isinstance(node, list):
            for item in node:
                if isinstance(item, (dict, list)):
                    self._name_topics(item)
            return
        tid = node.get("TopicId")
        if tid is not None and "TopicName" not in node and "Topic" not in node and "Name" not in node:
            name = self.topic_names.get(tid)
            if name is not None:
                items = list(node.items())
                node.clear()
                for key, value in items:
                    node[key] = value
                    if key == "TopicId":
                        node["TopicName"] = name
        for value in node.values():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                self._name_topics(value)

    def _topic_label(self, topic: dict) -> str:
        return topic.get("Topic") or topic.get("TopicName") or topic.get("Name") or topic.get("TopicId") or "?"

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
            label = self._topic_label(topic)
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
            label = self._topic_label(topic)
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
