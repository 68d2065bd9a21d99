"""The fused fast path: capture records straight into TCP, crossing the layers for speed.

This is the one module that reaches across capture, net and tcp, on purpose and behind their
contracts. `RecordFeed` is the RecordSink (kwire.capture.packet) the pipeline gives a capture reader.
For each captured record it does what `decode_record` (kwire.net) and `FlowTable.feed` (kwire.tcp)
would do, in one step where it can:

- `record()`: an untagged Ethernet frame (or a raw IP packet) carrying a whole IPv4 TCP segment
  (kwire.net.layout: the header layout, and plain_ipv4_tcp's test written inline with its names),
  without SYN/FIN/RST, of an established direction (looked up by the header bytes that name it,
  FlowTable.by_header) goes to TCP's `FlowTable.established_at()` without a Packet or a Segment.
  Everything else becomes a Packet and takes the plain path.
- `run()`: after a record TCP held back (the consumer wants more of that direction), a classic pcap
  reader offers the records that follow; one loop holds the in-order segments of that direction and
  counts the receiver's pure ACKs, with the direction's state in local variables, and stops at the
  first record it would not simply hold. It touches TCP's state only through HalfStream.run_from()
  (may it, and from where) and HalfStream.held_run() (what it held and counted).
- `frame_run()`: the same loop over the frames of a live capture's ring block (kwire.capture.ring),
  which differ from pcap records only in where each packet starts and where the next frame is. It
  is a twin of the pcap loop rather than one loop with a per-record branch on the layout: that one
  loop costs the pcap loop 315 more machine instructions per record, 1.3 % of the packet path on a
  bulk transfer (callgrind, the first 20,000 packets of the benchmark's bulk.pcap), and a function
  call per record for the shared part would cost 750. The twins differ only in the lines that read
  a record's header and step to the next one; keep the rest alike.

tests/native/test_fused.py runs every committed capture and random bulk-like captures through this path and
through the plain one (`PlainFeed`) and requires the same exchanges and counters
(tests/native/test_fused_run.py and tests/capture/test_ring_walk.py: the runs, over pcap records and ring
frames).
"""

from __future__ import annotations

from typing import Callable

from kwire.native import c_reads
from kwire.native.record_walk import RecordSink
from kwire.capture.packet import FrameLayout, Packet, RecordLayout
from kwire.net.layout import (ETH_IPV4_TCP_KEYED, ETHERNET_HEADER, FRAGMENTED, IPPROTO_TCP, KEY_AT, KEY_SIZE, MIN_FRAME,
                              MIN_RAW, PLAIN_HEAD_HI, PLAIN_HEAD_LO, RAW_HEAD_HI, RAW_HEAD_LO, RAW_IPV4_TCP_KEYED,
                              SLOW_BY_FLAGS, SLOW_FLAGS, TCP_PAYLOAD_AT, reverse_key)
from kwire.net.segment import ACK
from kwire.native.tcp_flows import FlowTable
from kwire.native.tcp_outoforder import HALF, MASK
from kwire.native.tcp_reassembly import HalfStream

PacketFeed = Callable[[Packet], None]
EmptyFeed = Callable[[int, int, int, int], None]  # ts, link type, wire length, count: empty records alike


def _empty_run(sink, ts: int, linktype: int, wire_len: int, count: int) -> None:
    """Either sink's empty_run: the records' time noted, then `feed_empty` (or each record, without one)."""
    if sink.feed_empty is None:
        RecordSink.empty_run(sink, ts, linktype, wire_len, count)
        return
    if ts > sink.last_ts:
        sink.last_ts = ts
    sink.feed_empty(ts, linktype, wire_len, count)


