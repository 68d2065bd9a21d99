"""The flow table: TCP segments in capture order -> StreamData / StreamGap / StreamClosed events.

`FlowTable` is sans-IO: `feed(segment)` returns the events that segment caused, `flush(ts_ns)` ends
the capture (remaining holes become gaps, every open connection gets StreamClosed(reason="end")),
`counters()` reports what it saw. Each direction is a `kwire.tcp.reassembly.HalfStream`.

Connections and roles:
- A connection is keyed by the canonical `FlowKey` (lower (ip, port) endpoint first); the hot path
  looks halves up by the segment's own (src ip, src port, dst ip, dst port) tuple.
- A SYN (without ACK) opens a connection with `a` = its sender and initiator 0. A SYN-ACK seen first
  (the SYN was missed) also opens one with initiator 0: the receiver of the SYN-ACK is the client, so
  it becomes `a`, and the SYN-ACK's ACK number tells where a's bytes start.
- Otherwise the first segment carrying payload opens the connection mid-stream: `a` is its sender,
  initiator None. Pure ACKs, FINs and RSTs on an unknown 4-tuple open nothing (`untracked_segments`).
- A direction starts at its SYN + 1, or at its first payload or FIN: pure ACKs do not start it
  (a keepalive's sequence number is one below the real one).
- FIN seen from both sides, or a RST, closes the connection (remaining holes become gaps first) and
  forgets it. For `linger_ns` afterwards, segments on that 4-tuple without SYN are trailing ACKs or
  retransmissions and are ignored (`late_segments`); a SYN starts a new Connection with a new id. A
  SYN with a new ISN on a live 4-tuple closes the old connection with reason "reused".
- Idle connections (no segment either way for `idle_timeout_ns` of capture time) are evicted with
  reason "idle". The table is swept at most once per `sweep_interval_ns` of capture time (default
  idle_timeout / 8), so eviction happens between idle_timeout and idle_timeout + sweep interval.
  When `max_connections` are open, a new connection first triggers a sweep, then evicts the least
  recently active connection.
- Connection.counters is filled (sum of both directions' HALF_COUNTERS) when the connection closes.
"""

from __future__ import annotations

from struct import Struct
from typing import Iterable, Iterator, NamedTuple

from kwire.capture.packet import NOT_TAKEN, TAKEN, TAKEN_EVENTS, TAKEN_QUIETLY, Packet, RecordLayout
from kwire.net.decode import DecodeCounters, decode_segment
from kwire.net.segment import ACK, FIN, RST, SYN, Segment
from kwire.tcp.events import Connection, StreamClosed, StreamData, StreamEvent
from kwire.tcp.reassembly import ACK_GRACE_SEGMENTS, HALF, HALF_COUNTERS, MASK, HalfStream

_SLOW_FLAGS = SYN | FIN | RST
_PORTS = Struct("!HH")
# Of an Ethernet frame: type, IPv4 version/IHL, total length, fragment field, protocol (bytes 12..23),
# addresses and ports as they are (26..37, the key of _v4), TCP sequence, acknowledgement, data
# offset and flags (38..47).
_ETH_IPV4_TCP = Struct("!12xHB1xH2xH1xB2x12sIIBB").unpack_from
# The same for take_pcap_run: type, version/IHL and TOS as one number (bytes 12..15), total length,
# fragment field, protocol (20..23, TTL skipped), then as above.
_ETH_IPV4_TCP_RUN = Struct("!12xIH2xHxB2x12sIIBB").unpack_from
_SLOW_BY_FLAGS = tuple(bool(f & _SLOW_FLAGS) for f in range(256))  # SYN, FIN or RST among TCP flags
# Where the TCP payload starts in an Ethernet frame, by the TCP data offset byte (a data offset
# under 5 words is damage: past any buffer, so no payload fits).
_TCP_DATA = tuple(34 + ((d >> 4) << 2) if d >= 0x50 else 1 << 29 for d in range(256))


