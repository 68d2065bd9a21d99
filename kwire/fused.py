"""The fused fast path: capture records straight into TCP, crossing the layers for speed.

This is the one module that reaches across capture, net and tcp, on purpose and behind their
contracts. `RecordFeed` is the RecordSink (kwire.capture.packet) the pipeline gives a capture reader.
For each captured record it does what `decode_record` (kwire.net) and `FlowTable.feed` (kwire.tcp)
would do, in one step where it can:

- `record()`: an untagged Ethernet frame (or a raw IP packet) carrying a whole IPv4 TCP segment,
  without SYN/FIN/RST, of an established direction (looked up by the header bytes that name it, kwire.net.layout) goes to
  TCP's `established()` without a Packet or a Segment; an in-order segment of a clean direction is
  handed to the consumer, or held (the consumer wants more of this direction), right here.
  Everything else becomes a Packet and takes the plain path.
- `run()`: after a record it held, a classic pcap reader offers the records that follow; one loop
  holds the in-order segments of that direction and counts the receiver's pure ACKs, with the
  direction's state in local variables (written back through HalfStream.held_run and counted()),
  and stops at the first record it would not simply hold.
- `frame_run()`: the same loop over the frames of a live capture's ring block (kwire.capture.ring),
  which differ from pcap records only in where each packet starts and where the next frame is. It
  is a loop of its own rather than a parameter of `run()`'s: a per-record step parameter costs the
  pcap loop 1 % more machine instructions on bulk transfers (measured with cachegrind).

What it writes of a HalfStream is exactly what HalfStream.hold() and FlowTable.established() would;
tests/test_fused.py runs every committed capture and random bulk-like captures through this path and
through the plain one (`PlainFeed`) and requires the same exchanges and counters
(tests/test_fused_run.py and tests/capture/test_ring_walk.py: the runs, over pcap records and ring
frames).
"""

from __future__ import annotations

from typing import Callable

from kwire.capture.packet import FrameLayout, Packet, RecordLayout
from kwire.net.layout import (ETH_IPV4_TCP_KEYED, ETH_IPV4_TCP_RUN, MIN_FRAME, MIN_RAW, RAW_IPV4_TCP_KEYED,
                              SLOW_BY_FLAGS, SLOW_FLAGS, TCP_PAYLOAD_AT, reverse_key)
from kwire.net.segment import ACK
from kwire.tcp.flows import FlowTable
from kwire.tcp.outoforder import HALF, MASK
from kwire.tcp.reassembly import HalfStream

PacketFeed = Callable[[Packet], None]


class PlainFeed:
    """The RecordSink of the plain path: every record becomes a Packet for `feed_packet`."""

    __slots__ = ("feed_packet", "last_ts")

    def __init__(self, feed_packet: PacketFeed):
        self.feed_packet = feed_packet
        self.last_ts = 0  # the latest capture time of a record

    def record(self, ts_ns: int, linktype: int, buf, start: int, stop: int, wire_len: int) -> bool:
        if ts_ns > self.last_ts:
            self.last_ts = ts_ns
        self.feed_packet(Packet(ts_ns, linktype, buf[start:stop], wire_len))
        return False

    def run(self, buf, pos: int, end: int, layout: RecordLayout) -> tuple[int, int]:
        return pos, 0

    def frame_run(self, buf, pos: int, end: int, layout: FrameLayout) -> tuple[int, int, int]:
        return pos, 0, 0


