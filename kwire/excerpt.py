"""`kwire inspect -w FILE`: the packets of the selected exchanges, cut out of the captures.

The first pass (the normal run, with `track_spans`) notes, for each exchange kept, where its request
and response frames lie in their connection's two byte streams (Exchange.wire). `Excerpt` gathers
those ranges per connection (`add`), then `write(paths, out)` reads the captures again and writes, for
every kept connection:
- its handshake: the captured SYN, SYN-ACK and ACK, or, when the capture began after it, made ones
  just before its first kept packet (so a reader knows at once who is the client);
- each piece of a captured segment that lies in a kept range, as one packet with the payload bytes and
  the capture time of that segment, its sequence and acknowledgement numbers renumbered so that the
  kept bytes of each direction follow one another from the handshake (no holes, so Wireshark shows a
  clean connection and kwire finds exactly the selected exchanges);
- its FIN or RST, renumbered likewise.
Pure ACKs and the bytes of every other exchange are left out. Packets are raw IP (pcap LINKTYPE_RAW),
checksums recomputed. A connection whose kept ranges do not start with the frames' lengths in the
captured payload cannot be cut: it is left out and named in `skipped`.

Kafka over TLS (decrypted with `--keylog`): the frames lie in the decrypted bytes, and a TLS record
cannot be read without every record before it (the sequence number is in its nonce), so a
connection whose first payload is a TLS handshake record is written whole from its start up to the
segment that completed the last kept exchange (its records, and those before them: the key log
decrypts the excerpt as it decrypted the capture), sequence numbers as captured.
"""

from __future__ import annotations

import ipaddress
from bisect import bisect_left, bisect_right

from kwire.capture.files import read_captures
from kwire.capture.packet import LINKTYPE_RAW
from kwire.capture.pcapwrite import PcapWriter
from kwire.model import Exchange
from kwire.net.build import tcp_packet
from kwire.native.net_decode import decode_segment
from kwire.net.segment import ACK, FIN, RST, SYN, Segment

MASK = 0xFFFFFFFF
SLACK = 1 << 24  # bytes past a connection's last kept byte still taken as its own (not a reuse)


def _endpoint(text: str) -> tuple[bytes, int]:
    host, port = text.rsplit(":", 1)
    return ipaddress.ip_address(host.strip("[]")).packed, int(port)


class _Direction:
    """The kept ranges of one direction, and the renumbering of its bytes."""

    def __init__(self, start: int | None):
        self.start = start
        self.ranges: list[tuple[int, int]] = []
        self.starts: list[int] = []
        self.before: list[int] = []  # kept bytes before each merged range

    def finish(self) -> None:
        merged: list[list[int]] = []
        for a, b in sorted(self.ranges):
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        self.ranges = [(a, b) for a, b in merged]
        self.starts = [a for a, _ in self.ranges]
        total = 0
        for a, b in self.ranges:
            self.before.append(total)
            total += b - a

    @property
    def kept(self) -> int:
        return self.before[-1] + self.ranges[-1][1] - self.ranges[-1][0] if self.ranges else 0

    def renumbered(self, offset: int) -> int:
        """Kept bytes of this direction before stream offset `offset`."""
        i = bisect_right(self.starts, offset) - 1
        if i < 0:
            return 0
        a, b = self.ranges[i]
        return self.before[i] + min(offset, b) - a

    def starts_at(self, offset: int) -> bool:
        """Does a kept range start at `offset`? (a bisection: O(log ranges), not a scan)"""
        i = bisect_left(self.starts, offset)
        return i < len(self.starts) and self.starts[i] == offset

    def pieces(self, offset: int, n: int):
        """(start, end) offsets of the kept parts of [offset, offset + n)."""
        i = max(bisect_right(self.starts, offset) - 1, 0)
        ranges = self.ranges
        for k in range(i, len(ranges)):  # from the range found on: no copy of the rest of the list
            a, b = ranges[k]
            if a >= offset + n:
                break
            lo, hi = max(a, offset), min(b, offset + n)
            if lo < hi:
                yield lo, hi


class _Connection:
    def __init__(self, client, broker, client_start, broker_start):
        self.client, self.broker = client, broker
        self.sides = {client: _Direction(client_start), broker: _Direction(broker_start)}
        self.handshake: list[Segment] = []
        self.first_ts: int | None = None
        self.unverified = True  # a kept range's first bytes not checked against the payload yet
        self.bad = False
        self.tls: bool | None = None  # its first payload is a TLS handshake record (None: not seen yet)
        self.cutoff = -1  # TLS: the capture time of the last kept exchange's last segment

    def owns(self, seg: Segment) -> bool:
        """Is this segment of this connection (not of another that reused the 4-tuple)? Its sequence
        number lies within the direction's bytes seen in the first pass (or it is their SYN)."""
        side = self.sides[(seg.src_ip, seg.src_port)]
        if side.start is None:
            return True
        if seg.flags & SYN:
            return (seg.seq + 1) & MASK == side.start
        last = side.ranges[-1][1] if side.ranges else 0
        return (seg.seq - side.start) & MASK <= last + SLACK


