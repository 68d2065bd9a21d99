"""End-to-end latency and lag in time: the bounded, mergeable state (issue 47).

The observations of kwire.analytics.end_to_end_read are kept, three kinds:

- writes: a Produce partition answered without error, (ts, base offset, records, create_ms, partition)
  packed as five little-endian int64 (40 bytes) onto a bytearray per (topic, producer): most Produce traffic
  is never fetched in the capture, so a write must cost next to nothing. Kept as tuples (about 190 bytes
  each), 200,000 one-record writes cost `kwire stats -j 0` 8 % more CPU than not keeping them; packed, about 1 %
  (small10, alternating runs, 2026-12-03). `write_rows()` unpacks them when the document is made;
- reads: the observation as it came (its tag first): (ts, kind, consumer, topic, partition, fetch offset, first, last, batches, redelivered), an
  answer that delivered records to a consumer (kind "fetch": a Fetch, consumer its client id;
  "share": a ShareFetch's acquired records, consumer the share group);
- commits: an offset a group committed, accepted by its answer (OffsetCommit, TxnOffsetCommit; observed in
  kwire.analytics.observe_groups), as it came: (tag, ts, group, topic, partition, offset), ts the answer's
  capture time;
- idle: an answer that delivered nothing, kept as one entry per (kind, consumer, topic, partition,
  fetch offset): the first and the last time it was seen (a consumer polling an empty or stalled
  partition a thousand times is one entry; its lag in time is largest at the last).

Nothing is matched while the traffic is read: kwire.analytics.end_to_end_doc matches writes and
deliveries when the document is made, so any split of the traffic (`kwire stats --jobs`, Spark),
merged in any order, gives what one state fed everything gives.

Bounded: each kind keeps its CAP smallest entries (writes, reads and commits by time first, so the earliest;
idle by key) and counts the rest as folded; the document says how many. Which entries are kept is a
total order on the entries, never the order they came in, so folding too is the same on any split.
Adding an entry once a kind is full costs one comparison (with the latest kept) or, for an entry
kept, an amortised trim every CAP entries.
"""

from __future__ import annotations

import struct
from bisect import bisect_left

from kwire.analytics import tags as T

WRITES_CAP = 1 << 18   # Produce partitions remembered (40 bytes each packed: 10 MB, 20 MB between trims; a trim unpacks them)
READS_CAP = 1 << 18    # answers that delivered records
IDLE_CAP = 1 << 16     # (consumer, partition, fetch offset) answered with nothing
COMMITS_CAP = 1 << 16  # offsets committed (a group committing every second for a day on 1 partition: 86,400)


_COMMIT = T.E2E_COMMIT
_WRITE = struct.Struct("<5q")  # ts, base offset, records, create_ms, partition
_PACK = _WRITE.pack


def _trim(kept: list, cap: int):
    """Sorts `kept`, keeps its `cap` smallest; returns the largest kept once full (else None)."""
    kept.sort()
    del kept[cap:]
    return kept[-1] if len(kept) >= cap else None