class PlainFeed(RecordSink):
    """The RecordSink of the plain path: every record becomes a Packet for `feed_packet`; a run of empty
    records goes to `feed_empty(ts, linktype, wire_len, count)` when one is given."""

    __slots__ = ("feed_packet", "feed_empty", "last_ts")

    def __init__(self, feed_packet: PacketFeed, feed_empty: EmptyFeed | None = None):
        self.feed_packet = feed_packet
        self.feed_empty = feed_empty
        self.last_ts = 0  # the latest capture time of a record

    def record(self, ts_ns: int, linktype: int, buf, start: int, stop: int, wire_len: int) -> bool:
        if ts_ns > self.last_ts:
            self.last_ts = ts_ns
        self.feed_packet(Packet(ts_ns, linktype, buf[start:stop], wire_len))
        return False

    def empty_run(self, ts_ns: int, linktype: int, wire_len: int, count: int) -> None:
        _empty_run(self, ts_ns, linktype, wire_len, count)


class RecordFeed(RecordSink):
    """The RecordSink of the fast path (see the module docstring); `feed_packet` takes the rest."""

    __slots__ = ("flows", "feed_packet", "feed_empty", "last_ts")

    def __init__(self, flows: FlowTable, feed_packet: PacketFeed, feed_empty: EmptyFeed | None = None):
        self.flows = flows
        self.feed_packet = feed_packet
        self.feed_empty = feed_empty  # a run of empty records, as PlainFeed's
        self.last_ts = 0  # the latest capture time of a record given to record() (runs: see Pipeline.finish)

    def record(self, ts: int, linktype: int, buf, start: int, stop: int, wire_len: int) -> bool:
        """Take one record; True when it was held inside a frame (a run may follow)."""
        if ts > self.last_ts:
            self.last_ts = ts
        if stop - start == wire_len:
            # kwire.net.layout.plain_ipv4_tcp's test, inline (the same names). A raw IP packet (live capture on
            # every interface) has its fields where an Ethernet frame ETHERNET_HEADER earlier would have them.
            if linktype == 1 and wire_len >= MIN_FRAME:
                frame, head_lo, head_hi = start, PLAIN_HEAD_LO, PLAIN_HEAD_HI
            elif linktype == 101 and wire_len >= MIN_RAW:
                frame, head_lo, head_hi = start - ETHERNET_HEADER, RAW_HEAD_LO, RAW_HEAD_HI
            else:
                frame = head_lo = head_hi = -1
            if head_lo >= 0:
                if type(buf) is bytes or type(buf) is memoryview:  # a file's chunk: native code's reads
                    # (kwire.native.c_reads: compiled, the fields in C into C integers, no tuple; as Python, a struct).
                    # A live capture's ring, an mmap, is not a buffer c_reads reads: the struct below reads it.
                    head, total, frag, proto, seq, ack, doff, flags = c_reads._ipv4_tcp(buf, frame, linktype == 1)
                    key = c_reads._bytes_at(buf, frame + KEY_AT, frame + KEY_AT + KEY_SIZE)
                else:
                    head, total, frag, proto, key, seq, ack, doff, flags = (
                        ETH_IPV4_TCP_KEYED if linktype == 1 else RAW_IPV4_TCP_KEYED)(buf, start)
                if (head_lo <= head <= head_hi and proto == IPPROTO_TCP and not frag & FRAGMENTED
                        and not flags & SLOW_FLAGS):
                    flows = self.flows
                    h = flows.by_header.get(key)
                    if h is not None and ts < flows.next_sweep:
                        p = frame + TCP_PAYLOAD_AT[doff]
                        end = frame + ETHERNET_HEADER + total
                        if frame + MIN_FRAME <= p <= end <= stop:
                            held = flows.established_at(h, ts, buf, p, end, seq, ack, flags)
                            return held and linktype == 1  # a raw packet starts no run: runs read Ethernet frames
        self.feed_packet(Packet(ts, linktype, buf[start:stop], wire_len))
        return False

    def empty_run(self, ts: int, linktype: int, wire_len: int, count: int) -> None:
        """`count` empty records alike (kwire.capture.packet.RecordSink.empty_run): none holds a segment."""
        _empty_run(self, ts, linktype, wire_len, count)

    def run(self, buf, pos: int, end: int, layout: RecordLayout) -> tuple[int, int]:
        """Hold the classic pcap records from buf[pos:end] on (kwire.capture.packet.RecordSink.run)."""
        return _record_run(self.flows, buf, pos, end, layout)

    def frame_run(self, buf, pos: int, end: int, layout: FrameLayout) -> tuple[int, int, int]:
        """Hold the ring frames from buf[pos] on (kwire.capture.packet.RecordSink.frame_run)."""
        return _frame_run(self.flows, buf, pos, end, layout)


