"""Findings on the KRaft quorum (kwire.analytics.quorum): the controllers' leader changed, a broker was
fenced, a broker's metadata fell behind.

- quorum_leader_change {leader_id, epoch, previous_leader_id, previous_epoch} (warning): a new
  (leader, epoch) after an earlier one; the first leader seen is not a change.
- broker_fenced {broker_id, fenced_s, requested} (warning; info when the broker asked for it with
  WantFence or WantShutDown): a broker answered IsFenced after being unfenced; `fenced_s` how long
  until it was unfenced again (None: not in the capture).
- metadata_behind {broker_id, max_offsets, behind_s} (warning): a broker's heartbeats reported a
  metadata offset below what another broker had reported BEHIND_S earlier (kwire.analytics.quorum).
"""

from __future__ import annotations

from kwire.analytics.findings import finding
from kwire.analytics.mergeable import NS
from kwire.analytics.quorum import BEHIND_S, Replay

MAX_EACH = 20


def _ns(seconds):
    return None if seconds is None else int(round(seconds * NS))


def _leaders(replay: Replay) -> list[dict]:
    out = []
    pairs = list(zip(replay.leaders, replay.leader_evidence))
    for (before, _), (after, ev) in list(zip(pairs, pairs[1:]))[:MAX_EACH]:
        if after["leader_id"] == before["leader_id"] and after["epoch"] <= before["epoch"]:
            continue
        summary = (f"controller leader changed from {before['leader_id']} (epoch {before['epoch']}) to "
                   f"{after['leader_id']} (epoch {after['epoch']}), seen in {after['api']}")
        out.append(finding("quorum_leader_change", "warning", summary, _ns(after["ts"]), _ns(after["ts"]), [ev],
                           leader_id=after["leader_id"], epoch=after["epoch"],
                           previous_leader_id=before["leader_id"], previous_epoch=before["epoch"]))
    return out


def _fenced(replay: Replay) -> list[dict]:
    out = []
    for broker_id, broker in sorted(replay.brokers.items(), key=lambda kv: str(kv[0])):
        for span, evidence in list(zip(broker.fenced, broker.evidence))[:MAX_EACH]:
            lasted = None if span["end"] is None else round(span["end"] - span["start"], 6)
            how = "until the capture's end" if lasted is None else f"for {lasted:g} s"
            asked = " at its own request" if span["requested"] else ""
            summary = f"broker {broker_id} was fenced by the controller{asked}, {how}"
            out.append(finding("broker_fenced", "info" if span["requested"] else "warning", summary,
                               _ns(span["start"]), _ns(span["end"] or span["start"]), evidence,
                               broker_id=broker_id, fenced_s=lasted, requested=span["requested"]))
    return out


def _behind(replay: Replay) -> list[dict]:
    out = []
    for broker_id, broker in sorted(replay.brokers.items(), key=lambda kv: str(kv[0])):
        if broker.behind is None:
            continue
        start, end, shortfall, ev = broker.behind
        lasted = round((end - start) / NS, 6)
        summary = (f"broker {broker_id}'s metadata fell behind: up to {shortfall} offsets below what other brokers "
                   f"had {BEHIND_S} s earlier, for {lasted:g} s")
        out.append(finding("metadata_behind", "warning", summary, start, end, [ev], broker_id=broker_id,
                           max_offsets=shortfall, behind_s=lasted))
    return out


def find(analysis, names: dict, first_ns, last_ns) -> list[dict]:
    if not analysis.quorum.count:
        return []
    replay = Replay(analysis.quorum.events())
    return _leaders(replay) + _fenced(replay) + _behind(replay)