class RecordFeed:
    """The RecordSink of the fast path (see the module docstring); `feed_packet` takes the rest."""

    __slots__ = ("flows", "feed_packet", "last_ts")

    def __init__(self, flows: FlowTable, feed_packet: PacketFeed):
        self.flows = flows
        self.feed_packet = feed_packet
        self.last_ts = 0  # the latest capture time of a record given to record() (runs: see Pipeline.finish)

    def record(self, ts: int, linktype: int, buf, start: int, stop: int, wire_len: int) -> bool:
        """Take one record; True when it was held inside a frame (a run may follow)."""
        if ts > self.last_ts:
            self.last_ts = ts
        if linktype == 1 and stop - start == wire_len and stop - start >= MIN_FRAME:
            etype, vihl, total, frag, proto, key, seq, ack, doff, flags = ETH_IPV4_TCP_KEYED(buf, start)
            flows = self.flows
            if (etype == 0x0800 and vihl == 0x45 and proto == 6 and not frag & 0x3FFF
                    and not flags & SLOW_FLAGS and ts < flows.next_sweep):
                h = flows.by_header.get(key)
                p = start + TCP_PAYLOAD_AT[doff]
                end = start + 14 + total
                if h is not None and start + MIN_FRAME <= p <= end <= stop:
                    return _established(flows, h, ts, buf, p, end, seq, ack, flags)
        elif linktype == 101 and stop - start == wire_len and stop - start >= MIN_RAW:
            vihl, total, frag, proto, key, seq, ack, doff, flags = RAW_IPV4_TCP_KEYED(buf, start)
            flows = self.flows
            if (vihl == 0x45 and proto == 6 and not frag & 0x3FFF and not flags & SLOW_FLAGS
                    and ts < flows.next_sweep):
                h = flows.by_header.get(key)
                p = start + TCP_PAYLOAD_AT[doff] - 14
                end = start + total
                if h is not None and start + MIN_RAW <= p <= end <= stop:
                    _established(flows, h, ts, buf, p, end, seq, ack, flags)
                    return False  # no run: the run loop reads Ethernet frames
        self.feed_packet(Packet(ts, linktype, buf[start:stop], wire_len))
        return False

    def run(self, buf, pos: int, end: int, layout: RecordLayout) -> tuple[int, int]:
        """Hold the classic pcap records from buf[pos:end] on (kwire.capture.packet.RecordSink.run)."""
        return _run(self.flows, buf, pos, end, layout)

    def frame_run(self, buf, pos: int, end: int, layout: FrameLayout) -> tuple[int, int, int]:
        """Hold the ring frames from buf[pos] on (kwire.capture.packet.RecordSink.frame_run)."""
        return _frame_run(self.flows, buf, pos, end, layout)


def _established(flows: FlowTable, h: HalfStream, ts: int, buf, p: int, end: int, seq: int, ack: int,
                 flags: int) -> bool:
    """FlowTable.established for the segment buf[p:end], the in-order cases inline. True: held."""
    n = end - p
    if n and seq == h.nxt and h.clean:
        peer = h.peer
        if ((ack == peer.nxt or not flags & ACK) and h.ack_hole is None and peer.ack_hole is None
                and not h.close_due):
            want = h.want
            if want > n:
                # Inside a frame the consumer waits for, acknowledging what the peer sent: hold it.
                h.held.append(buf[p:end])
                h.last_ts = h.held_ts = ts
                h.segments += 1
                h.bytes += n
                h.nxt = (seq + n) & MASK
                h.want = want - n
                return True
            stream = h.stream
            if stream is not None and not h.held:
                # Plain in-order bytes that acknowledge nothing new: straight to the consumer.
                h.last_ts = ts
                h.segments += 1
                h.bytes += n
                h.nxt = (seq + n) & MASK
                h.tail = payload = buf[p:end]
                h.want = stream.data(h.direction, ts, payload)
                return False
    flows.established(h, ts, buf[p:end], seq, ack, flags)
    return False


def _run(flows: FlowTable, buf, pos: int, end: int, layout: RecordLayout) -> tuple[int, int]:
    """The loop of RecordFeed.run: (position after the last record taken, records taken).

    While the records belong to one direction its state lives in locals: holding a piece changes
    only held, nxt, want, the counters and the times, and the receiver's pure ACK only its counter
    and time; nothing else of either direction can change in between, so the other conditions are
    checked once per change of direction, and the state is written back there and at the end."""
    unpack_lengths, hsize, max_caplen = layout.unpack_lengths, layout.header_size, layout.max_caplen
    by_header = flows.by_header
    slow_flags = SLOW_BY_FLAGS
    payload_at = TCP_PAYLOAD_AT
    next_sweep = flows.next_sweep
    sweep_second = next_sweep // 1_000_000_000  # records of earlier seconds come before it
    last_start = end - hsize - MIN_FRAME  # a record starting later cannot hold a whole TCP header
    taken = 0
    h = None
    current = reverse = None  # header keys of h and of its peer
    nxt = held0 = want = peer_nxt = acks = 0
    last = last_ack = 0  # where h's last held record and its peer's last ACK start
    append = None
    while pos <= last_start:
        sec, caplen, wirelen = unpack_lengths(buf, pos)
        start = pos + hsize
        stop = start + caplen
        if caplen != wirelen or stop > end or caplen > max_caplen:
            break
        ipv4, total, frag, proto, key, seq, ack, doff, flags = ETH_IPV4_TCP_RUN(buf, start)
        if not 0x08004500 <= ipv4 <= 0x080045FF or proto != 6 or (frag and frag != 0x4000) or slow_flags[flags]:
            break
        p = start + payload_at[doff]
        if key != current:
            if (key == reverse and p == start + 14 + total <= stop and (nxt - ack) & MASK < HALF
                    and (sec < sweep_second or layout.ts_at(buf, pos) < next_sweep)):
                acks += 1  # the receiver acknowledging what it got (or less): counted, nothing else
                last_ack = pos
                pos = stop
                continue
            if h is not None:
                taken += _release(h, held0, nxt, want, acks, layout, buf, last, last_ack)
                h = None
            found = by_header.get(key)
            if found is None or not _holdable(found):
                break
            h = found
            current = key
            reverse = reverse_key(key)
            nxt, want, peer_nxt, held0 = h.nxt, h.want, h.peer.nxt, len(h.held)
            append = h.held.append
            acks = 0
        n = stop - p  # (only when the frame ends with the IP packet: no Ethernet padding or trailer)
        if not (0 < n < want and total == caplen - 14 and seq == nxt and (ack == peer_nxt or not flags & ACK)):
            break
        if sec >= sweep_second and layout.ts_at(buf, pos) >= next_sweep:
            break
        append(buf[p:stop])
        nxt = seq + n  # past 2**32 the next segment's number differs: the run stops there
        want -= n
        last = pos
        pos = stop
    if h is not None:
        taken += _release(h, held0, nxt, want, acks, layout, buf, last, last_ack)
    return pos, taken


