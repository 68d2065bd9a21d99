"""The flow table: TCP segments in capture order -> each connection's StreamConsumer.

`FlowTable(open_stream)` is sans-IO: `feed(segment)` hands what that segment made deliverable to the
consumers (the contract of kwire.tcp.stream; `open_stream(conn)` makes a connection's consumer when
its first byte, gap or close comes), `flush(ts_ns)` ends the capture (remaining holes become gaps,
every open connection closes with reason "end"), `counters()` reports what it saw. Each direction is
a `kwire.native.tcp_reassembly.HalfStream`.

Connections and roles:
- A connection is keyed by the canonical `FlowKey` (lower (ip, port) endpoint first); segments look
  their direction up by their own (src ip, src port, dst ip, dst port) tuple, and IPv4 directions
  also by the header bytes that hold it (`by_header`, kwire.net.layout.header_key) for kwire.native.fused.
- A SYN (without ACK) opens a connection with `a` = its sender and initiator 0. A SYN-ACK seen first
  (the SYN was missed) also opens one with initiator 0: the receiver of the SYN-ACK is the client, so
  it becomes `a`, and the SYN-ACK's ACK number tells where a's bytes start.
- Otherwise the first segment carrying payload opens the connection mid-stream: `a` is its sender,
  initiator None. Pure ACKs, FINs and RSTs on an unknown 4-tuple open nothing (`untracked_segments`);
  the FINs among them are noted (`take_loose_fins`, bounded): a reader of one file of a rotated
  capture learns from them that a connection it saw in an earlier file closed in this one.
- A direction starts at its SYN + 1, or at its first payload or FIN: pure ACKs do not start it
  (a keepalive's sequence number is one below the real one).
- The first FIN or RST seen either way sets `conn.closer` to its direction (who closed first).
- FIN seen from both sides, or a RST, closes the connection (remaining holes become gaps first) and
  forgets it. For `linger_ns` afterwards, segments on that 4-tuple without SYN are trailing ACKs or
  retransmissions and are ignored (`late_segments`); a SYN starts a new Connection with a new id. A
  SYN with a new ISN on a live 4-tuple closes the old connection with reason "reused".
- Idle connections (no segment either way for `idle_timeout_ns` of capture time) are evicted with
  reason "idle". The table is swept at most once per `sweep_interval_ns` of capture time (default
  idle_timeout / 8), so eviction happens between idle_timeout and idle_timeout + sweep interval.
- When `max_connections` are open, a new connection evicts the least recently active eighth of
  the table at once (reason "idle"): one scan per max_connections / 8 new connections, so a flood of
  connections costs amortised O(log n) each, not a scan of the table each.
- Connection.counters is filled (sum of both directions' HALF_COUNTERS) when the connection closes.
- `losses()` names the connections that lost bytes (gaps): the open ones and the last LOSSES_KEPT
  closed ones, for a live view to say where an overload hit.
"""

from __future__ import annotations

import heapq
from collections import deque
from typing import NamedTuple

from kwire.net.layout import SLOW_FLAGS, header_key
from kwire.net.segment import ACK, FIN, RST, SYN, Segment
from kwire.native.tcp_outoforder import ACK_GRACE_SEGMENTS, HALF, MASK
from kwire.native.tcp_reassembly import HALF_COUNTERS, HalfStream
from kwire.tcp.closes import CLOSED_COUNTERS, END_CLOSE, FIN_CLOSE, IDLE_CLOSE, RST_CLOSE, REUSED_CLOSE
from kwire.tcp.stream import Connection, StreamFactory

# Table-wide counters, next to the sums of HALF_COUNTERS.
TABLE_COUNTERS = (
    "connections",         # connections opened
    "open_connections",    # connections open now
    "evictions",           # connections closed for idleness or to make room
    *CLOSED_COUNTERS,      # connections closed, by reason (kwire.tcp.closes)
    "untracked_segments",  # pure ACK / FIN / RST on a 4-tuple with no connection
    "late_segments",       # segments on a recently closed 4-tuple (ignored)
)
ROOM_FRACTION = 8  # a full table evicts 1/8 of its connections at once
LOSSES_KEPT = 16   # closed connections that lost bytes, remembered for losses()