class EndToEndState:
    __slots__ = ("packed", "last_key", "last_kept", "write_count", "reads", "idle", "writes_seen", "reads_seen", "write_limit",
                 "read_limit", "idle_limit", "idle_folded", "commits", "commits_seen", "commit_limit")

    def __init__(self) -> None:
        self.packed: dict[tuple, bytearray] = {}  # (topic, producer) -> its writes, _WRITE each
        self.last_key: tuple = ()  # the (topic, producer) of the last write, and its bytearray
        self.last_kept = None
        self.write_count = 0  # writes kept
        self.reads: list[tuple] = []
        self.idle: dict[tuple, list] = {}
        self.writes_seen = 0
        self.reads_seen = 0
        self.write_limit = None  # once WRITES_CAP writes are kept: the latest time kept, nothing later is
        self.read_limit = None  # the largest read kept, once READS_CAP are
        self.idle_limit = None  # the largest idle key kept, once IDLE_CAP are
        self.idle_folded = False  # whether a key was refused (more than IDLE_CAP keys in the traffic)
        self.commits: list[tuple] = []
        self.commits_seen = 0
        self.commit_limit = None  # the largest commit kept, once COMMITS_CAP are

    def add(self, ob: tuple) -> None:
        if ob[0] == T.E2E_WRITE:
            self.add_write(ob)
        else:
            self.add_read(ob)

    def add_write(self, ob: tuple) -> None:
        """ob: (tag, topic, producer, ts, base offset, records, create_ms, partition); packed (module docstring)."""
        self.writes_seen += 1
        if self.write_limit is not None and ob[3] > self.write_limit:
            return
        try:
            row = _PACK(ob[3], ob[4], ob[5], ob[6], ob[7])
        except struct.error:  # a value past 64 bits: no wire field holds one; left out, counted as seen
            return
        kept = self.last_kept  # most writes go where the one before went: no key made, no look-up
        if kept is None or ob[1] != self.last_key[0] or ob[2] != self.last_key[1]:
            key = (ob[1], ob[2])
            kept = self.packed.get(key)
            if kept is None:
                kept = self.packed[key] = bytearray()
            self.last_key, self.last_kept = key, kept
        kept += row
        self.write_count += 1
        if self.write_count >= 2 * WRITES_CAP:
            self._trim_writes()

    def write_rows(self, topics: set | None = None, names: dict | None = None) -> dict[str, list]:
        """The writes kept: {topic: [(ts, base offset, records, create_ms, partition, producer)]}; with `topics`,
        only those whose name (`names`: a topic id's name) is in it (the rest stay packed)."""
        out: dict[str, list] = {}
        for (topic, producer), kept in self.packed.items():
            if topics is not None and (names.get(topic, topic) if names else topic) not in topics:
                continue
            rows = out.get(topic)
            if rows is None:
                rows = out[topic] = []
            rows.extend(values + (producer,) for values in _WRITE.iter_unpack(kept))
        return out

    def _store(self, rows: dict) -> None:
        """Packs {topic: [(ts, base, records, create_ms, partition, producer)]} back (write_rows' inverse)."""
        packed: dict[tuple, bytearray] = {}
        count = 0
        for topic, values in rows.items():
            for v in values:
                key = (topic, v[5])
                kept = packed.get(key)
                if kept is None:
                    kept = packed[key] = bytearray()
                kept += _PACK(v[0], v[1], v[2], v[3], v[4])
                count += 1
        self.packed = packed
        self.last_key, self.last_kept = (), None
        self.write_count = count

    def _trim_writes(self) -> None:
        """Keeps the WRITES_CAP smallest writes by (ts, topic, base, records, create_ms, partition,
        producer): a total order, so the same on any split of the traffic."""
        if self.write_count <= WRITES_CAP:
            return
        writes = self.write_rows()
        times = sorted(v[0] for kept in writes.values() for v in kept)
        limit = times[WRITES_CAP - 1]
        room = WRITES_CAP - bisect_left(times, limit)  # writes at exactly `limit` that stay
        ties = sorted((key, v) for key, kept in writes.items() for v in kept if v[0] == limit)[:room]
        stay: dict = {}
        for tie in ties:
            stay[tie] = stay.get(tie, 0) + 1
        for key in list(writes):
            out = []
            for v in writes[key]:
                if v[0] < limit:
                    out.append(v)
                elif v[0] == limit and stay.get((key, v)):
                    stay[(key, v)] -= 1
                    out.append(v)
            writes[key] = out
        self._store(writes)
        self.write_limit = limit

    def add_read(self, ob: tuple) -> None:
        """An E2E_READ observation, or an E2E_COMMIT (the same feed: kwire.analytics.analysis hands both here)."""
        if ob[0] == _COMMIT:
            self.add_commit(ob)
            return
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
        if self.read_limit is not None and ob >= self.read_limit:
            return
        reads = self.reads
        reads.append(ob)
        if len(reads) >= 2 * READS_CAP:
            self.read_limit = _trim(reads, READS_CAP)

    def add_commit(self, ob: tuple) -> None:
        """ob: (tag, ts, group, topic, partition, offset)."""
        self.commits_seen += 1
        if self.commit_limit is not None and ob >= self.commit_limit:
            return
        commits = self.commits
        commits.append(ob)
        if len(commits) >= 2 * COMMITS_CAP:
            self.commit_limit = _trim(commits, COMMITS_CAP)

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
        for key, theirs in other.packed.items():
            mine = self.packed.get(key)
            if mine is None:
                self.packed[key] = bytearray(theirs)
            else:
                mine += theirs
        self.write_count += other.write_count
        limits = [x for x in (self.write_limit, other.write_limit) if x is not None]
        self.write_limit = min(limits) if limits else None  # nothing later than a part's limit can be kept
        if self.write_limit is not None:
            self._drop_after(self.write_limit)
        self._trim_writes()
        self.reads.extend(other.reads)
        self.read_limit = _trim(self.reads, READS_CAP)
        self.idle_folded = self.idle_folded or other.idle_folded
        for key, (first, last) in other.idle.items():
            have = self.idle.get(key)
            if have is None:
                self.idle[key] = [first, last]
            else:
                have[0], have[1] = min(have[0], first), max(have[1], last)
        self._trim_idle()
        self.commits_seen += other.commits_seen
        self.commits.extend(other.commits)
        self.commit_limit = _trim(self.commits, COMMITS_CAP)

    def _drop_after(self, limit: int) -> None:
        writes = self.write_rows()
        self._store({topic: [v for v in kept if v[0] <= limit] for topic, kept in writes.items()})

    def settled(self) -> tuple[list, dict, list]:
        """(reads, idle, commits) as kept, the reads and commits sorted, the writes trimmed: what the document
        is made of (with write_rows() of the topics read or committed)."""
        self._trim_writes()
        self.read_limit = _trim(self.reads, READS_CAP)
        self._trim_idle()
        self.commit_limit = _trim(self.commits, COMMITS_CAP)
        return self.reads, self.idle, self.commits

    def document(self, names: dict) -> dict:
        from kwire.analytics.end_to_end_doc import document

        return document(self, names)
