"""The group and finding analysis the Aggregator carries: one mergeable state, two documents.

`Analysis.add(row, observations)` takes an exchange's row (kwire.native.exchange_facts) and its
observations (kwire.analytics.observe) and routes them, by kwire.analytics.tags.FEEDS, to the six states:
kwire.analytics.groups (groups), kwire.analytics.traffic (connections, errors, latency over time),
kwire.analytics.delivery (batches, transactions, share deliveries), kwire.analytics.changes (who
changed what), kwire.analytics.quorum (the KRaft controllers), kwire.analytics.end_to_end (offsets
written and their deliveries) and kwire.analytics.rules_state (the protocol's rules, kwire.analytics.rules).
`merge` merges all seven exactly; `groups_document(names)` and `findings(names, first_ns, last_ns)` are computed from the
merged state when the stats document is made, so `kwire stats`, `kwire stats --jobs` and
`kwire spark` give the same groups and findings.
"""

from __future__ import annotations

from kwire.analytics.changes import ChangesState
from kwire.analytics.delivery import DeliveryState
from kwire.analytics.end_to_end import EndToEndState
from kwire.analytics.groups import GroupsState
from kwire.analytics.quorum import QuorumState
from kwire.analytics.rules_state import RulesState
from kwire.analytics.tags import (ACKS0, CHANGES, DELIVERY, E2E_WRITE, END_TO_END, FEEDS as _FEEDS, GROUPS, PRODUCE_BATCH,
                                  QUORUM, TRAFFIC, feed_of)
from kwire.analytics.traffic import TrafficState
from kwire.fields import reduce_by_fields, set_fields



class Analysis:
    __slots__ = ("groups", "traffic", "delivery", "changes", "quorum", "end_to_end", "rules")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.groups = GroupsState()
        self.traffic = TrafficState()
        self.delivery = DeliveryState()
        self.changes = ChangesState()
        self.quorum = QuorumState()
        self.end_to_end = EndToEndState()  # end-to-end latency and lag in time (issue 47)
        self.rules = RulesState()

    def add(self, row, observations=()) -> None:
        """An exchange's row (kwire.native.exchange_row, or a dict of its names) and its observations."""
        acks0 = False
        for ob in observations:
            tag = ob[0]
            if tag == PRODUCE_BATCH:  # the most frequent (every batch of every Produce): to its state at once
                self.delivery.produce_batch(ob)
                continue
            if tag == E2E_WRITE:  # one per Produce partition written
                self.end_to_end.add_write(ob)
                continue
            feed = _FEEDS.get(tag) or feed_of(tag)  # feed_of raises on a tag no table names
            if feed == DELIVERY:
                self.delivery.add(ob)
            elif feed == TRAFFIC:
                self.traffic.add(ob, row)
            elif feed == GROUPS:
                self.groups.add(ob)
            elif feed == ACKS0:
                acks0 = True
            elif feed == CHANGES:
                self.changes.add(ob)
            elif feed == END_TO_END:
                self.end_to_end.add_read(ob)
            elif feed == QUORUM:
                self.quorum.add(ob)
            else:
                self.rules.add(ob, row)
        self.traffic.add_row(row, acks0)

    @property
    def watch(self):
        """What observations(ex, watch) asks which Produce batches to read for resends."""
        return self.delivery.resends

    def merge(self, other: Analysis) -> None:
        self.groups.merge(other.groups)
        self.traffic.merge(other.traffic)
        self.delivery.merge(other.delivery)
        self.changes.merge(other.changes)
        self.quorum.merge(other.quorum)
        self.end_to_end.merge(other.end_to_end)
        self.rules.merge(other.rules)

    def groups_document(self, names: dict[str, str]) -> dict:
        return self.groups.document(names)

    def findings(self, names: dict[str, str], first_ns: int | None, last_ns: int | None) -> list[dict]:
        from kwire.analytics.findings import findings

        return findings(self, names, first_ns, last_ns)

    def findings_and_total(self, names: dict[str, str], first_ns: int | None,
                           last_ns: int | None) -> tuple[list[dict], int]:
        from kwire.analytics.findings import findings_and_total

        return findings_and_total(self, names, first_ns, last_ns)