MAX_CONNECTIONS = 65_536  # open at once: a TLS connection holds about 6 KB (TCP's 3 and TLS's), 65,536 about 400 MB

class FlowKey(NamedTuple):
    """Canonical key of a TCP connection: the lower (ip, port) endpoint first."""

    lo_ip: bytes
    lo_port: int
    hi_ip: bytes
    hi_port: int


def flow_key(src_ip: bytes, src_port: int, dst_ip: bytes, dst_port: int) -> tuple[FlowKey, int]:
    """The canonical key and the direction of src -> dst along it (0 when src is the lower end)."""
    if (src_ip, src_port) <= (dst_ip, dst_port):
        return FlowKey(src_ip, src_port, dst_ip, dst_port), 0
    return FlowKey(dst_ip, dst_port, src_ip, src_port), 1


class _Flow:
    __slots__ = ("key", "conn", "halves", "tuples")

    def __init__(self, key: FlowKey, conn: Connection, halves: tuple[HalfStream, HalfStream],
                 tuples: tuple[tuple, tuple]):
        self.key = key
        self.conn = conn
        self.halves = halves
        self.tuples = tuples  # (a -> b, b -> a) lookup tuples

    def last_ts(self) -> int:
        h0, h1 = self.halves
        return h0.last_ts if h0.last_ts > h1.last_ts else h1.last_ts


def _no_stream(conn: Connection):
    raise TypeError("FlowTable was given no open_stream factory")


