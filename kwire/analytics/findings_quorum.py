"""Findings on the KRaft quorum (kwire.analytics.quorum): the controllers' leader changed, a broker was
fenced, a broker's metadata fell behind.

- quorum_leader_change {leader_id, epoch, previous_leader_id, previous_epoch, count} (warning): a new
  (leader, epoch) after an earlier one; the first leader seen is not a change.
- broker_fenced {broker_id, fenced_ms, requested, count} (warning; info when the broker asked for it with
  WantFence or WantShutDown): a broker answered IsFenced after being unfenced; `fenced_ms` how long
  until it was unfenced again (None: not in the capture).

Each of those two lists MAX_EACH findings one by one (of the leader changes; of each broker's
fencings), `count` 1; past them one more finding stands for all the rest, `count` of them, from the
first to the last (its keys the last one's; a leader change's `previous_*` the first one's before).
- metadata_behind {broker_id, max_offsets, behind_ms} (warning): a broker's heartbeats reported a
  metadata offset below what another broker had reported BEHIND_S earlier (kwire.analytics.quorum).
"""

from __future__ import annotations

from kwire.analytics.figures import ms
from kwire.analytics.findings import finding
from kwire.counts import count
from kwire.native.mergeable import NS
from kwire.analytics.quorum import BEHIND_S, Replay, epoch_s

MAX_EACH = 20


def _leaders(replay: Replay) -> list[dict]:
    pairs = list(zip(replay.leaders, replay.leader_evidence))
    changes = [(before, after, ev) for (before, _), (after, ev) in zip(pairs, pairs[1:])
               if not (after["leader_id"] == before["leader_id"] and after["epoch"] <= before["epoch"])]
    out = []
    for before, after, ev in changes[:MAX_EACH]:
        summary = (f"controller leader changed from {before['leader_id']} (epoch {before['epoch']}) to "
                   f"{after['leader_id']} (epoch {after['epoch']}), seen in {after['api']}")
        out.append(finding("quorum_leader_change", "warning", summary, after["ts_ns"], after["ts_ns"], [ev],
                           leader_id=after["leader_id"], epoch=after["epoch"],
                           previous_leader_id=before["leader_id"], previous_epoch=before["epoch"], count=1))
    rest = changes[MAX_EACH:]
    if rest:
        (first, _, ev), (_, last, _) = rest[0], rest[-1]
        summary = (f"controller leader changed {len(rest):,} more times (past the first {MAX_EACH} listed), from "
                   f"{first['leader_id']} (epoch {first['epoch']}) to {last['leader_id']} (epoch {last['epoch']})")
        out.append(finding("quorum_leader_change", "warning", summary, rest[0][1]["ts_ns"], last["ts_ns"],
                           [c[2] for c in rest], leader_id=last["leader_id"], epoch=last["epoch"],
                           previous_leader_id=first["leader_id"], previous_epoch=first["epoch"], count=len(rest)))
    return out


def _end(span: dict) -> int:
    return span["end_ts_ns"] if span["end_ts_ns"] is not None else span["start_ts_ns"]


def _lasted_s(span: dict) -> float | None:
    """How long a fencing lasted in seconds, as its summary (and the deprecated `fenced_s`) have always said it: the
    difference of its ends in epoch seconds (kwire.analytics.quorum's 9 decimals), to the µs."""
    if span["end_ts_ns"] is None:
        return None
    return round(epoch_s(span["end_ts_ns"]) - epoch_s(span["start_ts_ns"]), 6)


def _fenced_ms(span: dict) -> float | None:
    return None if span["end_ts_ns"] is None else ms(span["end_ts_ns"] - span["start_ts_ns"])


def _fenced(replay: Replay) -> list[dict]:
    out = []
    for broker_id, broker in sorted(replay.brokers.items(), key=lambda kv: str(kv[0])):
        spans = list(zip(broker.fenced, broker.evidence))
        for span, evidence in spans[:MAX_EACH]:
            lasted = _lasted_s(span)
            how = "until the capture's end" if lasted is None else f"for {lasted:g} s"
            asked = " at its own request" if span["requested"] else ""
            summary = f"broker {broker_id} was fenced by the controller{asked}, {how}"
            out.append(finding("broker_fenced", "info" if span["requested"] else "warning", summary,
                               span["start_ts_ns"], _end(span), evidence, broker_id=broker_id,
                               fenced_ms=_fenced_ms(span), requested=span["requested"], count=1,
                               fenced_s=lasted))  # (deprecated)
        if len(spans) > MAX_EACH:
            out.append(_more_fenced(broker_id, spans[MAX_EACH:]))
    return out


def _more_fenced(broker_id, spans: list) -> dict:
    """One finding for a broker's fencings past the first MAX_EACH."""
    asked = all(span["requested"] for span, _ in spans)
    (first, _), (last, _) = spans[0], spans[-1]
    summary = (f"broker {broker_id} was fenced by the controller {count(len(spans), 'more time')} (past the first "
               f"{MAX_EACH} listed)")
    lasted = _lasted_s(last)
    return finding("broker_fenced", "info" if asked else "warning", summary, first["start_ts_ns"], _end(last),
                   [e for _, ev in spans for e in ev], broker_id=broker_id, fenced_ms=_fenced_ms(last),
                   requested=asked, count=len(spans), fenced_s=lasted)  # (deprecated)


def _behind(replay: Replay) -> list[dict]:
    out = []
    for broker_id, broker in sorted(replay.brokers.items(), key=lambda kv: str(kv[0])):
        if broker.behind is None:
            continue
        start, end, shortfall, ev = broker.behind
        lasted = round((end - start) / NS, 6)
        summary = (f"broker {broker_id}'s metadata fell behind: up to {count(shortfall, 'offset')} below what other "
                   f"brokers had {BEHIND_S} s earlier, for {lasted:g} s")
        out.append(finding("metadata_behind", "warning", summary, start, end, [ev], broker_id=broker_id,
                           max_offsets=shortfall, behind_ms=ms(end - start), behind_s=lasted))  # (deprecated)
    return out


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    if not analysis.quorum.count:
        return []
    replay = Replay(analysis.quorum.events())
    return _leaders(replay) + _fenced(replay) + _behind(replay)
