"""End-to-end latency and lag in time: the bounded, mergeable state (issue 47).

The observations of kwire.analytics.end_to_end_read are kept as they come, three kinds:

- writes: (ts, topic, partition, base offset, records, create_ms, producer), a Produce partition
  answered without error;
- reads: (ts, kind, consumer, topic, partition, fetch offset, first, last, batches, redelivered), an
  answer that delivered records to a consumer (kind "fetch": a Fetch, consumer its client id;
  "share": a ShareFetch's acquired records, consumer the share group);
- idle: an answer that delivered nothing, kept as one entry per (kind, consumer, topic, partition,
  fetch offset): the first and the last time it was seen (a consumer polling an empty or stalled
  partition a thousand times is one entry; its lag in time is largest at the last).

Nothing is matched while the traffic is read: kwire.analytics.end_to_end_doc matches writes and
deliveries when the document is made, so any split of the traffic (`kwire stats --jobs`, Spark),
merged in any order, gives what one state fed everything gives.

Bounded: each kind keeps its CAP smallest entries (writes and reads by time first, so the earliest;
idle by key) and counts the rest as folded; the document says how many. Which entries are kept is a
total order on the entries, never the order they came in, so folding too is the same on any split.
Adding an entry once a kind is full costs one comparison (with the largest kept) or, for an entry
kept, an amortised sort of the list every CAP entries.
"""

from __future__ import annotations

from kwire.analytics import tags as T
from kwire.fields import reduce_by_fields, set_fields

WRITES_CAP = 1 << 18   # Produce partitions remembered (about 60 MB at most)
READS_CAP = 1 << 18    # answers that delivered records
IDLE_CAP = 1 << 16     # (consumer, partition, fetch offset) answered with nothing


def _trim(kept: list, cap: int):
    """Sorts `kept`, keeps its `cap` smallest; returns the largest kept once full (else None)."""
    kept.sort()
    del kept[cap:]
    return kept[-1] if len(kept) >= cap else None


class EndToEndState:
    __slots__ = ("writes", "reads", "idle", "writes_seen", "reads_seen", "write_limit", "read_limit",
                 "idle_limit", "idle_folded")
    __reduce__ = reduce_by_fields  # the same state compiled or not (kwire.fields)
    __setstate__ = set_fields

    def __init__(self) -> None:
        self.writes: list[tuple] = []
        self.reads: list[tuple] = []
        self.idle: dict[tuple, list] = {}
        self.writes_seen = 0
        self.reads_seen = 0
        self.write_limit = None  # the largest write kept, once WRITES_CAP are: nothing above it is kept
        self.read_limit = None
        self.idle_limit = None  # the largest idle key kept, once IDLE_CAP are
        self.idle_folded = False  # whether a key was refused (more than IDLE_CAP keys in the traffic)

    def add(self, ob: tuple) -> None:
        if ob[0] == T.E2E_WRITE:
            self.add_write(ob)
        else:
            self.add_read(ob)

    def add_write(self, ob: tuple) -> None:
        self.writes_seen += 1
        item = ob[1:]
        if self.write_limit is not None and item >= self.write_limit:
            return
        writes = self.writes
        writes.append(item)
        if len(writes) >= 2 * WRITES_CAP:
            self.write_limit = _trim(writes, WRITES_CAP)

    def add_read(self, ob: tuple) -> None:
        if ob[9] == 0:  # delivered nothing: where the consumer stands
            key = ob[2:7]
            have = self.idle.get(key)
            if have is None:
                if self.idle_limit is not None and key > self.idle_limit:
                    self.idle_folded = True
                    return
                self.idle[key] = [ob[1], ob[1]]
                if len(self.idle) >= 2 * IDLE_CAP:
                    self._trim_idle()
            elif ob[1] < have[0]:
                have[0] = ob[1]
            elif ob[1] > have[1]:
                have[1] = ob[1]
            return
        self.reads_seen += 1
        item = ob[1:]
        if self.read_limit is not None and item >= self.read_limit:
            return
        reads = self.reads
        reads.append(item)
        if len(reads) >= 2 * READS_CAP:
            self.read_limit = _trim(reads, READS_CAP)

    def _trim_idle(self) -> None:
        idle = self.idle
        if len(idle) > IDLE_CAP:
            keys = sorted(idle)
            for key in keys[IDLE_CAP:]:
                del idle[key]
            self.idle_folded = True
            self.idle_limit = keys[IDLE_CAP - 1]

    def merge(self, other: EndToEndState) -> None:
        self.writes_seen += other.writes_seen
        self.reads_seen += other.reads_seen
        self.writes.extend(other.writes)
        self.reads.extend(other.reads)
        self.write_limit = _trim(self.writes, WRITES_CAP)
        self.read_limit = _trim(self.reads, READS_CAP)
        self.idle_folded = self.idle_folded or other.idle_folded
        for key, (first, last) in other.idle.items():
            have = self.idle.get(key)
            if have is None:
                self.idle[key] = [first, last]
            else:
                have[0], have[1] = min(have[0], first), max(have[1], last)
        self._trim_idle()

    def settled(self) -> tuple[list, list, dict]:
        """(writes, reads, idle) as kept, sorted: what the document is made of."""
        self.write_limit = _trim(self.writes, WRITES_CAP)
        self.read_limit = _trim(self.reads, READS_CAP)
        self._trim_idle()
        return self.writes, self.reads, self.idle

    def document(self, names: dict) -> dict:
        from kwire.analytics.end_to_end_doc import document

        return document(self, names)
