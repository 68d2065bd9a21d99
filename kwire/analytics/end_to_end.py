"""End-to-end latency and lag in time: the bounded, mergeable state (issue 47).

The observations of kwire.analytics.end_to_end_read are kept, three kinds:

- writes: a Produce partition answered without error, (ts, base offset, records, create_ms, partition)
  packed as five little-endian int64 (40 bytes) per (topic, producer) (kwire.analytics.end_to_end_rows): most
  Produce traffic is never fetched in the capture, so a write must cost next to nothing. Kept as tuples (about
  190 bytes each), 200,000 one-record writes cost `kwire stats -j 0` 8 % more CPU than not keeping them; packed,
  about 1 % (small10, alternating runs, 2026-12-03). `write_items()` unpacks them when the document is made;
- reads: an answer that delivered records to a consumer (kind "fetch": a Fetch, consumer its client id;
  "share": a ShareFetch's acquired records, consumer the share group), (ts, partition, fetch offset, first,
  last, batches, redelivered, correlation id, leg) packed as nine int64 (72 bytes) per (kind, consumer,
  topic); as tuples they
  cost about 200 bytes each: 2 million deliveries held 213 MiB at the peak of the state alone (tracemalloc),
  the reads' tuples and a trim of the writes that unpacked them all. `read_rows()` unpacks them;
- commits: an offset a group committed, accepted by its answer (OffsetCommit, TxnOffsetCommit; observed in
  kwire.analytics.observe_groups), as it came: (tag, ts, group, topic, partition, offset), ts the answer's
  capture time (commits are few beside deliveries: tuples);
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
kept, an amortised trim every CAP entries. At most, between trims: 2 x WRITES_CAP x 40 bytes of writes
(20 MiB), 2 x READS_CAP x 72 bytes of reads (36 MiB), 2 x IDLE_CAP idle entries (about 300 bytes each:
38 MiB), 2 x COMMITS_CAP commits (about 150 bytes each: 19 MiB); a trim adds a list of the times (about 36 bytes a row: 18 MiB).
"""

from __future__ import annotations

import struct

from kwire.analytics import tags as T
from kwire.analytics.end_to_end_rows import PackedRows

WRITES_CAP = 1 << 18   # Produce partitions remembered
READS_CAP = 1 << 18    # answers (and partitions) that delivered records
IDLE_CAP = 1 << 16     # (consumer, partition, fetch offset) answered with nothing
COMMITS_CAP = 1 << 16  # offsets committed (a group committing every second for a day on 1 partition: 86,400)

_COMMIT = T.E2E_COMMIT

_PACK_WRITE = struct.Struct("<5q").pack  # ts, base offset, records, create_ms, partition
_PACK_READ = struct.Struct("<9q").pack  # ts, partition, fetch offset, first, last, batches, redelivered, corr, leg


def _trim(kept: list, cap: int):
    """Sorts `kept`, keeps its `cap` smallest; returns the largest kept once full (else None)."""
    kept.sort()
    del kept[cap:]
    return kept[-1] if len(kept) >= cap else None


