"""The KRaft quorum as the controllers' traffic shows it: leaders, elections, brokers and fencing.

`QuorumState` keeps the events of kwire.analytics.quorum_read (observations tagged "qr") as the first
MAX_EVENTS by time (`Kept`: exact under any split and merge; the rest counted in `overflow`), and
`document()` replays them in time order into the `quorum` key of the stats document (None when the
traffic holds no controller api):

    {events, overflow,
     leaders: [{ts_ns, leader_id, epoch, api}]                each (leader, epoch) when first seen
     elections: [{ts_ns, candidate, epoch, pre_vote, granted: [voter], refused: [voter], unanswered}]
     resignations: [{ts_ns, leader_id, epoch}]                each (leader, epoch) once
     brokers: {id: {registered_ts_ns: [ts], broker_epoch, unregistered_ts_ns: [ts],
                    fenced: [{start_ts_ns, end_ts_ns, requested}], heartbeats, metadata_offset,
                    behind: {start_ts_ns, end_ts_ns, max_offsets} | None}}}

(and, deprecated for one release, each instant in epoch seconds beside it: `ts`, `start`, `end`, `registered`,
`unregistered`: docs/vocabulary.md).

Definitions:
- a broker is fenced from the first heartbeat answered IsFenced after one answered not fenced (or from
  its registration) to the next answered not fenced (`end_ts_ns` None: still fenced at the capture's end);
  `requested` when the broker asked for it (WantFence or WantShutDown);
- a broker's metadata is behind when the offset it reports (CurrentMetadataOffset) is below the highest
  offset any broker reported BEHIND_S or more earlier: it has not caught up to what was there BEHIND_S
  ago; `behind` is the longest such run (`max_offsets`: the largest shortfall in it).
"""

from __future__ import annotations

from bisect import bisect_right

from kwire.native.exchange_facts import ns_to_s
from kwire.native.mergeable import NS, Kept

MAX_EVENTS = 20000
BEHIND_S = 10


def epoch_s(ns):
    """Epoch ns as the deprecated epoch seconds of the section (9 decimals: kwire.native.exchange_facts.ns_to_s)."""
    return None if ns is None else ns_to_s(ns)


class QuorumState:
    __slots__ = ("kept", "count")

    def __init__(self) -> None:
        self.kept = Kept(MAX_EVENTS)
        self.count = 0

    def add(self, ob: tuple) -> None:
        _, index, event = ob
        ev = event[-1]
        self.count += 1
        self.kept.add((event[1], ev[1] or "", ev[2] or "", ev[3], event[0], index), event)

    def merge(self, other: QuorumState) -> None:
        self.kept.merge(other.kept)
        self.count += other.count

    def events(self) -> list[tuple]:
        return self.kept.values()

    def document(self) -> dict | None:
        if not self.count:
            return None
        replay = Replay(self.events())
        return {"events": self.count, "overflow": self.count - len(self.kept.items), "leaders": replay.leaders,
                "elections": replay.elections(), "resignations": replay.resignations,
                "brokers": {str(b): v for b, v in sorted(replay.brokers_document().items(), key=lambda kv: str(kv[0]))}}


class Broker:
    __slots__ = ("registered", "epoch", "unregistered", "fenced", "heartbeats", "offset", "state", "evidence",
                 "behind")

    def __init__(self) -> None:
        self.registered: list = []
        self.epoch = None
        self.unregistered: list = []
        self.fenced: list[dict] = []
        self.heartbeats = 0
        self.offset = None
        self.state = None  # "fenced" / "unfenced" / None (not known yet)
        self.evidence: list = []  # evidence of each fencing, as self.fenced
        self.behind = None  # (start_ns, end_ns, max shortfall, evidence)