def _record_run(flows: FlowTable, buf, pos: int, end: int, layout: RecordLayout) -> tuple[int, int]:
    """The loop of RecordFeed.run: (position after the last record taken, records taken).

    While the records belong to one direction its state lives in locals: holding a piece changes
    only held, nxt, want, the counters and the times, and the receiver's pure ACK only its counter
    and time; nothing else of either direction can change in between (HalfStream.run_from says when),
    so the other conditions are checked once per change of direction, and the state is given back
    (HalfStream.held_run) there and at the end. _frame_run is this loop over ring frames (see the
    module docstring for why it is a twin); keep the two alike."""
    unpack, hsize, max_caplen = layout.unpack_lengths, layout.header_size, layout.max_caplen
    last_start = end - hsize - MIN_FRAME  # a record starting later cannot hold a whole TCP header
    by_header = flows.by_header
    slow_flags = SLOW_BY_FLAGS
    payload_at = TCP_PAYLOAD_AT
    head_lo, head_hi, tcp, fragmented, eth = PLAIN_HEAD_LO, PLAIN_HEAD_HI, IPPROTO_TCP, FRAGMENTED, ETHERNET_HEADER
    next_sweep = flows.next_sweep
    sweep_second = next_sweep // 1_000_000_000  # records of earlier seconds come before it
    taken = 0
    h = None
    current = reverse = None  # header keys of h and of its peer
    nxt = want = peer_nxt = acks = 0
    last = last_ack = 0  # where h's last held record and its peer's last ACK start
    pieces: list = []
    append = pieces.append
    while pos <= last_start:
        sec, caplen, wirelen = unpack(buf, pos)
        start = pos + hsize
        stop = start + caplen
        if caplen != wirelen or stop > end or caplen > max_caplen:
            break
        # kwire.net.layout.plain_ipv4_tcp's test, inline (the same names)
        head, total, frag, proto, key, seq, ack, doff, flags = ETH_IPV4_TCP_KEYED(buf, start)
        if not head_lo <= head <= head_hi or proto != tcp or frag & fragmented or slow_flags[flags]:
            break
        p = start + payload_at[doff]
        if key != current:
            if (key == reverse and p == start + eth + total <= stop and (nxt - ack) & MASK < HALF
                    and (sec < sweep_second or layout.ts_at(buf, pos) < next_sweep)):
                acks += 1  # the receiver acknowledging what it got (or less): counted, nothing else
                last_ack = pos
                pos = stop
                continue
            if h is not None:
                taken += _give_back(h, pieces, nxt, want, acks, layout, buf, last, last_ack)
                h = None
                pieces = []
                append = pieces.append
            found = by_header.get(key)
            state = found.run_from() if found is not None else None
            if state is None:
                break
            h = found
            current = key
            reverse = reverse_key(key)
            nxt, want, peer_nxt = state
            acks = 0
        n = stop - p  # (only when the frame ends with the IP packet: no Ethernet padding or trailer)
        if not (0 < n < want and total == caplen - eth and seq == nxt
                and (ack == peer_nxt or not flags & ACK or peer_nxt is None or (ack - peer_nxt) & MASK >= HALF)):
            break  # (an ACK of nothing the peer has not sent changes nothing: FlowTable.established_at)
        if sec >= sweep_second and layout.ts_at(buf, pos) >= next_sweep:
            break
        append(buf[p:stop])
        nxt = seq + n  # past 2**32 the next segment's number differs: the run stops there
        want -= n
        last = pos
        pos = stop
    if h is not None:
        taken += _give_back(h, pieces, nxt, want, acks, layout, buf, last, last_ack)
    return pos, taken