class FlowTable:
    """All TCP connections of a capture; see the module docstring for the rules."""

    def __init__(self, open_stream: StreamFactory = _no_stream, *, max_buffer_per_direction: int = 1 << 20,
                 idle_timeout_ns: int = 300_000_000_000, max_connections: int = MAX_CONNECTIONS,
                 linger_ns: int = 30_000_000_000, sweep_interval_ns: int | None = None):
        self.open_stream = open_stream
        self.max_buffer = max_buffer_per_direction
        self.idle_timeout_ns = idle_timeout_ns
        self.max_connections = max_connections
        self.linger_ns = linger_ns
        self.sweep_interval_ns = (max(idle_timeout_ns // 8, 1) if sweep_interval_ns is None
                                  else sweep_interval_ns)
        self._halves: dict[tuple, HalfStream] = {}  # (src ip, port, dst ip, port) -> sender's half
        self.by_header: dict[bytes, HalfStream] = {}  # IPv4 halves by kwire.net.layout.header_key
        self._flows: dict[int, _Flow] = {}          # connection id -> flow, in opening order
        self._closed: dict[FlowKey, int] = {}       # recently closed 4-tuples -> close time
        self.next_sweep = -(1 << 63)  # the first segment sweeps (and sets the real time)
        self._next_id = 1
        self._retired = dict.fromkeys(HALF_COUNTERS, 0)  # counters of closed connections
        self._table = dict.fromkeys(TABLE_COUNTERS, 0)
        self._lost: deque[tuple[Connection, int, int]] = deque(maxlen=LOSSES_KEPT)  # closed, with gaps
        self._loose_fins: dict[FlowKey, dict] = {}  # untracked FINs: key -> {sender: (seq, ts, receiver)}

    # -- feeding --------------------------------------------------------------------------------

    def feed(self, seg: Segment) -> None:
        """One segment, fed in capture order."""
        ts = seg.ts_ns
        if ts >= self.next_sweep:
            self.sweep(ts)
        h = self._halves.get((seg.src_ip, seg.src_port, seg.dst_ip, seg.dst_port))
        if h is None or seg.flags & SLOW_FLAGS or seg.truncated:
            self._feed_slow(seg, h)
        else:
            self.established(h, ts, seg.payload, seg.seq, seg.ack, seg.flags)

    def established(self, h: HalfStream, ts: int, payload, seq: int, ack: int, flags: int) -> None:
        """A segment of an established direction `h`, without SYN/FIN/RST, its payload whole."""
        h.last_ts = ts
        h.segments += 1
        if payload:
            n = len(payload)
            h.bytes += n
            if seq == h.nxt and h.clean:
                h.nxt = (seq + n) & MASK
                h.tail = payload
                h.hold(payload, ts)
            else:
                h.receive(seq, payload, ts)
        peer = h.peer
        if flags & ACK:
            pn = peer.nxt
            if ack != pn and pn is not None and 0 < ((ack - pn) & MASK) < HALF:
                peer.ack_passed(ack)
        if h.ack_hole is not None:
            h.check_ack(ts)
        if peer.ack_hole is not None:
            peer.check_ack(ts)
        if h.close_due:
            self._check_close(h, ts)

    def established_at(self, h: HalfStream, ts: int, buf, p: int, end: int, seq: int, ack: int,
                       flags: int) -> bool:
        """established() for the payload buf[p:end], read where it lies (kwire.native.fused: no Segment is
        made). When the segment acknowledges nothing the peer has not sent and neither direction has
        a hole or a close due, the common cases are done here: a pure ACK is counted, in-order bytes
        of a clean direction are held (the consumer wants more than they are: True, a run of records
        may follow) or handed over. Anything else goes through established()."""
        peer = h.peer
        if h.ack_hole is None and peer.ack_hole is None and not h.close_due:
            pn = peer.nxt
            if ack == pn or not flags & ACK or pn is None or (ack - pn) & MASK >= HALF:
                n = end - p
                if not n:
                    h.segments += 1
                    h.last_ts = ts
                    return False
                if seq == h.nxt and h.clean:
                    h.segments += 1
                    h.bytes += n
                    h.last_ts = ts
                    h.nxt = (seq + n) & MASK
                    want = h.want
                    if want > n:
                        h.held.append(buf[p:end])
                        h.held_ts = ts
                        h.want = want - n
                        return True
                    h.tail = payload = buf[p:end]
                    stream = h.stream
                    if stream is not None and not h.held:
                        h.want = stream.data(h.direction, ts, payload)
                    else:
                        h.hold(payload, ts)
                    return False
        self.established(h, ts, buf[p:end], seq, ack, flags)
        return False

    def _feed_slow(self, seg: Segment, h: HalfStream | None) -> None:
        flags = seg.flags
        ts = seg.ts_ns
        if h is None:
            h = self._open(seg)
            if h is None:
                return
        elif flags & SYN and not flags & RST:
            h = self._syn_on_open(seg, h)
        h.last_ts = ts
        h.segments += 1
        payload = seg.payload
        n = len(payload)
        h.bytes += n
        if flags & (FIN | RST) and h.conn.closer is None:
            h.conn.closer = h.direction  # who closed first (kwire.native.kafka_pairing: the broker or the client)
        if flags & RST:
            self._close(self._flows[h.conn.id], ts, RST_CLOSE)
            return
        seq = (seg.seq + 1) & MASK if flags & SYN else seg.seq
        if n:
            h.receive(seq, payload, ts, seg.truncated, seg.missing)
        elif seg.truncated:
            h.cut(seq, seg.missing, ts)
        if flags & FIN:
            h.fin((seq + n + seg.missing) & MASK)
        if flags & ACK:
            p = h.peer
            pn = p.nxt
            if pn is not None and 0 < ((seg.ack - pn) & MASK) < HALF:
                p.ack_passed(seg.ack)
        for half in (h, h.peer):
            if half.ack_hole is not None:
                half.check_ack(ts)
        self._after_fin(h, ts)

    def _after_fin(self, h: HalfStream, ts: int) -> None:
        if h.close_due:
            self._check_close(h, ts)
        elif h.fin_at is not None and h.peer.fin_at is not None:
            if h.fin_reached() and h.peer.fin_reached():
                self._close(self._flows[h.conn.id], ts, FIN_CLOSE)
            else:
                # FIN both ways but bytes before a FIN are missing: they may still be captured a
                # little later (capture order is not wire order). Close once they are in, or after
                # ACK_GRACE_SEGMENTS more segments.
                h.close_due = h.peer.close_due = h.segments + h.peer.segments + ACK_GRACE_SEGMENTS

    def _check_close(self, h: HalfStream, ts: int) -> None:
        if (h.fin_reached() and h.peer.fin_reached()) or h.segments + h.peer.segments >= h.close_due:
            flow = self._flows.get(h.conn.id)
            if flow is not None:
                self._close(flow, ts, FIN_CLOSE)

    # -- opening --------------------------------------------------------------------------------

    def _open(self, seg: Segment) -> HalfStream | None:
        """A segment on an unknown 4-tuple: open a connection, or ignore it. Returns its half."""
        flags = seg.flags
        key, _ = flow_key(seg.src_ip, seg.src_port, seg.dst_ip, seg.dst_port)
        table = self._table
        if key in self._closed:
            if not flags & SYN or flags & RST:
                table["late_segments"] += 1
                return None
            del self._closed[key]
        if flags & RST or not (flags & SYN or seg.payload):
            table["untracked_segments"] += 1
            if flags & FIN and not flags & RST:
                self._note_fin(key, seg)
            return None
        src = (seg.src_ip, seg.src_port)
        dst = (seg.dst_ip, seg.dst_port)
        synack = flags & SYN and flags & ACK
        if synack:  # the SYN was missed: the receiver of the SYN-ACK is the client
            a, b, initiator, direction = dst, src, 0, 1
        else:
            a, b, initiator, direction = src, dst, (0 if flags & SYN else None), 0
        if len(self._flows) >= self.max_connections:
            self._make_room(seg.ts_ns)
        flow = self._new_flow(key, a, b, initiator, seg.ts_ns)
        h = flow.halves[direction]
        if flags & SYN:
            h.syn(seg.seq)
            if synack:
                h.peer.begin(seg.ack)
        return h

    def _note_fin(self, key: FlowKey, seg: Segment) -> None:
        fins = self._loose_fins.get(key)
        if fins is None:
            if len(self._loose_fins) >= self.max_connections:
                return
            fins = self._loose_fins[key] = {}
        fins.setdefault((seg.src_ip, seg.src_port), (seg.seq, seg.ts_ns, (seg.dst_ip, seg.dst_port)))

    def take_loose_fins(self) -> dict[FlowKey, dict]:
        """The FINs seen on 4-tuples with no connection since the last call, by flow key: {sender (ip,
        port): (sequence number, capture time, receiver (ip, port))} (each sender's first); forgotten here."""
        fins, self._loose_fins = self._loose_fins, {}
        return fins

    def _new_flow(self, key: FlowKey, a, b, initiator, ts: int) -> _Flow:
        conn = Connection(self._next_id, a, b, initiator, ts)
        self._next_id += 1
        h0 = HalfStream(conn, 0, self.max_buffer, ts, self.open_stream)
        h1 = HalfStream(conn, 1, self.max_buffer, ts, self.open_stream)
        h0.peer = h1
        h1.peer = h0
        fwd = (a[0], a[1], b[0], b[1])
        rev = (b[0], b[1], a[0], a[1])
        flow = _Flow(key, conn, (h0, h1), (fwd, rev))
        self._flows[conn.id] = flow
        self._halves[fwd] = h0
        self._halves[rev] = h1
        if len(a[0]) == 4 and len(b[0]) == 4:
            self.by_header[header_key(*fwd)] = h0
            self.by_header[header_key(*rev)] = h1
        self._table["connections"] += 1
        return flow

    def _syn_on_open(self, seg: Segment, h: HalfStream) -> HalfStream:
        """A SYN on a 4-tuple with a live connection: a copy, the missing half of the handshake,
        or the 4-tuple reused by a new connection."""
        seq = seg.seq
        if h.syn_seq == seq:
            return h  # retransmitted SYN / SYN-ACK
        if h.syn_seq is None and h.start == (seq + 1) & MASK:
            h.syn_seq = seq  # the SYN after its SYN-ACK: it starts where the SYN-ACK said
            return h
        if h.nxt is None:  # this side had sent nothing yet: its half of the handshake
            h.syn(seq)
            p = h.peer
            if seg.flags & ACK and p.nxt is None:
                p.begin(seg.ack)
            return h
        self._close(self._flows[h.conn.id], seg.ts_ns, REUSED_CLOSE)
        return self._open(seg)

    # -- closing --------------------------------------------------------------------------------

    def _close(self, flow: _Flow, ts: int, reason: str) -> None:
        conn = flow.conn
        h0, h1 = flow.halves
        h0.finish(ts)
        h1.finish(ts)
        totals = self._retired
        counters = conn.counters
        for name in HALF_COUNTERS:
            v = getattr(h0, name) + getattr(h1, name)
            counters[name] = v
            totals[name] += v
        del self._flows[conn.id]
        if counters["gaps"]:
            self._lost.append((conn, counters["gaps"], counters["gap_bytes"]))
        fwd, rev = flow.tuples
        self._halves.pop(fwd, None)
        self._halves.pop(rev, None)  # the same tuple when a socket talks to itself
        if len(fwd[0]) == 4 and len(fwd[2]) == 4:
            self.by_header.pop(header_key(*fwd), None)
            self.by_header.pop(header_key(*rev), None)
        self._table["closed_" + reason] += 1
        if reason == FIN_CLOSE or reason == RST_CLOSE:
            self._closed[flow.key] = ts
        if h0.stream is not None:
            h0.stream.close(ts, reason)
        h0.peer = h1.peer = None  # no cycle left: the halves are freed now, not at the next full collection

    def sweep(self, ts: int) -> None:
        """Evict idle connections and forget old closed 4-tuples (due every sweep_interval_ns)."""
        self.next_sweep = ts + self.sweep_interval_ns
        limit = ts - self.idle_timeout_ns
        idle = [flow for flow in self._flows.values() if flow.last_ts() <= limit]
        for flow in idle:
            self._table["evictions"] += 1
            self._close(flow, ts, IDLE_CLOSE)
        closed = self._closed
        limit = ts - self.linger_ns
        while closed:
            key = next(iter(closed))
            if closed[key] > limit:
                break
            del closed[key]
        while len(closed) > self.max_connections:
            del closed[next(iter(closed))]

    def _make_room(self, ts: int) -> None:
        """The table is full: evict its least recently active eighth (see the module docstring)."""
        count = max(1, len(self._flows) // ROOM_FRACTION)
        for flow in heapq.nsmallest(count, self._flows.values(), key=_Flow.last_ts):
            self._table["evictions"] += 1
            self._close(flow, ts, IDLE_CLOSE)

    def flush(self, ts_ns: int) -> None:
        """End of capture: remaining holes become gaps, buffered bytes are handed over, and every
        open connection closes with reason "end". The table is empty afterwards."""
        for flow in list(self._flows.values()):
            self._close(flow, ts_ns, END_CLOSE)
        self._closed.clear()

    # -- reporting ------------------------------------------------------------------------------

    def counters(self) -> dict[str, int]:
        """Totals so far: HALF_COUNTERS summed over every connection, plus TABLE_COUNTERS."""
        result = dict(self._retired)
        for flow in self._flows.values():
            for h in flow.halves:
                for name in HALF_COUNTERS:
                    result[name] += getattr(h, name)
        result["segments"] += self._table["untracked_segments"] + self._table["late_segments"]
        result.update(self._table)
        result["open_connections"] = len(self._flows)
        return result

    def losses(self) -> list[tuple[Connection, int, int]]:
        """(connection, gaps, bytes lost) of every open connection that lost bytes and of the last
        LOSSES_KEPT closed ones, most bytes first."""
        found = list(self._lost)
        for flow in self._flows.values():
            h0, h1 = flow.halves
            if h0.gaps or h1.gaps:
                found.append((flow.conn, h0.gaps + h1.gaps, h0.gap_bytes + h1.gap_bytes))
        found.sort(key=lambda item: (-item[2], item[0].id))
        return found

    def latest_ts(self) -> int:
        """The newest capture time any open connection saw (0 when none is open)."""
        return max((flow.last_ts() for flow in self._flows.values()), default=0)

    def __len__(self) -> int:
        return len(self._flows)

    def edges(self) -> list[tuple[Connection, list, bool, int, list]]:
        """What TCP knows of each open connection (oldest first), for a reader that stops between two
        capture files (kwire.spark.mapside): (connection, each direction's next sequence number (None
        before it started), whether both directions are settled (HalfStream.settled: nothing but
        those numbers held), the latest capture time either saw, whether each direction's FIN is in)."""
        return [(flow.conn, [h0.nxt, h1.nxt], h0.settled() and h1.settled(), flow.last_ts(),
                 [h0.fin_reached(), h1.fin_reached()])
                for flow in self._flows.values() for h0, h1 in (flow.halves,)]

    def connections(self) -> list[Connection]:
        """The open connections, oldest first."""
        return [flow.conn for flow in self._flows.values()]
