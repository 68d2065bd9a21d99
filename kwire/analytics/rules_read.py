"""What one exchange shows of Kafka's protocol rules (kwire.analytics.rules): observations, cheaply.

`rule_observations(ex, out)` appends, for the few apis a rule reads (RULE_APIS; every other exchange
costs nothing here):

    ("rb", rule, side, api, version, client, broker, evidence, detail)   a rule one exchange proves broken
    ("ra", client, broker, answered_ns, ranges, evidence)   ApiVersions answered ErrorCode 0: ranges is
                                                    ((api key, MinVersion, MaxVersion), ...)
    ("rh", broker, answered_ns, marks, evidence)    a Fetch answer's high watermarks: marks is
                                                    ((topic, partition, HighWatermark), ...)
    ("rl", broker, answered_ns, offsets, evidence)  a ListOffsets answer for the latest offset under
                                                    read_uncommitted: ((topic, partition, Offset), ...)

and, for the rules over topics, committed offsets and groups, what kwire.analytics.rules_read_admin says.
and, for an answer of any api with ThrottleTimeMs > 0 (`throttle_window`, called by kwire.analytics.observe where
it reads the throttle):

    ("rw", request_ns, answered_ns, throttle_ms, api_version, evidence)   throttle_not_honoured's window

and, for a request left unanswered by a connection its broker closed first (`broker_closed`, called by
kwire.analytics.observe for every unanswered exchange; the exchange's `closed_by`, kwire.native.exchange_build):

    ("rc", closed_ns, api_key, api_version, decoded, evidence)   closed_instead_of_answering's candidate: decoded
                                                    whether the request body decoded whole

Read only from the decoded bodies and the v2 batch headers of a read_committed Fetch answer (and the
first record of an ABORT/COMMIT control batch: 2 bytes of its key). Nothing here raises on bad input:
a field of the wrong type is not read.
"""

from __future__ import annotations

from kwire.analytics import tags as T
from kwire.analytics.rules_read_admin import READERS as ADMIN_READERS
from kwire.codec.record_prints import CONTROL, V2_HEADER_SIZE, batch_heads
from kwire.codec.values import RawRecords
from kwire.codec.version_refusal import MOCK_LAYOUT
from kwire.native.exchange_enrich import topic_label
from kwire.errors import DecodeError
from kwire.kafka.primitives import read_varint, read_varlong
from kwire.model import PAIRED, Exchange
from kwire.outcomes import BROKER_SIDE, DECODED

TRANSACTIONAL = 0x10
ABORT = 0
LATEST = -1


def _evidence(ex: Exchange) -> tuple:
    return (ex.ts_ns, ex.client, ex.broker, ex.correlation_id, ex.api)


def _broken(ex: Exchange, rule: str, side: str, detail: str) -> tuple:
    return (T.RULE_BROKEN, rule, side, ex.api, ex.api_version, ex.client, ex.broker, _evidence(ex), detail)


def _api_versions(ex: Exchange, out: list) -> None:
    response = ex.response
    if ex.status != PAIRED or not response:
        return
    if response.get("_layout") == MOCK_LAYOUT:
        out.append(_broken(ex, "api_versions_refusal_layout", "broker",
                           f"ApiVersions v{ex.api_version} refused (ErrorCode {response.get('ErrorCode')}) in "
                           f"librdkafka's mock layout, neither v0's nor v{ex.api_version}'s"))
        return
    if response.get("ErrorCode") != 0:
        return
    ranges = []
    for key in response.get("ApiKeys") or ():
        if type(key) is dict:
            api, low, high = key.get("ApiKey"), key.get("MinVersion"), key.get("MaxVersion")
            if type(api) is int and type(low) is int and type(high) is int:
                ranges.append((api, low, high))
    if ranges:
        out.append((T.ADVERTISED, ex.client, ex.broker, ex.response_ts_ns or ex.ts_ns, tuple(ranges), _evidence(ex)))


def _list_offsets(ex: Exchange, out: list) -> None:
    request, response = ex.request, ex.response
    if ex.status != PAIRED or not request or not response or request.get("IsolationLevel"):
        return
    latest = {(topic_label(t), p.get("PartitionIndex")) for t in request.get("Topics") or () if type(t) is dict
              for p in t.get("Partitions") or () if type(p) is dict and p.get("Timestamp") == LATEST}
    if not latest:
        return
    offsets = []
    for topic in response.get("Topics") or ():
        label = topic_label(topic)
        for part in topic.get("Partitions") or ():
            key = (label, part.get("PartitionIndex"))
            offset = part.get("Offset")
            if key in latest and not part.get("ErrorCode") and type(offset) is int and offset >= 0:
                offsets.append((label, key[1], offset))
    if offsets:
        out.append((T.LATEST_OFFSET, ex.broker, ex.response_ts_ns or ex.ts_ns, tuple(offsets), _evidence(ex)))


