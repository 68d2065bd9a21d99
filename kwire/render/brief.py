"""What one exchange was about, in a few words: the facts `inspect`'s one-line view shows.

Pure functions of an Exchange, no rich:
- `error_names(ex)`: Kafka's name of every non-zero ErrorCode of the response, in body order (the
  codes kwire.native.exchange_errors.error_codes finds, the ones `stats` counts); also JSON Lines' `errors` key.
- `problems(ex)`: what went wrong, shortest first: the status when not paired, "decode error",
  the error names (repeats counted: `NOT_LEADER_OR_FOLLOWER×3`).
- `carried(ex)`: what the exchange carried: topics with their partitions (`orders[0-2,5]`), records
  and their bytes, the highest consumer lag a Fetch measured, the group, and the names of the request's top-level enum fields (`Acks=ALL`).
Wire strings are returned as they are: the views escape them (kwire.render.safe).
"""

from __future__ import annotations

from collections import Counter

from kwire.native.exchange_facts import group_id, records_facts
from kwire.codec.marks import enum_tree
from kwire.codec.schemas import schema_for
from kwire.codec.values import RawRecords
from kwire.counts import count as counted
from kwire.kafka.error_codes import error_name
from kwire.model import PAIRED, Exchange
from kwire.native.exchange_build import is_malformed
from kwire.outcomes import is_cut
from kwire.native.exchange_errors import error_codes
from kwire.query import topic_partitions
from kwire.render.units import human_bytes

MAX_TOPICS = 3  # topics named on one line; the rest are counted


def error_names(ex: Exchange) -> list[str]:
    return [error_name(code) for code in error_codes(ex.response)] if ex.response else []


def problems(ex: Exchange) -> list[str]:
    out = []
    if ex.status != PAIRED:
        out.append(ex.status)
    if is_malformed(ex):
        out.append("decode error")
    elif is_cut(ex.request_outcome) or is_cut(ex.response_outcome):
        out.append("cut short")
    for name, n in Counter(error_names(ex)).items():
        out.append(name if n == 1 else f"{name}×{n}")
    return out


def ranges(numbers) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0-2,5,7-8"."""
    values = sorted(set(numbers))
    out = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(out)


def topics_text(ex: Exchange) -> str | None:
    entries = topic_partitions(ex)
    if not entries:
        return None
    shown = [f"{e.label}[{ranges(e.partitions)}]" if e.partitions else e.label for e in entries[:MAX_TOPICS]]
    if len(entries) > MAX_TOPICS:
        shown.append("+" + counted(len(entries) - MAX_TOPICS, "topic"))
    return " ".join(shown)


def _record_sets(node, out: list) -> None:
    t = type(node)
    if t is RawRecords:
        out.append(node)
    elif t is dict:
        for value in node.values():
            if type(value) in (dict, list, RawRecords):
                _record_sets(value, out)
    elif t is list:
        for item in node:
            if type(item) in (dict, list, RawRecords):
                _record_sets(item, out)


def records_text(ex: Exchange) -> str | None:
    """"3 records 1.2 KiB" over every records field of both bodies; None when there is none."""
    sets: list = []
    for body in (ex.request, ex.response):
        if body:
            _record_sets(body, sets)
    if not sets:
        return None
    size = count = 0
    for value in sets:
        b, n = records_facts(value)
        size += b
        count += n
    return f"{counted(count, 'record')} {human_bytes(size)}"


def enum_texts(ex: Exchange) -> list[str]:
    """The request's top-level fields whose values have names: "IsolationLevel=READ_COMMITTED"."""
    request = ex.request
    if not request or ex.api_key is None:
        return []
    schema = schema_for(ex.api_key, "request")
    if schema is None or ex.api_version not in schema.valid:
        return []
    out = []
    for key, f, sub in enum_tree(schema, ex.api_version):
        value = request.get(key)
        if sub is None and type(value) is int:
            out.append(f"{key}={f.enum.get(value, value)}")
    return out


def carried(ex: Exchange) -> list[str]:
    parts = []
    topics = topics_text(ex)
    if topics:
        parts.append(topics)
    records = records_text(ex)
    if records:
        parts.append(records)
    lags = [row["lag"] for row in ex.extra.get("lag") or () if type(row.get("lag")) is int]
    if lags:
        parts.append(f"lag {max(lags):,}")
    group = group_id(ex)
    if group is not None:
        parts.append(f"group {group}")
    ending = transaction_end(ex)
    if ending:
        parts.append(ending)
    parts += enum_texts(ex)
    return parts


END_TXN = 26  # Kafka's api key of EndTxn


def transaction_end(ex: Exchange) -> str | None:
    """An EndTxn's outcome asked for and its transaction: "commit txn ledger-writer" (or "abort ..."); None for
    any other exchange, or an EndTxn whose request was not decoded."""
    request = ex.request
    if ex.api_key != END_TXN or not isinstance(request, dict) or type(request.get("Committed")) is not bool:
        return None
    txn = request.get("TransactionalId")
    return ("commit" if request["Committed"] else "abort") + (f" txn {txn}" if isinstance(txn, str) else "")
