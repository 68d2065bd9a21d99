"""One direction of a TCP connection: bytes in sequence order, holes reported as gaps.

`HalfStream` owns the expected sequence number, the bounded out-of-order buffer, the bytes held for
the consumer and the per-direction counters. It is sans-IO: methods take sequence numbers, payloads
and capture times, and hand what is deliverable to the connection's StreamConsumer (the contract of
kwire.tcp.stream): data() for ordered bytes, gap() for bytes never captured. `kwire.native.tcp_flows.FlowTable`
drives two of them per connection; the consumer is opened (by the table's factory) when the first
byte or gap of either direction is handed over.

Guarantees and the one way each ambiguity is resolved:
- Sequence numbers are compared modulo 2^32 (`signed_delta`); SYN and FIN each consume one number.
- A direction starts at the first sequence number it is given (SYN + 1, the ACK of a SYN-ACK, or the
  first payload/FIN seen mid-stream). Bytes that lie before that start and arrive later (reordering
  around the start of a capture) are counted as pre-start and dropped.
- First copy wins. A later copy of bytes already buffered or delivered counts as retransmitted; those
  of its bytes that differ from the first copy count as conflicting. Delivered bytes are kept only as
  the last delivered run (`tail`), so older retransmitted bytes are counted but not compared.
- Out-of-order bytes wait in a buffer of at most `limit` bytes, delivered when the hole before them
  fills. A hole is declared lost (StreamGap with its exact size, never zero-filled, then the buffered
  bytes after it are delivered) when the peer acknowledges past it (`ack_passed`), when the buffer
  goes over its limit (one `buffer_limit_hits` per overflowing segment), right away after a segment
  cut by the snap length (at that segment's time when the IP length said how much was cut and the
  segment came in order, so a frame that ends in the cut ends when it was sent), and when the
  connection ends (`finish`).
- Every delivered run is one data() call whose ts_ns is the time of the segment (or ACK, or close)
  that made it deliverable.
- In-order bytes the consumer said it cannot use yet (the count its last data() call returned, kept
  in `want`) wait in `held` and go out as one data() call, a tuple of the pieces, once that many are
  in, or before anything else this direction hands over (a gap, the close).
"""

from __future__ import annotations


from kwire.native.tcp_outoforder import HALF, MASK, OutOfOrder, count_differences, signed_delta
from kwire.tcp.stream import Connection, StreamConsumer, StreamFactory


# Per-direction counters, summed into a connection's and the table's counters.
HALF_COUNTERS = (
    "segments",               # segments sent in this direction (pure ACKs included)
    "bytes",                  # payload bytes captured
    "retransmitted_bytes",    # payload bytes already buffered or delivered (any content)
    "conflicting_bytes",      # retransmitted bytes whose content differs from the first copy
    "out_of_order_segments",  # segments that arrived ahead of the expected sequence number
    "gaps",                   # StreamGap events
    "gap_bytes",              # bytes reported missing
    "buffer_limit_hits",      # segments that pushed the out-of-order buffer over its limit
    "pre_start_segments",     # segments (partly) before the direction's first sequence number
    "pre_start_bytes",
    "truncated_segments",     # segments whose payload the snap length cut short
    "after_fin_segments",     # segments carrying bytes past the direction's FIN (it was not the end)
)


