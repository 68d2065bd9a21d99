"""Which producer a producer id is: its transactional id and client, as the requests that name them say.

`producer_observations(ex, out)` appends ("pi", producer_id, transactional_id, client_id, client, ts) for
each struct of a request that states a transactional id (the schemas' `entityType` marks, so every api and
version Kafka marks is read: InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit,
...), with the producer id stated beside it, or else the one the answer gives (InitProducerId answered
without error; a null transactional id there is an idempotent producer's). A transactional Produce's
batches name theirs through kwire.analytics.observe. `PRODUCER_APIS`: the api names read here, found
from the schemas once. Pure functions of one exchange, as kwire.analytics.observe's.
"""

from __future__ import annotations

from functools import cache

from kwire.analytics import tags as T
from kwire.codec.marks import message_tree, walk
from kwire.codec.schema import PRODUCER_ID, TRANSACTIONAL_ID
from kwire.codec.schemas import all_schemas
from kwire.kafka.apis import api_name
from kwire.model import PAIRED, Exchange

_MARKS = frozenset({PRODUCER_ID, TRANSACTIONAL_ID})


@cache
def producer_apis() -> frozenset[str]:
    """The apis (Produce aside) whose requests state a transactional id in some version."""
    out = set()
    for (key, kind), schema in all_schemas().items():
        if kind != "request" or api_name(key) == "Produce":
            continue
        for version in range(schema.valid.lo, schema.valid.hi + 1):
            tree = message_tree(key, kind, version, frozenset({TRANSACTIONAL_ID}))
            if tree:
                out.add(api_name(key))
                break
    return frozenset(out)


def _answered_pid(ex: Exchange) -> int | None:
    """The producer id an answer without error gives (InitProducerId), else None."""
    response = ex.response
    if ex.status != PAIRED or not response or response.get("ErrorCode"):
        return None
    pid = response.get("ProducerId")
    return pid if type(pid) is int and pid >= 0 else None


def producer_observations(ex: Exchange, out: list) -> None:
    request = ex.request
    if not request:
        return
    structs: dict[int, list] = {}  # id(struct) -> [transactional id, producer id]
    for struct, key, field in walk(request, message_tree(ex.api_key, "request", ex.api_version, _MARKS)):
        cell = structs.setdefault(id(struct), [None, None, False])
        if field.entity == TRANSACTIONAL_ID:
            cell[0], cell[2] = struct[key], True
        elif type(struct[key]) is int and struct[key] >= 0:
            cell[1] = struct[key]
    for txn, pid, named in structs.values():
        if not named:
            continue
        pid = pid if pid is not None else _answered_pid(ex)
        if pid is not None:
            out.append((T.PRODUCER, pid, txn if type(txn) is str else None, ex.client_id, ex.client, ex.ts_ns))