class Excerpt:
    def __init__(self) -> None:
        self.connections: dict[tuple, list[_Connection]] = {}
        self._by_start: dict[tuple, _Connection] = {}
        self.uncut = 0  # selected exchanges whose place on the wire is not known
        self.skipped: list[str] = []  # connections that could not be cut (and why)
        self.packets = 0

    def add(self, ex: Exchange) -> None:
        """A selected exchange (from a run with track_spans)."""
        if ex.wire is None or ex.wire[2] is None and ex.wire[3] is None:
            self.uncut += 1
            return
        client, broker = _endpoint(ex.client), _endpoint(ex.broker)
        client_start, broker_start, request, response = ex.wire
        found = self._connection(client, broker, client_start, broker_start)
        found.cutoff = max(found.cutoff, ex.response_ts_ns or ex.request_ts_ns or 0)
        if request is not None:
            found.sides[client].ranges.append(request)
        if response is not None:
            found.sides[broker].ranges.append(response)

    def _connection(self, client, broker, client_start, broker_start) -> _Connection:
        key = (client, broker, client_start, broker_start)
        conn = self._by_start.get(key)  # one lookup per exchange, not a scan of the 4-tuple's connections
        if conn is None:
            conn = self._by_start[key] = _Connection(client, broker, client_start, broker_start)
            self.connections.setdefault((client, broker), []).append(conn)
        return conn

    def write(self, paths, out: str) -> int:
        """Read the captures again and write the excerpt to `out`; returns the packets written."""
        for conns in self.connections.values():
            for conn in conns:
                for side in conn.sides.values():
                    side.finish()
        with PcapWriter(out, LINKTYPE_RAW) as writer:
            for packet in read_captures(paths):
                seg = decode_segment(packet)
                if seg is not None:
                    self._segment(seg, writer)
        for conns in self.connections.values():
            for conn in conns:
                if conn.bad:
                    self.skipped.append(f"{_name(conn.client)} -> {_name(conn.broker)}: its frames are not "
                                        "in the captured bytes (TLS?), not written")
        self.packets = writer.records
        return writer.records

    def _find(self, seg: Segment) -> _Connection | None:
        key = ((seg.src_ip, seg.src_port), (seg.dst_ip, seg.dst_port))
        conns = self.connections.get(key) or self.connections.get((key[1], key[0]))
        for conn in conns or ():
            if conn.owns(seg):
                return conn
        return None

    def _segment(self, seg: Segment, writer: PcapWriter) -> None:
        conn = self._find(seg)
        if conn is None or conn.bad:
            return
        src = (seg.src_ip, seg.src_port)
        side = conn.sides[src]
        other = conn.sides[conn.broker if src == conn.client else conn.client]
        if seg.flags & SYN:
            conn.handshake.append(seg)
            self._emit(writer, seg, seg.seq, seg.ack, seg.flags, b"")
            return
        if side.start is None:
            return
        if conn.tls is None and len(seg.payload) >= 3:
            conn.tls = _tls_handshake(seg.payload)
        if conn.tls:
            if seg.ts_ns <= conn.cutoff and (len(seg.payload) or seg.flags & (FIN | RST)):
                self._opening(conn, seg, writer)
                self._emit(writer, seg, seg.seq, seg.ack, seg.flags, bytes(seg.payload))
            return
        offset = (seg.seq - side.start) & MASK
        ack = other.start + other.renumbered((seg.ack - other.start) & MASK) if other.start is not None else seg.ack
        if seg.flags & (FIN | RST):
            self._opening(conn, seg, writer)
            self._emit(writer, seg, side.start + side.renumbered(offset), ack, seg.flags, b"")
            return
        for lo, hi in side.pieces(offset, len(seg.payload)):
            if side.starts_at(lo) and not _frame_starts(seg.payload, lo - offset, hi - lo, side, lo):
                conn.bad = True
                return
            self._opening(conn, seg, writer)
            self._emit(writer, seg, side.start + side.renumbered(lo), ack, seg.flags | ACK,
                       bytes(seg.payload[lo - offset:hi - offset]))

    def _opening(self, conn: _Connection, seg: Segment, writer: PcapWriter) -> None:
        """Before a connection's first kept packet: the handshake, made up when none was captured."""
        if conn.first_ts is not None:
            return
        conn.first_ts = seg.ts_ns
        if conn.handshake:
            return
        c, b = conn.client, conn.broker
        cs, bs = conn.sides[c].start or 1, conn.sides[b].start or 1
        for i, (src, dst, seq, ack, flags) in enumerate(((c, b, cs - 1, 0, SYN), (b, c, bs - 1, cs, SYN | ACK),
                                                         (c, b, cs, bs, ACK))):
            writer.write_packet(seg.ts_ns - 3 + i, tcp_packet(src[0], dst[0], src[1], dst[1], seq, ack, flags))

    def _emit(self, writer: PcapWriter, seg: Segment, seq: int, ack: int, flags: int, payload: bytes) -> None:
        writer.write_packet(seg.ts_ns, tcp_packet(seg.src_ip, seg.dst_ip, seg.src_port, seg.dst_port, seq, ack,
                                                  flags, payload))


def _tls_handshake(payload) -> bool:
    """Does a connection's first payload start a TLS handshake record (0x16, version 3.x)?"""
    return payload[0] == 22 and payload[1] == 3 and payload[2] <= 4


def _frame_starts(payload, at: int, n: int, side: _Direction, offset: int) -> bool:
    """Does the kept range starting at stream offset `offset` start with its frame's length here?"""
    i = bisect_right(side.starts, offset) - 1
    a, b = side.ranges[i]
    if n < 4:
        return True  # the length is cut by the segment's end: nothing to compare here
    length = int.from_bytes(bytes(payload[at:at + 4]), "big", signed=True)
    return 0 <= length <= b - a - 4


def _name(endpoint) -> str:
    from kwire.net.segment import format_endpoint

    return format_endpoint(*endpoint)