def _fetch(ex: Exchange, out: list) -> None:
    response = ex.response
    if ex.status != PAIRED or not response:
        return
    marks = []
    committed = (ex.request or {}).get("IsolationLevel") == 1
    for topic in response.get("Responses") or ():
        label = None
        for part in topic.get("Partitions") or ():
            hw = part.get("HighWatermark")
            if part.get("ErrorCode") or type(hw) is not int or hw < 0:
                continue
            if label is None:
                label = topic_label(topic)
            marks.append((label, part.get("PartitionIndex"), hw))
            if committed:
                records = part.get("Records")
                data = records.data if isinstance(records, RawRecords) else records
                if data:
                    _committed_read(ex, label, part, data, out)
    if marks:
        out.append((T.HIGH_WATERMARK, ex.broker, ex.response_ts_ns or ex.ts_ns, tuple(marks), _evidence(ex)))


def _committed_read(ex: Exchange, label: str, part: dict, data, out: list) -> None:
    """The two read_committed rules on one partition of a Fetch answer."""
    heads = batch_heads(data)
    where = f"{label}[{part.get('PartitionIndex')}]"
    lso = part.get("LastStableOffset")
    if (ex.api_version or 0) >= 4 and type(lso) is int and lso >= 0:
        past = [h[0] for _, _, h in heads if h[0] >= lso]
        if past:
            out.append(_broken(ex, "records_past_last_stable_offset", "broker",
                               f"{where}: a batch at offset {past[0]} at or past LastStableOffset {lso}"))
    first_data: dict[int, int] = {}  # producer id -> base offset of its first transactional batch here
    for pos, size, head in heads:
        pid, attributes = head[9], head[5]
        if not attributes & TRANSACTIONAL or pid < 0:
            continue
        if not attributes & CONTROL:
            first_data.setdefault(pid, head[0])
        elif pid in first_data and _marker_type(data, pos, size) == ABORT:
            listed = [a.get("FirstOffset") for a in part.get("AbortedTransactions") or ()
                      if type(a) is dict and a.get("ProducerId") == pid]
            if not any(type(f) is int and f <= first_data[pid] for f in listed):
                out.append(_broken(ex, "aborted_transactions_missing", "broker",
                                   f"{where}: producer {pid}'s batch at offset {first_data[pid]} and its ABORT "
                                   f"marker at {head[0]}, AbortedTransactions "
                                   f"{'empty' if not part.get('AbortedTransactions') else 'without it'}"))
            del first_data[pid]
        else:
            first_data.pop(pid, None)  # committed: what follows is another transaction


def _marker_type(data, pos: int, size: int) -> int | None:
    """The control type (0 ABORT, 1 COMMIT) of the first record of the control batch at pos, or None."""
    view = memoryview(data)[pos:pos + size]
    if view[22] & 7:  # compressed (attributes' low byte): Kafka never writes markers so
        return None
    try:
        at = V2_HEADER_SIZE
        _, at = read_varint(view, at)  # record length
        at += 1  # attributes
        _, at = read_varlong(view, at)  # timestamp delta
        _, at = read_varint(view, at)  # offset delta
        length, at = read_varint(view, at)
        if length < 4 or at + 4 > len(view):
            return None
        return int.from_bytes(view[at + 2:at + 4], "big", signed=True)
    except (DecodeError, IndexError, ValueError):
        return None


def throttle_window(ex: Exchange, throttle: int, out: list) -> None:
    """An answer that carries a throttle: its request's time and its own (a window throttle_not_honoured checks)."""
    out.append((T.THROTTLE_WINDOW, ex.ts_ns, ex.response_ts_ns or ex.ts_ns, throttle, ex.api_version, _evidence(ex)))


def broker_closed(ex: Exchange, out: list) -> None:
    """An unanswered request whose connection the broker closed first (its FIN or RST before the client's)."""
    if ex.extra.get("closed_by") != BROKER_SIDE or ex.given_up_ts_ns is None:
        return
    outcome = ex.request_outcome
    out.append((T.BROKER_CLOSED, ex.given_up_ts_ns, ex.api_key, ex.api_version,
                outcome is not None and outcome.kind == DECODED, _evidence(ex)))


READERS = {"ApiVersions": _api_versions, "ListOffsets": _list_offsets, "Fetch": _fetch, **ADMIN_READERS}
RULE_APIS = frozenset(READERS)


def rule_observations(ex: Exchange, out: list) -> None:
    reader = READERS.get(ex.api)
    if reader is not None:
        reader(ex, out)