class HalfStream(OutOfOrder):
    """Reassembly state of one direction of one connection (the out-of-order buffer and the holes:
    kwire.native.tcp_outoforder)."""

    __slots__ = (
        "conn", "direction", "peer", "limit", "open_stream", "stream",
        "nxt", "start", "syn_seq", "fin_at", "clean", "tail", "lost_at", "last_ts", "ack_hole", "ack_due", "close_due",
        "base", "starts", "chunks", "buffered", "want", "held", "held_ts",
    ) + HALF_COUNTERS

    def __init__(self, conn: Connection, direction: int, limit: int, ts_ns: int, open_stream: StreamFactory):
        self.conn = conn
        self.direction = direction
        self.open_stream = open_stream  # the table's factory, called once per connection (consumer())
        self.stream: StreamConsumer | None = None  # the connection's consumer, shared with the peer
        self.peer: HalfStream | None = None
        self.limit = limit
        self.nxt: int | None = None      # next expected sequence number; None until started
        self.start: int | None = None    # first sequence number of the direction (pre-start test)
        self.syn_seq: int | None = None  # sequence number of this direction's SYN
        self.fin_at: int | None = None   # sequence number of this direction's FIN
        self.clean = True                # nothing buffered and no FIN: the in-order fast path applies
        self.tail = b""                  # last delivered run; it ends exactly at nxt (held[-1] while pieces are held)
        self.lost_at: int | None = None  # a snap-length cut left a hole starting here
        self.ack_hole: int | None = None  # the peer acknowledged up to here, past bytes we lack
        self.ack_due = 0  # segments (both directions) after which that hole is declared lost
        self.close_due = 0  # FIN both ways with bytes missing: segments after which to close anyway
        self.last_ts = ts_ns
        self.base = 0                    # sequence number that buffer offsets are counted from
        self.starts: list[int] = []      # buffered runs: offsets from base, sorted, non-overlapping
        self.chunks: list[bytes] = []
        self.buffered = 0
        self.want = 0                    # bytes the consumer needs before it can use this direction's bytes
        self.held: list = []             # in-order payloads held back meanwhile
        self.held_ts = ts_ns
        for name in HALF_COUNTERS:
            setattr(self, name, 0)

    # -- starting -------------------------------------------------------------------------------

    def begin(self, seq: int) -> None:
        """Start the direction at `seq` (the first byte it will carry), noted on the Connection."""
        self.nxt = self.start = seq & MASK
        self.conn.start_seq[self.direction] = self.start

    def syn(self, seq: int) -> None:
        """This direction's SYN at `seq`: its data starts at seq + 1."""
        self.syn_seq = seq
        if self.nxt is None:
            self.begin(seq + 1)

    # -- data -----------------------------------------------------------------------------------

    def consumer(self) -> StreamConsumer:
        """The connection's consumer, opened by the table's factory the first time it is needed."""
        stream = self.stream
        if stream is None:
            stream = self.stream = self.peer.stream = self.open_stream(self.conn)
        return stream

    def receive(self, seq: int, payload, ts: int, truncated: bool = False, missing: int = 0) -> None:
        """A payload starting at sequence number `seq`; `missing`: bytes of it the snap length cut."""
        if self.nxt is None:
            self.begin(seq)
        n = len(payload)
        if self.fin_at is not None and signed_delta(seq, self.fin_at) + n > 0:
            self._past_fin(seq)
        nxt = self.nxt
        rel = signed_delta(seq, nxt)
        if truncated:
            self.truncated_segments += 1
        if rel < 0:
            old = -rel if -rel < n else n
            self._old(rel, payload[:old] if old < n else payload)
            if old == n:
                return
            payload = payload[old:]
            n -= old
            rel = 0
        if rel == 0 and not self.starts:
            self.lost_at = None
            self._deliver(payload, ts)
        else:
            if rel > 0:
                self.out_of_order_segments += 1
            self._insert(rel, payload)
            self._drain(ts)
        if self.starts and self.lost_at == self.nxt:  # an earlier cut segment's tail
            self._skip_hole(ts)
        if truncated:
            end = (nxt + rel + n) & MASK  # where the captured bytes stop
            if missing and end == self.nxt and not self.starts:
                self._gap(missing, ts)  # the cut part, declared at once: its size is known
            elif signed_delta(end, self.nxt) >= 0:
                self.lost_at = end
                if self.starts and end == self.nxt:
                    self._skip_hole(ts)
        if self.starts:
            if self.buffered > self.limit:
                self.buffer_limit_hits += 1
                while self.buffered > self.limit:
                    self._skip_hole(ts)
        self.clean = not self.starts and self.fin_at is None

    def cut(self, seq: int, missing: int, ts: int) -> None:
        """A segment at `seq` whose whole payload (`missing` bytes) the snap length cut: a gap at once
        when it is the next thing this direction expects."""
        self.truncated_segments += 1
        if not missing:
            return
        if self.nxt is None:
            self.begin(seq)
        if seq == self.nxt and not self.starts and self.fin_at is None:
            self._gap(missing, ts)

    def _past_fin(self, seq: int) -> None:
        """Bytes came at or past this direction's FIN: the FIN did not end the stream (a sender that
        breaks TCP, or a FIN captured out of place). Forget it and take the bytes (counted), rather
        than drop what was sent and report its answer as a response without a request."""
        self.after_fin_segments += 1
        if self.nxt == (self.fin_at + 1) & MASK and seq == self.fin_at:
            self.nxt = self.fin_at  # the FIN's sequence number carried these bytes instead
        self.fin_at = None
        self.close_due = self.peer.close_due = 0

    def _old(self, rel: int, data) -> None:
        """Bytes wholly before nxt: pre-start, or a retransmission compared against the tail."""
        n = len(data)
        if self.start is not None:
            since = (self.nxt - self.start) & MASK
            if since >= HALF:
                self.start = None  # more than 2^31 bytes ago: no longer meaningful
            elif -rel > since:
                pre = -rel - since
                if pre > n:
                    pre = n
                self.pre_start_segments += 1
                self.pre_start_bytes += pre
                data = data[pre:]
                rel += pre
                n -= pre
        if not n:
            return
        self.retransmitted_bytes += n
        tail = self.held[-1] if self.held else self.tail  # held pieces: the last one is the tail
        lt = len(tail)
        lo = rel if rel > -lt else -lt  # overlap of [rel, rel + n) with the tail [-lt, 0)
        hi = rel + n
        if lo < hi:
            self.conflicting_bytes += count_differences(
                tail[lt + lo:lt + hi], data[lo - rel:hi - rel])

    def hold(self, payload, ts: int) -> None:
        """In-order `payload` (nxt already moved past it) on the fast path: hand it over, or hold it
        back while the consumer still wants more of this direction than has come."""
        want = self.want
        n = len(payload)
        if want > n:
            self.want = want - n
            self.held.append(payload)
            self.held_ts = ts
            return
        if self.held:
            self.held.append(payload)
            payload = self._take_held()
        self.want = self.consumer().data(self.direction, ts, payload)

    def _take_held(self):
        """The held pieces as one delivery (one piece, or a tuple of them), and none held any more."""
        held = self.held
        self.held = []
        return held[0] if len(held) == 1 else tuple(held)

    def flush_held(self) -> None:
        """Hand over the bytes held back for the consumer (before anything else of this direction)."""
        if self.held:
            self.tail = self.held[-1]
            data = self._take_held()
            self.want = self.consumer().data(self.direction, self.held_ts, data)

    # -- what a fused loop (kwire.native.fused) may do to this direction, and nothing else -------------

    def run_from(self) -> tuple[int, int, int] | None:
        """A loop about to hold this direction's in-order segments: (nxt, want, the peer's nxt) when
        nothing else can happen to either direction while it does (in order so far, no FIN, no hole
        the peer acknowledged past, no close due; close_due is set on both directions at once), else
        None. The loop gives what it held back with held_run()."""
        peer = self.peer
        if self.clean and self.ack_hole is None and not self.close_due and peer.ack_hole is None:
            return self.nxt, self.want, peer.nxt
        return None

    def held_run(self, pieces: list, nxt: int, want: int, ts: int, acks: int, ack_ts: int) -> None:
        """A loop that run_from() allowed held `pieces` (in-order payloads, the last captured at ts),
        moving this direction to `nxt` and leaving the consumer wanting `want` more bytes, while the
        peer sent `acks` pure ACKs acknowledging nothing new (the last at ack_ts)."""
        if pieces:
            self.held += pieces
            self.bytes += (nxt - self.nxt) & MASK
            self.nxt = nxt & MASK
            self.want = want
            self.segments += len(pieces)
            self.last_ts = self.held_ts = ts
        if acks:
            self.peer.counted(acks, ack_ts)

    def settled(self) -> bool:
        """Does this direction's state hold nothing but its next sequence number (nothing buffered or
        held, no hole, no FIN, no close due)? What a reader that stops between two capture files may
        carry over as a number (kwire.native.tcp_flows.FlowTable.edges)."""
        return self.nxt is None or (not self.starts and self.fin_at is None and self.ack_hole is None
                                    and self.lost_at is None and not self.held and not self.close_due)

    def _deliver(self, data, ts: int) -> None:
        if self.held:
            self.flush_held()
        self.nxt = (self.nxt + len(data)) & MASK
        self.tail = data
        self.want = self.consumer().data(self.direction, ts, data)
        if self.nxt == self.fin_at:
            self._consume_fin()

    def fin_reached(self) -> bool:
        """Every byte up to and including this direction's FIN is in."""
        return self.fin_at is not None and self.nxt == ((self.fin_at + 1) & MASK)

    def counted(self, segments: int, ts: int) -> None:
        """`segments` more segments without payload (pure ACKs) were seen, the last at `ts`."""
        self.segments += segments
        self.last_ts = ts

    def _consume_fin(self) -> None:
        self.nxt = (self.fin_at + 1) & MASK
        self.tail = b""

    def fin(self, seq: int) -> None:
        """This direction's FIN at sequence number `seq` (after its payload, if any)."""
        if self.fin_at is not None:
            return  # a retransmitted FIN
        if self.nxt is None:
            self.begin(seq)
        if self.starts:
            cut = (seq - self.base) & MASK
            if cut < HALF and self.starts[-1] + len(self.chunks[-1]) > cut:
                # Bytes already captured lie past it: this FIN did not end the stream (see _past_fin).
                self.after_fin_segments += 1
                return
        self.fin_at = seq & MASK
        self.clean = False
        if self.nxt == self.fin_at:
            self._consume_fin()
        # A FIN behind nxt (its sequence number was already covered by a gap declared on an ACK
        # that acknowledged it) still marks the direction finished; bytes after it reopen it.

    def finish(self, ts: int) -> None:
        """The connection ends: declare every remaining hole, deliver every buffered byte."""
        if self.held:
            self.flush_held()
        self.check_ack(ts, force=True)
        while self.starts:
            self._skip_hole(ts)
        if self.fin_at is not None and self.nxt is not None:
            d = signed_delta(self.fin_at, self.nxt)
            if d > 0:  # the FIN tells us exactly how many bytes we never saw
                self._gap(d, ts)
        self.clean = False

    def counters(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in HALF_COUNTERS}