def _v4_key(t: tuple) -> bytes:
    """What bytes 26..38 of an Ethernet frame hold for this (src ip, port, dst ip, port)."""
    return t[0] + t[2] + _PORTS.pack(t[1], t[3])


def _run_release(h: HalfStream, nxt0: int, held0: int, nxt: int, want: int, acks: int,
                 layout: RecordLayout, buf, last: int, last_ack: int) -> int:
    """Write back what FlowTable.take_pcap_run did for `h`, which had nxt0 and held0 pieces when the
    run came to it, and for its peer, which sent `acks` pure ACKs meanwhile (last, last_ack: where
    the last record of each starts). Returns the number of records taken."""
    segments = len(h.held) - held0
    if segments:
        h.nxt = nxt & MASK
        h.demand[h.direction] = want
        h.segments += segments
        h.bytes += (nxt - nxt0) & MASK
        h.last_ts = h.held_ts = layout.ts_at(buf, last)
    if acks:
        peer = h.peer
        peer.segments += acks
        peer.last_ts = layout.ts_at(buf, last_ack)
    return segments + acks


# Table-wide counters, next to the sums of HALF_COUNTERS.
TABLE_COUNTERS = (
    "connections",         # connections opened
    "open_connections",    # connections open now
    "evictions",           # connections closed for idleness or to make room
    "closed_fin", "closed_rst", "closed_idle", "closed_end", "closed_reused",
    "untracked_segments",  # pure ACK / FIN / RST on a 4-tuple with no connection
    "late_segments",       # segments on a recently closed 4-tuple (ignored)
)


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


