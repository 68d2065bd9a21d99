"""Findings about records: transaction_stall, produce_retry, share_redelivery.

- transaction_stall {topic, partition, producer_id, transactional_id, producer_client_id,
  producer_client, stalled_ms, client_ids, last_stable_offset, high_watermark}: read_committed
  consumers fetched at the LastStableOffset while it stayed at one value below the HighWatermark for
  at least STALL_MIN_S: an open transaction held them. start: the first such fetch; end: the answer to
  the last one (the last time the consumers were told to wait; an unanswered one's request), so
  stalled_ms is what they waited (`stalled_s`, deprecated: the same in seconds).
  producer_id: the producer whose transactional batches (or AddPartitionsToTxn) for that partition
  came last before the stall began, when the capture has them, else null; transactional_id and
  producer_client_id / producer_client: who that producer id is, as the capture's requests say
  (kwire.analytics.delivery's producers), else null. client_ids: the consumers held.
- produce_retry {topic, partition, producer_id, transactional_id, producer_client_id, producer_client,
  attempts, batches, records, idempotent}: Produce batches sent more than once (same producer id, epoch
  and base sequence, or the same CRC; who the producer id is as for transaction_stall);
  attempts: the most sends of one batch (a send relayed, seen on both legs of a TLS terminator or a proxy, is one
  send: relayed_copies); records: records a producer that is not idempotent sent
  again in another batch after an error answer or none (kwire.analytics.findings_resends tells
  them by their contents; past kwire.analytics.resend_state.MAX_RECORDS records of failed sends,
  among a sample of them, which the summary says); idempotent: the batches carry a producer id and
  sequence, so the broker keeps one copy (a non-idempotent producer's retries may be written twice:
  duplicate_write).
- share_redelivery {group_id, topic, partition, redelivered: {offset: delivery_count}, archived,
  released, rejected, lock_expired}: records of a share group delivered more than once.
  released / rejected: acknowledgements of that type; lock_expired: deliveries that ended with no
  acknowledgement (the acquisition lock ran out); archived: records never accepted whose every
  delivery ended (rejected, or released or expired with no delivery after it).
"""

from __future__ import annotations

from kwire.analytics.delivery import Batch, ShareLog, Stall
from kwire.analytics.figures import ms
from kwire.analytics.findings import clients_named, finding
from kwire.analytics.findings_resends import resent
from kwire.analytics.relay import RELAY_WINDOW_NS
from kwire.counts import count

NS = 1_000_000_000
STALL_MIN_S = 2.0
MAX_REDELIVERED = 100


def by_name(table: dict, names: dict, at: int, make, drop: int | None = None) -> dict:
    """`table` re-keyed with the topic at position `at` of its keys named (a topic seen under its id
    on one connection and its name on another counts once), entries that meet merged into new ones
    (an entry no other meets is the table's own: readers only read); `drop`: a key position to leave
    out."""
    out: dict = {}
    made: set = set()  # named keys whose entry is a new one, merged from several
    get = names.get
    for key, value in table.items():
        named = list(key)
        named[at] = get(named[at], named[at])
        if drop is not None:
            del named[drop]
        named = tuple(named)
        have = out.get(named)
        if have is None:
            out[named] = value
            continue
        if named not in made:
            made.add(named)
            fresh = out[named] = make()
            fresh.merge(have)
            have = fresh
        have.merge(value)
    return out


def _stall_producer(delivery, topic, partition, start: int, names: dict) -> int | None:
    best = None
    for table in (delivery.txn_batches, delivery.txn_adds):
        for (t, p, pid), span in table.items():
            if (names.get(t, t), p) != (topic, partition) or span.first_ns is None or span.first_ns > start + NS:
                continue
            candidate = (span.first_ns, pid)
            if best is None or candidate > best:
                best = candidate
    return best[1] if best else None


def _who_text(who: dict) -> str:
    """" (transactional id T, client C at ADDRESS)": what the capture says of a producer id, or ""."""
    parts = [f"transactional id {who['transactional_id']}"] if who["transactional_id"] is not None else []
    if who["client_id"] is not None or who["client"] is not None:
        parts.append(f"client {who['client_id'] or '?'}" + (f" at {who['client']}" if who["client"] else ""))
    return f" ({', '.join(parts)})" if parts else ""


def _who_keys(who: dict) -> dict:
    return {"transactional_id": who["transactional_id"], "producer_client_id": who["client_id"],
            "producer_client": who["client"]}


def _stalls(delivery, names: dict) -> list[dict]:
    out = []
    stalls = by_name(delivery.stalls, names, 0, Stall)
    for (name, partition, lso), stall in sorted(stalls.items(), key=lambda kv: (str(kv[0][0]), kv[0][1:])):
        end = stall.last_ns if stall.answered_ns is None else max(stall.answered_ns, stall.last_ns)  # last "wait"
        held = (end - stall.first_ns) / NS
        if held < STALL_MIN_S:
            continue
        pid = _stall_producer(delivery, name, partition, stall.first_ns, names)
        ids = sorted(stall.client_ids, key=str)
        who = delivery.producer(pid)
        summary = (f"read_committed consumers ({clients_named(ids)}) of {name}[{partition}] were held at "
                   f"offset {lso} for {held:.1f} s behind an open transaction"
                   + (f" of producer id {pid}{_who_text(who)}" if pid is not None else "")
                   + f"; high watermark {stall.high_watermark}")
        out.append(finding("transaction_stall", "warning", summary, stall.first_ns, end,
                           stall.head.values()[:5] + stall.tail.values()[:5], topic=name, partition=partition,
                           producer_id=pid, **_who_keys(who), stalled_ms=ms(end - stall.first_ns), client_ids=ids,
                           last_stable_offset=lso, high_watermark=stall.high_watermark,
                           stalled_s=round(held, 3)))  # (deprecated)
    return out


