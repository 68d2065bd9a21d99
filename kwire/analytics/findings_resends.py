"""Finding duplicate_write: a record a producer sent again after the broker had already stored it.

- duplicate_write {topic, partition, client_id, client, error, records, offsets, read_twice,
  resent_after_ms}: a producer that is not idempotent sent records (kwire.analytics.resends tells
  them by their CreateTime, key, value and headers) whose Produce was answered `error` (a Kafka
  error name, or "no_response"), one after which Kafka may already have written them (WROTE_MAYBE)
  or an answer that still gave a base offset; within RESEND_WINDOW_MS it sent them again, and that
  send was written (answered without error). One finding per first send: `records` sent twice; `offsets`:
  [first copy, second copy] of each (at most MAX_OFFSETS; an offset the capture does not show is
  null): the first copy's from that answer's base offset, else from a Fetch answer that carried the
  first batch (a broker keeps a batch's CRC); the second's from the resend's answer; `read_twice`:
  records a Fetch answer showed at both offsets. Evidence: both Produce exchanges and the Fetch
  exchanges that read the two copies. `client`: the producer's address, `client_id` its client id.

Idempotent producers are never read: the broker drops their duplicates (produce_retry says so).
"""

from __future__ import annotations

from kwire.analytics.figures import ms
from kwire.analytics.findings import finding
from kwire.counts import count
from kwire.analytics.resends import RESEND_WINDOW_MS

NS = 1_000_000_000
WINDOW_NS = RESEND_WINDOW_MS * 1_000_000
MAX_OFFSETS = 20
# Errors after which the batch may be in the log: the leader wrote it and lost leadership before
# acks=all was met, timed out waiting for replicas, or said so; or the answer never came.
WROTE_MAYBE = frozenset({"NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                         "NETWORK_EXCEPTION", "no_response"})
# A send as ResendState keeps it: (ts, client id, crc, offset delta, error, offset, evidence)
TS, CLIENT_ID, CRC, DELTA, ERROR, OFFSET, EV = range(7)


def resent(state, names: dict) -> list[tuple]:
    """(topic, partition, producer, failed send, later sends within the window) of every record kept
    sent again after its first send that failed (an error answer or none)."""
    out = []
    for key in state.records:
        _, topic, partition, producer = key
        kept = state.sends(key)
        if len(kept) < 2:
            continue
        at = next((i for i, s in enumerate(kept) if s[ERROR] is not None), None)
        if at is None:
            continue
        first = kept[at]
        later = [s for s in kept[at + 1:] if s[TS] - first[TS] <= WINDOW_NS]
        if later:
            out.append((names.get(topic, topic), partition, producer, first, later))
    return out


def _copies(state, names: dict) -> dict[tuple, dict]:
    """(crc, topic, partition) -> {base offset: first Fetch evidence}, topics named."""
    out: dict[tuple, dict] = {}
    for (crc, topic, partition), copies in state.fetched.items():
        at = out.setdefault((crc, names.get(topic, topic), partition), {})
        for base, ev in copies.at.items():
            if base not in at or ev < at[base]:
                at[base] = ev
    return out


def _second(first: tuple, later: list) -> tuple | None:
    """The resend that was written: the first later send answered without error."""
    if first[ERROR] not in WROTE_MAYBE and first[OFFSET] is None:
        return None
    for send in later:
        if send[ERROR] is None:
            return send
    return None


def _offsets(first: tuple, second: tuple, read: dict, topic, partition) -> tuple:
    """(first copy's offset, second copy's, Fetch evidence of each) as the capture shows them."""
    at2 = read.get((second[CRC], topic, partition), {})
    off2, ev2 = second[OFFSET], None
    for base, ev in sorted(at2.items()):
        if off2 is None or base + second[DELTA] == off2:
            off2, ev2 = base + second[DELTA], ev
            break
    off1, ev1 = first[OFFSET], None
    for base, ev in sorted(read.get((first[CRC], topic, partition), {}).items()):
        offset = base + first[DELTA]
        if offset != off2 and (off1 is None or offset == off1):
            off1, ev1 = offset, ev
            break
    return off1, off2, ev1, ev2


def _gather(state, names: dict) -> dict[tuple, dict]:
    read = _copies(state, names)
    groups: dict[tuple, dict] = {}
    for topic, partition, producer, first, later in resent(state, names):
        second = _second(first, later)
        if second is None:
            continue
        off1, off2, ev1, ev2 = _offsets(first, second, read, topic, partition)
        group = groups.setdefault((str(topic), partition, str(producer), first[EV]), {
            "topic": topic, "partition": partition, "first": first, "pairs": [], "evidence": [first[EV]],
            "read_twice": 0, "end": first[TS]})
        group["pairs"].append((off2 if off2 is not None else -1, off1, off2))
        group["evidence"] += [e for e in (second[EV], ev1, ev2) if e is not None]
        group["read_twice"] += 1 if ev1 is not None and ev2 is not None else 0
        group["end"] = max(group["end"], second[TS])
    return groups


def _summary(group: dict, pairs: list) -> str:
    first = group["first"]
    topic, partition, n = group["topic"], group["partition"], len(pairs)
    who = f"{first[CLIENT_ID] or 'a producer'} ({first[EV][1]})"
    answer = "got no answer" if first[ERROR] == "no_response" else f"was answered {first[ERROR]}"
    known = all(a is not None and b is not None for a, b in pairs)
    stored = "after the broker had stored it" if known else "where the broker may already have stored it"
    shown = ", ".join(f"{a if a is not None else '?'} and {b if b is not None else '?'}" for a, b in pairs[:3])
    more = f" (+{n - 3:,} more)" if n > 3 else ""
    twice = group["read_twice"]
    read = "" if not twice else "; a consumer read both copies" if twice == n else \
        f"; a consumer read both copies of {twice:,} of them"
    what = count(n, "record")
    return (f"{what} of {topic}[{partition}] written twice: a Produce of {who} {answer} {stored}, and the "
            f"producer sent {'it' if n == 1 else 'them'} again (offsets {shown}{more}){read}")


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    out = []
    for _, group in sorted(_gather(analysis.delivery.resends, names).items(), key=lambda kv: str(kv[0])):
        first = group["first"]
        pairs = [[a, b] for _, a, b in sorted(group["pairs"], key=lambda p: (p[0], -1 if p[1] is None else p[1]))]
        out.append(finding("duplicate_write", "warning", _summary(group, pairs), first[TS], group["end"],
                           group["evidence"], topic=group["topic"], partition=group["partition"],
                           client_id=first[CLIENT_ID], client=first[EV][1], error=first[ERROR],
                           records=len(pairs), offsets=pairs[:MAX_OFFSETS], read_twice=group["read_twice"],
                           resent_after_ms=ms(group["end"] - first[TS]),
                           resent_after_s=round((group["end"] - first[TS]) / NS, 3)))  # (deprecated)
    return out