def _frame_run(flows: FlowTable, buf, pos: int, end: int, layout: FrameLayout) -> tuple[int, int, int]:
    """_run's loop over ring frames: (where the first frame not taken starts, or `end`; frames taken;
    their bytes). Each frame says where its packet starts and where the next frame is; a frame
    whose status needs the walker (a VLAN tag the kernel took out) ends the run."""
    unpack, stop_status = layout.unpack, layout.stop_status
    by_header = flows.by_header
    slow_flags = SLOW_BY_FLAGS
    payload_at = TCP_PAYLOAD_AT
    next_sweep = flows.next_sweep
    sweep_second = next_sweep // 1_000_000_000
    taken = nbytes = 0
    h = None
    current = reverse = None
    nxt = held0 = want = peer_nxt = acks = 0
    last = last_ack = 0
    append = None
    while pos < end:
        step, sec, caplen, wirelen, status, mac = unpack(buf, pos)
        start = pos + mac
        stop = start + caplen
        if caplen != wirelen or status & stop_status or stop > end or caplen < MIN_FRAME:
            break
        ipv4, total, frag, proto, key, seq, ack, doff, flags = ETH_IPV4_TCP_RUN(buf, start)
        if not 0x08004500 <= ipv4 <= 0x080045FF or proto != 6 or (frag and frag != 0x4000) or slow_flags[flags]:
            break
        p = start + payload_at[doff]
        following = pos + step if step else end
        if key != current:
            if (key == reverse and p == start + 14 + total <= stop and (nxt - ack) & MASK < HALF
                    and (sec < sweep_second or layout.ts_at(buf, pos) < next_sweep)):
                acks += 1
                last_ack = pos
                nbytes += caplen
                pos = following
                continue
            if h is not None:
                taken += _release(h, held0, nxt, want, acks, layout, buf, last, last_ack)
                h = None
            found = by_header.get(key)
            if found is None or not _holdable(found):
                break
            h = found
            current = key
            reverse = reverse_key(key)
            nxt, want, peer_nxt, held0 = h.nxt, h.want, h.peer.nxt, len(h.held)
            append = h.held.append
            acks = 0
        n = stop - p
        if not (0 < n < want and total == caplen - 14 and seq == nxt and (ack == peer_nxt or not flags & ACK)):
            break
        if sec >= sweep_second and layout.ts_at(buf, pos) >= next_sweep:
            break
        append(buf[p:stop])
        nxt = seq + n
        want -= n
        last = pos
        nbytes += caplen
        pos = following
    if h is not None:
        taken += _release(h, held0, nxt, want, acks, layout, buf, last, last_ack)
    return pos, taken, nbytes


def _holdable(h: HalfStream) -> bool:
    """Can the run hold this direction's in-order segments with nothing else to check? (close_due is
    set on both directions at once.)"""
    return h.clean and h.ack_hole is None and not h.close_due and h.peer.ack_hole is None


def _release(h: HalfStream, held0: int, nxt: int, want: int, acks: int, layout, buf,
             last: int, last_ack: int) -> int:
    """Write back what _run did for `h` (which held held0 pieces when the run came to it) and for its
    peer, which sent `acks` pure ACKs meanwhile. Returns the number of records taken."""
    pieces = len(h.held) - held0
    if pieces:
        h.held_run(pieces, nxt, want, layout.ts_at(buf, last))
    if acks:
        h.peer.counted(acks, layout.ts_at(buf, last_ack))
    return pieces + acks