def _record_resends(delivery, names: dict) -> dict[tuple, list]:
    """(topic, partition) -> [records, evidence] of records a producer that is not idempotent sent
    again in another batch after an error answer or none (kwire.analytics.findings_resends)."""
    out: dict[tuple, list] = {}
    for topic, partition, _, first, later in resent(delivery.resends, names):
        cell = out.setdefault((topic, partition), [0, [], 0])
        cell[0] += 1
        cell[1] += [first[-1]] + [s[-1] for s in later]
        cell[2] = max(cell[2], 1 + len(later))
    return out


def relayed_copies(evidence: list[tuple]) -> int:
    """How many of a batch's sends (its kept evidence: (ts, client, broker, correlation id, api), by time) are
    another send relayed, not sent again: a request with the correlation id and api of an earlier send, to another
    broker address, within RELAY_WINDOW_NS of it. That is one request seen on both legs of something that relays
    Kafka's bytes as they are (a TLS terminator such as stunnel, a TCP proxy, a port forward) when the capture holds
    both; a producer's own retry is a new request, with a correlation id of its own."""
    copies = 0
    for i, later in enumerate(evidence):
        for earlier in evidence[:i]:
            if (later[3] == earlier[3] and later[4] == earlier[4] and later[2] != earlier[2]
                    and 0 <= later[0] - earlier[0] <= RELAY_WINDOW_NS):
                copies += 1
                break
    return copies


def _own_sends(batch: Batch) -> int:
    """The batch's sends, relayed copies left out (read in its first MAX_SENDS sends, the ones kept)."""
    return batch.sends - relayed_copies(batch.evidence.values())


def _retries(delivery, names: dict) -> list[dict]:
    groups: dict[tuple, list] = {}
    for (topic, partition, key), batch in by_name(delivery.batches, names, 1, Batch, drop=0).items():
        if _own_sends(batch) >= 2:
            pid = key[1] if key[0] == "pid" else None
            groups.setdefault((topic, partition, pid), []).append(batch)
    records = _record_resends(delivery, names)
    state = delivery.resends
    sample = f", of a sample of {count(len(state.records), 'record')} of failed sends" if state.sampled else ""
    for topic, partition in records:
        groups.setdefault((topic, partition, None), [])
    out = []
    for (topic, partition, pid), batches in sorted(groups.items(), key=lambda kv: str(kv[0])):
        resent_records, record_evidence, record_sends = records.get((topic, partition), (0, [], 0)) \
            if pid is None else (0, [], 0)
        attempts = max([_own_sends(b) for b in batches] + [record_sends])
        evidence = [ev for b in batches for ev in b.evidence.values()] + record_evidence
        times = [ev[0] for ev in evidence]
        sent = [count(len(batches), "batch")] if batches else []
        sent += [f"{count(resent_records, 'record')} (in other batches{sample})"] if resent_records else []
        who = delivery.producer(pid)
        summary = (f"{' and '.join(sent)} for {topic}[{partition}] sent again"
                   + (f" by producer id {pid}{_who_text(who)}" if pid is not None else "") + f", up to {attempts} times each"
                   + ("; the producer is idempotent: the broker drops its duplicates" if pid is not None else ""))
        out.append(finding("produce_retry", "warning", summary, min(times), max(times), evidence, topic=topic,
                           partition=partition, producer_id=pid, **_who_keys(who), attempts=attempts,
                           batches=len(batches), records=resent_records, idempotent=pid is not None))
    return out


def _share(delivery, names: dict) -> list[dict]:
    out = []
    for (group, topic, partition), log in sorted(by_name(delivery.share, names, 1, ShareLog).items(),
                                                 key=lambda kv: str(kv[0])):
        redelivered = {o: c[1] for o, c in sorted(log.offsets.items()) if c[1] > 1}
        expired = sum(max(0, c[0] - (c[2] + c[3] + c[4])) for c in log.offsets.values())
        archived = sum(1 for c in log.offsets.values() if not c[2] and (c[4] or c[1] >= 2))
        released, rejected = log.acks.get("release", 0), log.acks.get("reject", 0)
        if not redelivered and not rejected and not expired:
            continue
        name = names.get(topic, topic)
        summary = (f"share group {group}: {count(len(redelivered), 'record')} of {name}[{partition}] delivered again "
                   f"(up to {count(max(redelivered.values(), default=1), 'time')}); {released:,} released, "
                   f"{rejected:,} rejected, {count(expired, 'lock expiry')}, {archived:,} archived")
        severity = "warning" if expired or archived else "info"
        shown = dict(list(redelivered.items())[:MAX_REDELIVERED])
        out.append(finding("share_redelivery", severity, summary, log.first_ns, log.last_ns, log.evidence.values(),
                           group_id=group, topic=name, partition=partition,
                           redelivered={str(o): c for o, c in shown.items()}, archived=archived,
                           released=released, rejected=rejected, lock_expired=expired))
    return out


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    delivery = analysis.delivery
    return _stalls(delivery, names) + _retries(delivery, names) + _share(delivery, names)
