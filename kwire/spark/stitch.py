"""The reduce side of `kwire spark`: the pieces of each connection, from every file, stitched (executors).

`stitch_partition(batches, options)` reads one shuffle partition (kwire.spark.wire, sorted): first
every file's FileReport, then the results the map tasks finished themselves (passed on), then each
flow key's pieces (metas, then events). `plan()` decides from the metas alone how the pieces of one
flow key make connections, as `kwire stats` over the whole capture would see them:

- a piece still open at its file's end, followed by a piece of the next file that starts mid-stream,
  is the same connection when TCP's state at the edge was clean and each direction the next piece
  starts begins exactly at the next sequence number the earlier one expected, or a little before it
  (a segment retransmitted across the edge: the bytes TCP already had are dropped, and counted as
  TCP counts old bytes), and it came back within the idle timeout: their events are played into one
  consumer, the earlier piece's tail (what ending its file made) left out;
- a piece that opens with a handshake, or follows a closed one, starts a new connection (a piece
  wholly within the linger time after a FIN or RST is ignored, as TCP ignores late segments);
- the last piece of a connection still open at its file's end is ended at the time the capture
  ends (or when a new SYN takes over its 4-tuple), its tail played at that time.

Anything else (holes open across an edge, sequence numbers that do not meet, late segments that go
on, files overlapping in time) makes the flow key "dirty": its segments are read again from the files
that hold them and reassembled from the packets (kwire.spark.reread), so the result is exact whatever
the capture looks like; only its cost changes. Each connection's exchanges come out of one Pipeline's
stream layers, exactly as in `kwire stats`, and become facts (kwire.spark.results).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from kwire.spark.mapside import IDLE_NS, LINGER_NS
from kwire.spark.pieces import MAX_SKIP, OPEN, Piece, Replayer
from kwire.spark.reread import Dirty, files_overlap, reread
from kwire.spark.results import DecodeOptions, Facts, PartitionResult, add_counts
from kwire.spark.spread import RawBatches
from kwire.spark.wire import DATA, RESULT, dumps, loads, out_batches
from kwire.native.tcp_outoforder import MASK, count_differences
from kwire.tcp.stream import Connection

DROP = "drop"  # a tail left out: the connection goes on in the next file
NO_SKIP = (0, 0)


@dataclass
class Chain:
    """One connection made of consecutive pieces."""

    first: Piece
    nxt: list                         # each direction's next sequence number (orientation of first.a)
    close: tuple = (0, "end")         # (ts, reason) it ends with
    pieces: list = field(default_factory=list)
    fins: list = field(default_factory=lambda: [False, False])  # each direction's FIN seen (chain's orientation)
    closer: int | None = None         # the direction whose FIN or RST came first (chain's orientation), or None
    fin_ts: int | None = None         # when a FIN marker brought its last FIN (the time one pass closes it at "fin")


@dataclass
class Plan:
    """What to do with each piece's events: (chain or None, flip, tail, skip) per piece (skip: the
    bytes each direction drops at its start, in the chain's orientation; see _skips); `dirty` from
    which entry on the flow key must be read again (None: nowhere)."""

    steps: list = field(default_factory=list)
    dirty: int | None = None


def _skips(nxt: list, piece: Piece, flip: bool) -> tuple | None:
    """How many bytes each direction of `piece` repeats at its start of what the chain already has
    (in the chain's orientation), or None when the piece does not go on where the chain stopped.
    A piece goes on where its start is the chain's next sequence number, or a little before it: a
    segment retransmitted across the file edge, whose bytes TCP had (counted, then dropped, as
    kwire.native.tcp_reassembly does with any old bytes), provided the piece handed over at least that many
    bytes before any gap (Piece.lead)."""
    skip = [0, 0]
    for d in (0, 1):
        start = piece.starts[d ^ flip]
        if nxt[d] is None or start is None or nxt[d] == start:
            continue
        behind = (nxt[d] - start) & MASK
        if behind > MAX_SKIP or behind > piece.lead[d ^ flip]:
            return None
        skip[d] = behind
    return tuple(skip) if skip[0] or skip[1] else NO_SKIP


def _extend(chain: Chain, piece: Piece, flip: bool) -> None:
    if chain.closer is None and piece.closer is not None:
        chain.closer = piece.closer ^ flip
    if piece.end == OPEN:
        for d in (0, 1):
            if piece.starts[d ^ flip] is not None:
                chain.nxt[d] = piece.nxt[d ^ flip]
            if piece.fins[d ^ flip]:
                chain.fins[d] = True
    else:
        chain.close = (piece.close_ts, piece.end)


def plan(entries: list[Piece], end_ts: int | None, idle_ns: int = IDLE_NS, linger_ns: int = LINGER_NS,
         cut: bool = False) -> Plan:
    """How one flow key's pieces (and interior connections), in file order, make connections.
    end_ts None: the capture goes on (kwire.spark.follow), a connection open at the end stays open
    (its Chain's close is None). `cut`: where the pieces cannot be stitched exactly, start a new
    connection instead of marking the flow key dirty (follow, which cannot read files again)."""
    result = Plan()
    steps = result.steps
    chain: Chain | None = None   # the connection a piece open at its file's end may go on with
    prev: Piece | None = None    # the last entry that counted
    start = 0                    # where `chain` (or the closed prev) began among the entries
    for i, e in enumerate(entries):
        if e.marker:  # FINs only: they tell how the chain they go on from ends, nothing to play
            if chain is not None and e.first_ts - prev.last_ts <= idle_ns:
                _fins(chain, e)
            steps.append(None)
            continue
        if e.interior:
            if chain is not None:
                chain.close = (e.first_ts, "reused")
            chain, prev, start = None, e, i
            steps.append(None)
            continue
        if chain is not None:
            if e.mid and e.first_ts - prev.last_ts <= idle_ns:
                flip = e.flipped(chain.first.a)
                skip = _skips(chain.nxt, e, flip) if prev.clean else None
                if cut and skip != NO_SKIP:  # follow: the bytes to compare with are a batch ago
                    skip = None
                if skip is None:
                    if not cut:
                        result.dirty = start
                        return result
                    chain.close = (e.first_ts, "end")
                    chain = None
                    prev = None
                if chain is not None:
                    steps[-1] = (steps[-1][0], steps[-1][1], DROP, steps[-1][3])
                    chain.pieces.append(e)
                    _extend(chain, e, flip)
                    steps.append((chain, flip, None, skip))
                    if e.end != OPEN:
                        chain = None
                    prev = e
                    continue
            else:
                chain.close = (e.first_ts, "reused") if not e.mid else _ended(chain, prev.last_ts + idle_ns, "idle")
        elif (prev is not None and prev.end in ("fin", "rst") and e.mid
              and e.first_ts <= prev.close_ts + linger_ns):
            if e.end != OPEN and e.last_ts <= prev.close_ts + linger_ns:
                steps.append(None)  # late segments of a closed connection: TCP ignores them
                continue
            if not cut:
                result.dirty = start
                return result
        chain = Chain(e, list(e.nxt), pieces=[e])
        _extend(chain, e, False)
        steps.append((chain, False, None, NO_SKIP))
        start = i
        if e.end != OPEN:
            chain = None
        prev = e
    if chain is not None:
        chain.close = None if end_ts is None else _ended(chain, max(end_ts, prev.last_ts), "end")
    return result


def _fins(chain: Chain, marker: Piece) -> None:
    """A FIN marker's FINs count for the chain when each is where the chain's bytes stopped."""
    flip = marker.flipped(chain.first.a)
    for d in (0, 1):
        seq = marker.starts[d ^ flip]
        if seq is not None and marker.fins[d ^ flip] and chain.nxt[d] in (None, seq):
            chain.fins[d] = True
            if chain.closer is None and marker.closer == d ^ flip:
                chain.closer = d
            chain.fin_ts = marker.last_ts


def _ended(chain: Chain, ts: int, reason: str) -> tuple:
    """How a chain open at its last piece's end closes: "fin" when both directions had sent their
    FIN (in files whose TCP state saw no connection for them, or without the bytes before: one pass
    over the whole capture closes such a connection at "fin", when a FIN marker brought the last FIN at its
    time), else `reason`."""
    if chain.fins[0] and chain.fins[1]:
        return (chain.fin_ts if chain.fin_ts is not None and chain.fin_ts <= ts else ts), "fin"
    return (ts, reason)


class Reducer:
    """One reduce task (module docstring); what batch() and end() return are OUT_SCHEMA rows.
    `own_file`: play only the connections whose first piece is in that file (kwire.spark.source, where
    each file's task sees the files around it too, and says when the capture ends: `end_ts`).
    `spread`: exchanges that need only their own bytes leave undecoded, as RAWS rows (kwire.spark.spread).
    `keep_reports`: whether its result carries the files' reports. Every reduce task reads every file's report
    (where the files overlap, when the capture ends, what to read again), but one result carrying them is
    enough: kwire.spark.job gives them to partition 0's alone (at 10,000 files, 2 MB less in every other
    result, pickled and unpickled at each level of the driver's merge)."""

    def __init__(self, options: DecodeOptions, own_file: int | None = None, end_ts: int | None = None,
                 spread: bool = False, keep_reports: bool = True):
        self.options = options
        self.keep_reports = keep_reports
        self.own_file = own_file
        self.given_end = end_ts
        self.spread = spread
        self.pipeline = options.pipeline(spread)
        self.facts = Facts(options, RawBatches() if spread else None)
        self.result = PartitionResult(self.facts.aggregator, members=self.facts.members)
        self.reports: dict = {}
        self.overlap: bool | None = None
        self.end_ts = 0
        self.out: list[tuple[int, bytes]] = []
        self.flow: bytes | None = None
        self.metas: list[Piece] = []
        self.player: _Player | None = None
        self.dirty: list[Dirty] = []
        self.next_id = 1
        self.gaps = self.gap_bytes = 0
        self.repeats = {"retransmitted_bytes": 0, "conflicting_bytes": 0}  # across file edges (_skips)

    def _header(self) -> None:
        if self.overlap is None:
            reports = list(self.reports.values())
            self.overlap = files_overlap(reports)
            self.end_ts = max((r.last_ts_ns for r in reports if r.last_ts_ns is not None), default=0)
            if self.given_end is not None:
                self.end_ts = max(self.end_ts, self.given_end)

    def batch(self, batch: pa.RecordBatch):
        cols = [batch.column(name).to_pylist() for name in ("flow", "section", "kind", "dir", "ts", "size", "data")]
        for flow, section, kind, direction, ts, size, data in zip(*cols):
            if flow == b"":
                if section == 0:
                    report = loads(data)
                    self.reports[report.index] = report
                    continue
                self._header()
                if not self.overlap:
                    if kind == RESULT:
                        self.result.merge(loads(data))
                    else:
                        self.out.append((kind, data))
                continue
            if flow != self.flow:
                self._end_flow()
                self._header()
                self.flow, self.metas, self.player = flow, [], None
            if section == 0:
                self.metas.append(loads(data))
                continue
            if self.player is None:
                self.player = self._play(flow)
            self.player.event(kind, direction, ts, data if kind == DATA else size)
        self.facts.add(self.pipeline.take())
        return self._rows()

    def _play(self, flow: bytes) -> _Player:
        p = plan(self.metas, self.end_ts)
        if self.overlap:
            p = Plan(steps=[None] * len(self.metas), dirty=0)
        if p.dirty is not None:
            if self.own_file is None or self.metas[p.dirty].file == self.own_file:
                self.dirty.append(Dirty.of(flow, self.metas[p.dirty:], self.reports, self.overlap))
            p.steps = p.steps[:p.dirty] + [None] * (len(self.metas) - p.dirty)
        if self.own_file is not None:
            p.steps = [s if s is not None and s[0].first.file == self.own_file else None for s in p.steps]
        return _Player(self, p.steps)

    def _end_flow(self) -> None:
        if self.flow is not None:
            if self.player is None:
                self.player = self._play(self.flow)
            self.player.done()
        self.flow = None

    def connection(self, first: Piece) -> Replayer:
        conn = Connection(self.next_id, first.a, first.b, first.initiator, first.first_ts)
        conn.start_seq = list(first.starts)
        self.next_id += 1
        return Replayer(self.pipeline.tls(conn), conn)

    def closing(self, chain: Chain, last: Piece, replay: Replayer) -> None:
        pass  # (kwire.spark.follow plays a carried tail here)

    def carry(self, chain: Chain, replay: Replayer, last: Piece, tail: list) -> None:
        raise AssertionError("a batch job ends every connection")  # plan() is given the capture's end

    def closed(self, replay: Replayer) -> None:
        self.gaps += replay.gaps
        self.gap_bytes += replay.gap_bytes
        self.facts.add(self.pipeline.take())

    def repeated(self, size: int, conflicting: int) -> None:
        """Bytes a piece repeated of the chain before it, and how many of them differed."""
        self.repeats["retransmitted_bytes"] += size
        self.repeats["conflicting_bytes"] += conflicting

    def end(self):
        self._end_flow()
        self._header()
        if self.dirty:
            again = self.options.pipeline(self.spread)
            tcp = reread(self.dirty, self.reports, again, self.end_ts)
            self.facts.add(again.take())
            self.result.add_run(again)
            add_counts(self.result.tcp, {"gaps": tcp.get("gaps", 0), "gap_bytes": tcp.get("gap_bytes", 0)})
        self.result.add_run(self.pipeline)
        add_counts(self.result.tcp, {"gaps": self.gaps, "gap_bytes": self.gap_bytes})
        add_counts(self.result.tcp, self.repeats)
        self.result.files = [self.reports[i] for i in sorted(self.reports)] if self.keep_reports else []
        self.out.append((RESULT, dumps(self.result)))
        return self._rows(end=True)

    def _rows(self, end: bool = False):
        out, self.out = self.out + self.facts.take_out(end), []
        return out_batches(out)


class _Player:
    """Plays one flow key's events, piece by piece, as its Plan says."""

    def __init__(self, reducer: Reducer, steps: list):
        self.reducer = reducer
        self.steps = steps
        self.metas = reducer.metas
        self.i = -1
        self.left = 0
        self.seen = 0
        self.replay: Replayer | None = None
        self.chain: Chain | None = None
        self.tail: list = []
        self.skip = [0, 0]             # bytes each direction of the piece still drops (Plan's skip)
        self.skipped: list = [[], []]  # what it dropped so far
        self.last: list = [b"", b""]   # each direction's last run handed over: TCP's tail
        self._next()

    def _next(self) -> None:
        """Move on to the next piece that has events left to come (closing chains on the way)."""
        while True:
            if self.i >= 0:
                self._piece_done()
            self.i += 1
            if self.i >= len(self.steps):
                self.left = -1
                return
            meta = self.metas[self.i]
            self.left, self.seen = meta.events, 0
            step = self.steps[self.i]
            if step is not None and step[0] is not self.chain:
                self.chain = step[0]
                self.replay = self.reducer.connection(self.chain.first)
                self.tail = []
                self.last = [b"", b""]
            if step is not None:
                self.skip = list(step[3])
            if self.left:
                return

    def _piece_done(self) -> None:
        step = self.steps[self.i]
        if step is None:
            return
        chain = step[0]
        if self.metas[self.i] is chain.pieces[-1]:
            if chain.close is None:  # still open (follow): the caller carries it on
                self.reducer.carry(chain, self.replay, self.metas[self.i], self.tail)
            else:
                self.reducer.closing(chain, self.metas[self.i], self.replay)
                self.replay.close(*chain.close, chain.closer)
                self.reducer.closed(self.replay)
            self.replay = self.chain = None

    def event(self, kind: int, direction: int, ts: int, value) -> None:
        while self.left == 0:
            self._next()
        if self.left < 0:
            return  # more events than the metas announced: cannot happen with kwire's own map side
        meta = self.metas[self.i]
        step = self.steps[self.i]
        self.left -= 1
        k = self.seen
        self.seen += 1
        if step is not None:
            chain, flip, tail, _ = step
            if k >= meta.tail:
                if tail is DROP:
                    value = None
                elif chain.close is None:
                    self.tail.append((kind, direction, ts, value))  # played when it really ends
                    value = None
                elif meta.end == OPEN:
                    ts = chain.close[0]
            if value is not None:
                if flip:
                    direction = 1 - direction
                if kind == DATA:
                    if self.skip[direction]:
                        value = self._drop(direction, value)
                    if value:
                        self.replay.data(direction, ts, value)
                        self.last[direction] = value
                else:
                    self.replay.gap(direction, ts, value)
        if self.left == 0:
            self._next()

    def _drop(self, direction: int, value):
        """The bytes of `value` past those the piece repeats (Plan's skip); once all are dropped,
        they are counted as TCP counts old bytes: retransmitted, and compared with its tail."""
        n = self.skip[direction]
        dropped = value[:n]
        self.skipped[direction].append(dropped)
        self.skip[direction] = n - len(dropped)
        if not self.skip[direction]:
            data = b"".join(self.skipped[direction])
            self.skipped[direction] = []
            tail = self.last[direction]
            both = min(len(tail), len(data))  # the repeat ends where the tail ends: at nxt
            conflicting = count_differences(tail[len(tail) - both:], data[len(data) - both:]) if both else 0
            self.reducer.repeated(len(data), conflicting)
        return value[len(dropped):]

    def done(self) -> None:
        while self.left >= 0:
            self.left = 0
            self._next()