def _frame_run(flows: FlowTable, buf, pos: int, end: int, layout: FrameLayout) -> tuple[int, int, int]:
    """_record_run's loop over ring frames: (where the first frame not taken starts, or `end`; frames
    taken; their bytes). Each frame says where its packet starts and where the next frame is; a frame
    whose status needs the walker (a VLAN tag the kernel took out) ends the run."""
    unpack, stop_status = layout.unpack, layout.stop_status
    by_header = flows.by_header
    slow_flags = SLOW_BY_FLAGS
    payload_at = TCP_PAYLOAD_AT
    head_lo, head_hi, tcp, fragmented, eth = PLAIN_HEAD_LO, PLAIN_HEAD_HI, IPPROTO_TCP, FRAGMENTED, ETHERNET_HEADER
    next_sweep = flows.next_sweep
    sweep_second = next_sweep // 1_000_000_000  # records of earlier seconds come before it
    taken = nbytes = 0
    h = None
    current = reverse = None  # header keys of h and of its peer
    nxt = want = peer_nxt = acks = 0
    last = last_ack = 0  # where h's last held record and its peer's last ACK start
    pieces: list = []
    append = pieces.append
    while pos < end:
        step, sec, caplen, wirelen, status, mac = unpack(buf, pos)
        start = pos + mac
        stop = start + caplen
        if caplen != wirelen or status & stop_status or stop > end or caplen < MIN_FRAME:
            break
        following = pos + step if step else end
        # kwire.net.layout.plain_ipv4_tcp's test, inline (the same names)
        head, total, frag, proto, key, seq, ack, doff, flags = ETH_IPV4_TCP_KEYED(buf, start)
        if not head_lo <= head <= head_hi or proto != tcp or frag & fragmented or slow_flags[flags]:
            break
        p = start + payload_at[doff]
        if key != current:
            if (key == reverse and p == start + eth + total <= stop and (nxt - ack) & MASK < HALF
                    and (sec < sweep_second or layout.ts_at(buf, pos) < next_sweep)):
                acks += 1  # the receiver acknowledging what it got (or less): counted, nothing else
                last_ack = pos
                nbytes += caplen
                pos = following
                continue
            if h is not None:
                taken += _give_back(h, pieces, nxt, want, acks, layout, buf, last, last_ack)
                h = None
                pieces = []
                append = pieces.append
            found = by_header.get(key)
            state = found.run_from() if found is not None else None
            if state is None:
                break
            h = found
            current = key
            reverse = reverse_key(key)
            nxt, want, peer_nxt = state
            acks = 0
        n = stop - p  # (only when the frame ends with the IP packet: no Ethernet padding or trailer)
        if not (0 < n < want and total == caplen - eth and seq == nxt
                and (ack == peer_nxt or not flags & ACK or peer_nxt is None or (ack - peer_nxt) & MASK >= HALF)):
            break  # (an ACK of nothing the peer has not sent changes nothing: FlowTable.established_at)
        if sec >= sweep_second and layout.ts_at(buf, pos) >= next_sweep:
            break
        append(buf[p:stop])
        nxt = seq + n  # past 2**32 the next segment's number differs: the run stops there
        want -= n
        last = pos
        nbytes += caplen
        pos = following
    if h is not None:
        taken += _give_back(h, pieces, nxt, want, acks, layout, buf, last, last_ack)
    return pos, taken, nbytes


def _give_back(h: HalfStream, pieces: list, nxt: int, want: int, acks: int, layout, buf, last: int,
               last_ack: int) -> int:
    """What the loop held for `h` and counted for its peer, given back (HalfStream.held_run); the
    number of records that was."""
    h.held_run(pieces, nxt, want, layout.ts_at(buf, last) if pieces else 0, acks,
               layout.ts_at(buf, last_ack) if acks else 0)
    return len(pieces) + acks