class EndToEndState:
    __slots__ = ("writes", "reads", "last_key", "last_kept", "last_read_key", "last_read", "idle", "writes_seen",
                 "reads_seen", "idle_limit", "idle_folded", "commits", "commits_seen", "commit_limit")

    def __init__(self) -> None:
        self.writes = PackedRows(5)  # (topic, producer) -> its writes
        self.reads = PackedRows(9)  # (kind, consumer, topic) -> its deliveries
        self.last_key: tuple = ()  # the (topic, producer) of the last write, and its bytearray
        self.last_kept = None
        self.last_read_key: tuple = ()  # the (kind, consumer, topic) of the last read, and its bytearray
        self.last_read = None
        self.idle: dict[tuple, list] = {}
        self.writes_seen = 0
        self.reads_seen = 0
        self.idle_limit = None  # the largest idle key kept, once IDLE_CAP are
        self.idle_folded = False  # whether a key was refused (more than IDLE_CAP keys in the traffic)
        self.commits: list[tuple] = []
        self.commits_seen = 0
        self.commit_limit = None  # the largest commit kept, once COMMITS_CAP are

    @property
    def write_count(self) -> int:
        return self.writes.count

    def add(self, ob: tuple) -> None:
        if ob[0] == T.E2E_WRITE:
            self.add_write(ob)
        else:
            self.add_read(ob)

    def add_write(self, ob: tuple) -> None:
        """ob: (tag, topic, producer, ts, base offset, records, create_ms, partition); packed (module docstring)."""
        self.writes_seen += 1
        writes = self.writes
        if writes.limit is not None and ob[3] > writes.limit:
            return
        try:
            row = _PACK_WRITE(ob[3], ob[4], ob[5], ob[6], ob[7])
        except struct.error:  # a value past 64 bits: no wire field holds one; left out, counted as seen
            return
        kept = self.last_kept  # most writes go where the one before went: no key made, no look-up
        if kept is None or ob[1] != self.last_key[0] or ob[2] != self.last_key[1]:
            key = (ob[1], ob[2])
            kept = writes.packed.get(key)
            if kept is None:
                kept = writes.packed[key] = bytearray()
            self.last_key, self.last_kept = key, kept
        kept += row
        writes.count += 1
        if writes.count >= 2 * WRITES_CAP:
            self._trim_writes()

    def _trim_writes(self) -> None:
        self.writes.trim(WRITES_CAP)
        self.last_key, self.last_kept = (), None

    def write_items(self, topics: set | None = None, names: dict | None = None):
        """(topic, producer, (ts, base offset, records, create_ms, partition)) of each write kept, unpacked one at a
        time; with `topics`, only those whose name (`names`: a topic id's name) is in it (the rest stay packed)."""
        def named(key) -> bool:
            return (names.get(key[0], key[0]) if names else key[0]) in topics

        for (topic, producer), values in self.writes.rows(None if topics is None else named):
            yield topic, producer, values

    def add_read(self, ob: tuple) -> None:
        """An E2E_READ observation, (tag, ts, kind, consumer, topic, partition, fetch offset, first, last, batches,
        redelivered, correlation id, leg), or an E2E_COMMIT (the same feed: kwire.analytics.analysis hands both here)."""
        if ob[0] == _COMMIT:
            self.add_commit(ob)
            return
        if ob[9] == 0:  # delivered nothing: where the consumer stands
            self._add_idle(ob)
            return
        self.reads_seen += 1
        reads = self.reads
        if reads.limit is not None and ob[1] > reads.limit:
            return
        try:
            row = _PACK_READ(ob[1], ob[5], ob[6], ob[7], ob[8], ob[9], 1 if ob[10] else 0, ob[11], ob[12])
        except struct.error:  # not an int64 where one belongs: left out, counted as seen
            return
        kept = self.last_read
        if kept is None or ob[2:5] != self.last_read_key:
            key = ob[2:5]
            kept = reads.packed.get(key)
            if kept is None:
                kept = reads.packed[key] = bytearray()
            self.last_read_key, self.last_read = key, kept
        kept += row
        reads.count += 1
        if reads.count >= 2 * READS_CAP:
            self._trim_reads()

    def _trim_reads(self) -> None:
        self.reads.trim(READS_CAP)
        self.last_read_key, self.last_read = (), None

    def read_rows(self):
        """(kind, consumer, topic, (ts, partition, fetch offset, first, last, batches, redelivered, correlation id,
        leg)) of the reads kept."""
        for key, values in self.reads.rows():
            yield key + (values,)

    def add_commit(self, ob: tuple) -> None:
        """ob: (tag, ts, group, topic, partition, offset)."""
        self.commits_seen += 1
        if self.commit_limit is not None and ob >= self.commit_limit:
            return
        commits = self.commits
        commits.append(ob)
        if len(commits) >= 2 * COMMITS_CAP:
            self.commit_limit = _trim(commits, COMMITS_CAP)

    def _add_idle(self, ob: tuple) -> None:
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
        self.writes.merge(other.writes, WRITES_CAP)
        self.reads.merge(other.reads, READS_CAP)
        self.last_key, self.last_kept = (), None
        self.last_read_key, self.last_read = (), None
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

    def settled(self) -> tuple[dict, list]:
        """(idle, commits): the writes and reads trimmed to their caps, the idle entries as kept, the commits
        sorted and trimmed: what the document is made of (with write_items() of the topics read or committed, and
        read_rows())."""
        self._trim_writes()
        self._trim_reads()
        self._trim_idle()
        self.commit_limit = _trim(self.commits, COMMITS_CAP)
        return self.idle, self.commits

    def document(self, names: dict) -> dict:
        from kwire.analytics.end_to_end_doc import document

        return document(self, names)