class Replay:
    """The events in time order, replayed once."""

    def __init__(self, events: list[tuple]) -> None:
        self.leaders: list[dict] = []
        self.leader_evidence: list[tuple] = []
        self.resignations: list[dict] = []
        self.votes: dict[tuple, dict] = {}
        self.brokers: dict = {}
        seen: set = set()
        beats = []
        for event in events:
            tag = event[0]
            if tag == "leader":
                _, ts, leader, epoch, api, ev = event
                if (leader, epoch) not in seen:
                    seen.add((leader, epoch))
                    self.leaders.append({"ts_ns": ts, "leader_id": leader, "epoch": epoch, "api": api,
                                         "ts": epoch_s(ts)})
                    self.leader_evidence.append(ev)
            elif tag == "resign":
                if ("resign", event[2], event[3]) not in seen:  # told to every voter: once
                    seen.add(("resign", event[2], event[3]))
                    self.resignations.append({"ts_ns": event[1], "leader_id": event[2], "epoch": event[3],
                                              "ts": epoch_s(event[1])})
            elif tag == "vote":
                self._vote(event)
            elif tag == "heartbeat":
                self._heartbeat(event)
                if type(event[4]) is int and event[4] >= 0:
                    beats.append(event)
            else:
                broker = self._broker(event[2])
                if tag == "register":
                    broker.registered.append(event[1])
                    if event[3] is not None:
                        broker.epoch = event[3]
                    broker.state = broker.state or "fenced"  # a broker registers fenced
                else:
                    broker.unregistered.append(event[1])
        self._behind(beats)

    def _broker(self, broker_id) -> Broker:
        broker = self.brokers.get(broker_id)
        if broker is None:
            broker = self.brokers[broker_id] = Broker()
        return broker

    def _vote(self, event: tuple) -> None:
        _, ts, candidate, epoch, voter, granted, pre_vote, ev = event
        election = self.votes.get((candidate, epoch, pre_vote))
        if election is None:
            election = self.votes[(candidate, epoch, pre_vote)] = {
                "ts_ns": ts, "candidate": candidate, "epoch": epoch, "pre_vote": pre_vote,
                "granted": [], "refused": [], "unanswered": [], "ts": epoch_s(ts)}
        key = "unanswered" if granted is None else "granted" if granted else "refused"
        if voter not in election[key]:
            election[key].append(voter)

    def elections(self) -> list[dict]:
        return list(self.votes.values())

    def _heartbeat(self, event: tuple) -> None:
        _, ts, broker_id, epoch, offset, fenced, wants, result, ev = event
        broker = self._broker(broker_id)
        broker.heartbeats += 1
        if type(epoch) is int and epoch >= 0:
            broker.epoch = epoch
        if type(offset) is int and offset >= 0:
            broker.offset = offset if broker.offset is None else max(broker.offset, offset)
        if fenced is None:
            return
        if fenced and broker.state == "unfenced":
            broker.fenced.append({"start_ts_ns": ts, "end_ts_ns": None, "requested": wants is not None,
                                  "start": epoch_s(ts), "end": None})
            broker.evidence.append([ev])
        elif not fenced and broker.state == "fenced" and broker.fenced and broker.fenced[-1]["end_ts_ns"] is None:
            broker.fenced[-1]["end_ts_ns"] = ts
            broker.fenced[-1]["end"] = epoch_s(ts)
            broker.evidence[-1].append(ev)
        broker.state = "fenced" if fenced else "unfenced"

    def _behind(self, beats: list[tuple]) -> None:
        times = [b[1] for b in beats]
        highest, top = [], -1
        for b in beats:
            top = max(top, b[4])
            highest.append(top)
        runs: dict = {}
        for b in beats:
            _, ts, broker_id, _, offset, _, _, _, ev = b
            i = bisect_right(times, ts - BEHIND_S * NS) - 1
            broker = self._broker(broker_id)
            if i >= 0 and offset < highest[i]:
                run = runs.get(broker_id)
                if run is None:
                    run = runs[broker_id] = [ts, ts, 0, ev]
                run[1], run[2] = ts, max(run[2], highest[i] - offset)
            elif broker_id in runs:
                self._end_run(broker, runs.pop(broker_id))
        for broker_id, run in runs.items():
            self._end_run(self._broker(broker_id), run)

    @staticmethod
    def _end_run(broker: Broker, run: list) -> None:
        if broker.behind is None or run[1] - run[0] > broker.behind[1] - broker.behind[0]:
            broker.behind = tuple(run)

    def brokers_document(self) -> dict:
        out = {}
        for broker_id, b in self.brokers.items():
            out[broker_id] = {"registered_ts_ns": b.registered, "broker_epoch": b.epoch,
                              "unregistered_ts_ns": b.unregistered, "fenced": b.fenced, "heartbeats": b.heartbeats,
                              "metadata_offset": b.offset,
                              "behind": None if b.behind is None else {
                                  "start_ts_ns": b.behind[0], "end_ts_ns": b.behind[1], "max_offsets": b.behind[2],
                                  "start": epoch_s(b.behind[0]), "end": epoch_s(b.behind[1])},
                              # deprecated: epoch s
                              "registered": [epoch_s(ts) for ts in b.registered],
                              "unregistered": [epoch_s(ts) for ts in b.unregistered]}
        return out