class FlowTable:
    """All TCP connections of a capture; see the module docstring for the rules."""

    def __init__(self, *, max_buffer_per_direction: int = 1 << 20,
                 idle_timeout_ns: int = 300_000_000_000, max_connections: int = 100_000,
                 linger_ns: int = 30_000_000_000, sweep_interval_ns: int | None = None):
        self.max_buffer = max_buffer_per_direction
        self.idle_timeout_ns = idle_timeout_ns
        self.max_connections = max_connections
        self.linger_ns = linger_ns
        self.sweep_interval_ns = (max(idle_timeout_ns // 8, 1) if sweep_interval_ns is None
                                  else sweep_interval_ns)
        self._halves: dict[tuple, HalfStream] = {}  # (src ip, port, dst ip, port) -> sender's half
        self._v4: dict[bytes, HalfStream] = {}  # IPv4 halves by their header bytes 26..38 (take_ethernet)
        self.taken: list[StreamEvent] = []  # events of the last packet take_ethernet answered TAKEN_EVENTS for
        self._flows: dict[int, _Flow] = {}          # connection id -> flow, in opening order
        self._closed: dict[FlowKey, int] = {}       # recently closed 4-tuples -> close time
        self._next_sweep = -(1 << 63)  # the first segment sweeps (and sets the real time)
        self._next_id = 1
        self._retired = dict.fromkeys(HALF_COUNTERS, 0)  # counters of closed connections
        self._table = dict.fromkeys(TABLE_COUNTERS, 0)

    # -- feeding --------------------------------------------------------------------------------

    def feed(self, seg: Segment) -> list[StreamEvent]:
        """Events caused by one segment (fed in capture order)."""
        ts = seg.ts_ns
        h = self._halves.get((seg.src_ip, seg.src_port, seg.dst_ip, seg.dst_port))
        if h is None or seg.flags & _SLOW_FLAGS or seg.truncated or ts >= self._next_sweep:
            out: list[StreamEvent] = []
            if ts >= self._next_sweep:
                self._sweep(ts, out)
                h = self._halves.get((seg.src_ip, seg.src_port, seg.dst_ip, seg.dst_port))
            if h is None or seg.flags & _SLOW_FLAGS or seg.truncated:
                self._feed_slow(seg, h, out)
                return out
            out += self._established(h, ts, seg.payload, seg.seq, seg.ack, seg.flags)
            return out
        return self._established(h, ts, seg.payload, seg.seq, seg.ack, seg.flags)

    def feed_packet(self, packet: Packet, counters: DecodeCounters | None = None) -> list[StreamEvent]:
        """`feed(decode_segment(packet, counters))` in one step (packets the net layer rejects cause
        no event). The common packet (untagged Ethernet, IPv4 without options, whole TCP segment
        without SYN/FIN/RST on an established direction) goes through take_ethernet and never
        becomes a Segment."""
        if packet.linktype == 1:
            data = packet.data
            taken = self.take_ethernet(packet.ts_ns, data, 0, len(data))
            if taken:
                if taken == TAKEN_EVENTS:
                    events = self.taken
                    self.taken = []
                    return events
                return []
        seg = decode_segment(packet, counters)
        if seg is None:
            return []
        return self.feed(seg)

    def take_ethernet(self, ts: int, buf, start: int, stop: int) -> int:
        """Take a whole Ethernet frame buf[start:stop] in place when it is an IPv4 segment of an
        established direction without SYN/FIN/RST: exactly what feed_packet would do with it,
        without making a Packet. Returns NOT_TAKEN (nothing was touched: feed the packet the
        normal way), TAKEN (done, no event), TAKEN_QUIETLY (done: only held, see below) or
        TAKEN_EVENTS (done; its events wait in `self.taken` for the caller to collect before the
        next packet, and the connection's sink, when it took the payload, has something to say:
        Connection.sink). Capture readers call this first, so the commonest packets cost one parse and
        one slice: an in-order segment inside a frame the consumer waits for (Connection.demand)
        is only held, and the records after it are offered to take_pcap_run."""
        if stop - start < 54:
            return NOT_TAKEN
        etype, vihl, total, frag, proto, key, seq, ack, doff, flags = _ETH_IPV4_TCP(buf, start)
        if (etype != 0x0800 or vihl != 0x45 or proto != 6 or frag & 0x3FFF or flags & _SLOW_FLAGS
                or ts >= self._next_sweep):
            return NOT_TAKEN
        h = self._v4.get(key)
        if h is None:
            return NOT_TAKEN
        p = start + 34 + ((doff >> 4) << 2)
        end = start + 14 + total
        if not start + 54 <= p <= end <= stop:
            return NOT_TAKEN
        n = end - p
        if n and seq == h.nxt and h.clean:
            peer = h.peer
            if ((ack == peer.nxt or not flags & ACK) and h.ack_hole is None and peer.ack_hole is None
                    and not h.close_due):
                if h.demand[h.direction] > n:
                    # Inside a frame the consumer waits for, acknowledging what the peer sent: hold it.
                    # (h.tail is the last held piece while pieces are held: reassembly reads it there.)
                    h.held.append(buf[p:end])
                    h.last_ts = h.held_ts = ts
                    h.segments += 1
                    h.bytes += n
                    h.nxt = (seq + n) & MASK
                    h.demand[h.direction] -= n
                    return TAKEN_QUIETLY
                sink = h.conn.sink
                if sink is not None and not h.held:
                    # Plain in-order bytes causing no other event: straight to the consumer.
                    h.last_ts = ts
                    h.segments += 1
                    h.bytes += n
                    h.nxt = (seq + n) & MASK
                    h.demand[h.direction] = 0
                    h.tail = payload = buf[p:end]
                    if sink(h.direction, ts, payload):
                        self.taken = []
                        return TAKEN_EVENTS
                    return TAKEN
        events = self._established(h, ts, buf[p:end], seq, ack, flags)
        if events:
            self.taken = events
            return TAKEN_EVENTS
        return TAKEN

    def take_pcap_run(self, buf, pos: int, end: int, layout: RecordLayout) -> tuple[int, int]:
        """take_ethernet's hold (TAKEN_QUIETLY) for the classic pcap records from buf[pos:end] on,
        one after the other in one loop, until a record is not whole in the buffer, is cut or
        damaged, or would not be held (kwire.capture.packet.TakeRun). The reader offers this the
        records after a packet take_ethernet held: in a bulk transfer that is nearly every packet.
        The receiver's pure ACKs in between, acknowledging no more than was sent, are taken too.

        While the records belong to one direction, its state lives in locals: holding a piece
        changes only held, nxt, demand, the counters and the times, and such an ACK only the
        other direction's counter and time; nothing else of either direction can change in
        between, so the other conditions are checked once per switch of direction, and the state
        is written back at the switch and at the end (segments and bytes from how far held and
        nxt moved, the times from the last records)."""
        unpack_lengths, hsize, max_caplen = layout.unpack_lengths, layout.header_size, layout.max_caplen
        v4 = self._v4
        slow_flags = _SLOW_BY_FLAGS
        tcp_data = _TCP_DATA
        next_sweep = self._next_sweep
        sweep_second = next_sweep // 1_000_000_000  # records of earlier seconds come before it
        last_start = end - hsize - 54  # a record starting later cannot hold a whole TCP header
        taken = 0
        h = None
        current = reverse = None  # keys of h and of its peer
        nxt = nxt0 = held0 = want = peer_nxt = acks = 0
        last = last_ack = 0  # where h's last held record and its peer's last ACK start
        append = None
        while pos <= last_start:
            sec, caplen, wirelen = unpack_lengths(buf, pos)
            start = pos + hsize
            stop = start + caplen
            if caplen != wirelen or stop > end or caplen > max_caplen:
                break
            ipv4, total, frag, proto, key, seq, ack, doff, flags = _ETH_IPV4_TCP_RUN(buf, start)
            if (not 0x08004500 <= ipv4 <= 0x080045FF or proto != 6 or (frag and frag != 0x4000)
                    or slow_flags[flags]):
                break
            p = start + tcp_data[doff]
            if key != current:
                if (key == reverse and p == start + 14 + total <= stop and (nxt - ack) & MASK < HALF
                        and (sec < sweep_second or layout.ts_at(buf, pos) < next_sweep)):
                    # the receiver acknowledging what it got (or less): counted, nothing else
                    acks += 1
                    last_ack = pos
                    pos = stop
                    continue
                if h is not None:
                    taken += _run_release(h, nxt0, held0, nxt, want, acks, layout, buf, last, last_ack)
                    h = None
                found = v4.get(key)
                # (close_due is set on both directions at once)
                if (found is None or not found.clean or found.ack_hole is not None or found.close_due
                        or found.peer.ack_hole is not None):
                    break
                h = found
                current = key
                reverse = key[4:8] + key[:4] + key[10:] + key[8:10]
                nxt = nxt0 = h.nxt
                want = h.demand[h.direction]
                peer_nxt = h.peer.nxt
                held0 = len(h.held)
                append = h.held.append
                acks = 0
            n = stop - p  # (only when the frame ends with the IP packet: no Ethernet padding or trailer)
            if not (0 < n < want and total == caplen - 14 and seq == nxt
                    and (ack == peer_nxt or not flags & ACK)):
                break
            if sec >= sweep_second and layout.ts_at(buf, pos) >= next_sweep:
                break
            append(buf[p:stop])
            nxt = seq + n  # past 2**32 the next segment's number differs: the run stops there
            want -= n
            last = pos
            pos = stop
        if h is not None:
            taken += _run_release(h, nxt0, held0, nxt, want, acks, layout, buf, last, last_ack)
        return pos, taken

    def _established(self, h: HalfStream, ts: int, payload, seq: int, ack: int, flags: int) -> list[StreamEvent]:
        """The fast path: a segment of an established direction, no SYN/FIN/RST, whole payload."""
        out: list[StreamEvent] = []
        h.last_ts = ts
        h.segments += 1
        if payload:
            n = len(payload)
            h.bytes += n
            if seq == h.nxt and h.clean:
                h.nxt = (seq + n) & MASK
                h.tail = payload
                if h.demand[h.direction] or h.held:
                    h.hold(payload, ts, out)
                else:
                    out.append(StreamData(h.conn, h.direction, ts, payload))
            else:
                h.receive(seq, payload, ts, out)
        peer = h.peer
        if flags & ACK:
            pn = peer.nxt
            if ack != pn and pn is not None and 0 < ((ack - pn) & MASK) < HALF:
                peer.ack_passed(ack, ts, out)
        if h.ack_hole is not None:
            h.check_ack(ts, out)
        if peer.ack_hole is not None:
            peer.check_ack(ts, out)
        if h.close_due:
            self._check_close(h, ts, out)
        return out

    def _feed_slow(self, seg: Segment, h: HalfStream | None, out: list) -> None:
        flags = seg.flags
        ts = seg.ts_ns
        if h is None:
            h = self._open(seg, out)
            if h is None:
                return
        elif flags & SYN and not flags & RST:
            h = self._syn_on_open(seg, h, out)
        h.last_ts = ts
        h.segments += 1
        payload = seg.payload
        n = len(payload)
        h.bytes += n
        if flags & RST:
            self._close(self._flows[h.conn.id], ts, "rst", out)
            return
        seq = seg.seq
        if flags & SYN:
            seq = (seq + 1) & MASK
        if n:
            h.receive(seq, payload, ts, out, seg.truncated)
        elif seg.truncated:
            h.truncated_segments += 1
        if flags & FIN:
            h.fin((seq + n) & MASK, ts, out)
        if flags & ACK:
            p = h.peer
            pn = p.nxt
            if pn is not None and 0 < ((seg.ack - pn) & MASK) < HALF:
                p.ack_passed(seg.ack, ts, out)
        for half in (h, h.peer):
            if half is not None and half.ack_hole is not None:
                half.check_ack(ts, out)
        if h.close_due:
            self._check_close(h, ts, out)
        elif h.fin_at is not None and h.peer.fin_at is not None:
            if h.fin_reached() and h.peer.fin_reached():
                self._close(self._flows[h.conn.id], ts, "fin", out)
            else:
                # FIN both ways but bytes before a FIN are missing: they may still be captured a
                # little later (capture order is not wire order). Close once they are in, or after
                # ACK_GRACE_SEGMENTS more segments.
                h.close_due = h.peer.close_due = h.segments + h.peer.segments + ACK_GRACE_SEGMENTS

    def _check_close(self, h: HalfStream, ts: int, out: list) -> None:
        if (h.fin_reached() and h.peer.fin_reached()) or h.segments + h.peer.segments >= h.close_due:
            flow = self._flows.get(h.conn.id)
            if flow is not None:
                self._close(flow, ts, "fin", out)

    def _open(self, seg: Segment, out: list) -> HalfStream | None:
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
            return None
        src = (seg.src_ip, seg.src_port)
        dst = (seg.dst_ip, seg.dst_port)
        synack = flags & SYN and flags & ACK
        if synack:  # the SYN was missed: the receiver of the SYN-ACK is the client
            a, b, initiator, direction = dst, src, 0, 1
        else:
            a, b, initiator, direction = src, dst, (0 if flags & SYN else None), 0
        if len(self._flows) >= self.max_connections:
            self._make_room(seg.ts_ns, out)
        flow = self._new_flow(key, a, b, initiator, seg.ts_ns)
        h = flow.halves[direction]
        if flags & SYN:
            h.syn(seg.seq)
            if synack:
                h.peer.begin(seg.ack)
        return h

    def _new_flow(self, key: FlowKey, a, b, initiator, ts: int) -> _Flow:
        conn = Connection(self._next_id, a, b, initiator, ts)
        self._next_id += 1
        h0 = HalfStream(conn, 0, self.max_buffer, ts)
        h1 = HalfStream(conn, 1, self.max_buffer, ts)
        h0.peer = h1
        h1.peer = h0
        fwd = (a[0], a[1], b[0], b[1])
        rev = (b[0], b[1], a[0], a[1])
        flow = _Flow(key, conn, (h0, h1), (fwd, rev))
        self._flows[conn.id] = flow
        self._halves[fwd] = h0
        self._halves[rev] = h1
        if len(a[0]) == 4 and len(b[0]) == 4:
            self._v4[_v4_key(fwd)] = h0
            self._v4[_v4_key(rev)] = h1
        self._table["connections"] += 1
        return flow

    def _syn_on_open(self, seg: Segment, h: HalfStream, out: list) -> HalfStream:
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
        flow = self._flows[h.conn.id]
        self._close(flow, seg.ts_ns, "reused", out)
        return self._open(seg, out)

    # -- closing --------------------------------------------------------------------------------

    def _close(self, flow: _Flow, ts: int, reason: str, out: list) -> None:
        conn = flow.conn
        h0, h1 = flow.halves
        h0.finish(ts, out)
        h1.finish(ts, out)
        totals = self._retired
        counters = conn.counters
        for name in HALF_COUNTERS:
            v = getattr(h0, name) + getattr(h1, name)
            counters[name] = v
            totals[name] += v
        out.append(StreamClosed(conn, ts, reason))
        del self._flows[conn.id]
        fwd, rev = flow.tuples
        self._halves.pop(fwd, None)
        self._halves.pop(rev, None)  # the same tuple when a socket talks to itself
        if len(fwd[0]) == 4 and len(fwd[2]) == 4:
            self._v4.pop(_v4_key(fwd), None)
            self._v4.pop(_v4_key(rev), None)
        self._table["closed_" + reason] += 1
        if reason == "fin" or reason == "rst":
            self._closed[flow.key] = ts

    def _sweep(self, ts: int, out: list) -> None:
        """Evict idle connections and forget old closed 4-tuples."""
        self._next_sweep = ts + self.sweep_interval_ns
        limit = ts - self.idle_timeout_ns
        idle = [flow for flow in self._flows.values() if flow.last_ts() <= limit]
        for flow in idle:
            self._table["evictions"] += 1
            self._close(flow, ts, "idle", out)
        closed = self._closed
        limit = ts - self.linger_ns
        while closed:
            key = next(iter(closed))
            if closed[key] > limit:
                break
            del closed[key]
        while len(closed) > self.max_connections:
            del closed[next(iter(closed))]

    def _make_room(self, ts: int, out: list) -> None:
        self._sweep(ts, out)
        if self._flows and len(self._flows) >= self.max_connections:
            oldest = min(self._flows.values(), key=_Flow.last_ts)
            self._table["evictions"] += 1
            self._close(oldest, ts, "idle", out)

    def flush(self, ts_ns: int) -> list[StreamEvent]:
        """End of capture: remaining holes become gaps, buffered bytes are delivered, and every
        open connection gets StreamClosed(reason="end"). The table is empty afterwards."""
        out: list[StreamEvent] = []
        for flow in list(self._flows.values()):
            self._close(flow, ts_ns, "end", out)
        self._closed.clear()
        return out

    def run(self, segments: Iterable[Segment]) -> Iterator[StreamEvent]:
        """Feed every segment, then flush at the last capture time seen."""
        last = 0
        for seg in segments:
            last = seg.ts_ns
            yield from self.feed(seg)
        yield from self.flush(last)

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

    def latest_ts(self) -> int:
        """The newest capture time any open connection saw (0 when none is open)."""
        return max((flow.last_ts() for flow in self._flows.values()), default=0)

    def __len__(self) -> int:
        return len(self._flows)

    def connections(self) -> list[Connection]:
        """The open connections, oldest first."""
        return [flow.conn for flow in self._flows.values()]
