"""Linux live capture through a TPACKET_V3 ring: blocks of packets, no system call per packet.

Owns one AF_PACKET socket, its memory-mapped receive ring, and the walk of the blocks the kernel
hands over. `RingCapture(iface, expression)`: `open()` fails fast with one CaptureError (no
permission, unknown interface, a filter libpcap rejects, a ring the kernel cannot allocate);
`feed(sink)` hands every packet to a kwire.capture.packet.RecordSink and yields after each block (and
every `idle_s` without one); `ready()` tells whether the next block is handed over; `read_drops()`
adds the kernel's drop count to `stats`; `close()`.

The ring: `ring_bytes` of memory in blocks of `block_size`, filled by the kernel with frames (a
tpacket3_hdr: offset of the next frame, seconds, nanoseconds, captured and wire length, status,
where the packet starts; then the packet). A block is handed over when it is full or `retire_ms`
after its first packet; kwire walks it, gives it back (its status word), and reads the next. The
kernel counts what it drops when every block is taken (PACKET_STATISTICS). Timestamps are the
kernel's, in nanoseconds. The filter (kwire.capture.bpf) runs in the kernel before anything is
copied into the ring, and is attached before the socket receives anything.

Walking a block (`walk_block`): each frame goes to `sink.record(ts_ns, linktype, ring, start, stop,
wire_len)` straight from the ring; when the sink held it, the frames that follow are offered at once
(`sink.frame_run` with FRAMES, kwire.native.fused's loop over ring frames). A frame whose VLAN tag the
kernel took out (TP_STATUS_VLAN_VALID) gets it back before the sink sees it, as libpcap does.

Link types, chosen per socket: a named interface with an Ethernet header (Ethernet, veth, bridge,
loopback) is read with SOCK_RAW: packets are LINKTYPE_ETHERNET as on the wire, and kwire's
Ethernet fast paths apply. Every interface at once (no name), and interfaces without an Ethernet
header (tun, wireguard, ipip), are read with SOCK_DGRAM: the kernel strips the link header and the
packets are LINKTYPE_RAW (IPv4 or IPv6), one link type for every interface, as libpcap's cooked
"any" is; those take kwire's plain path.
"""

from __future__ import annotations

import errno
import mmap
import select
import socket
import struct
from dataclasses import dataclass
from typing import Iterator

from kwire.capture.bpf import (ARPHRD_LOOPBACK, attach_filter, check_interface, compile_filter,
                               kernel_prologue, permission_message)
from kwire.capture.packet import LINKTYPE_ETHERNET, LINKTYPE_RAW, FrameLayout, RecordSink
from kwire.errors import CaptureError

SOL_PACKET = 263
PACKET_RX_RING = 5
PACKET_STATISTICS = 6
PACKET_VERSION = 10
TPACKET_V3 = 2
ETH_P_ALL = 0x0003
ARPHRD_ETHER = 1
ETHERNET_HATYPES = frozenset({ARPHRD_ETHER, ARPHRD_LOOPBACK})
TP_STATUS_KERNEL = 0
TP_STATUS_USER = 1
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
NS = 1_000_000_000

RING_BYTES = 64 << 20   # memory of the ring: seconds of traffic at tens of thousands of packets/s
BLOCK_SIZE = 1 << 20    # a block holds the largest packet (64 KiB loopback segments) many times over
RETIRE_MS = 10          # a block with packets is handed over at most this long after its first one
FRAME_SIZE = 2048       # the kernel's bookkeeping unit for tp_frame_nr (frames vary in V3)
IDLE_S = 0.05           # feed() yields this often when no block comes

_REQ3 = struct.Struct("7I")          # tpacket_req3
_STATS3 = struct.Struct("III")       # tpacket_stats_v3: packets, drops, freeze count (reading resets)
_STATUS = struct.Struct("=I")        # block_status, at 8 in tpacket_block_desc
_BLOCK = struct.Struct("=12xIII16xII")  # num_pkts, offset_to_first_pkt, blk_len; ts_last_pkt (s, ns)
_FRAME = struct.Struct("=IIIIIIH")  # tp_next_offset, tp_sec, tp_nsec, tp_snaplen, tp_len, tp_status, tp_mac
_VLAN = struct.Struct("=IH")         # tp_vlan_tci, tp_vlan_tpid (at 32)
_TAG = struct.Struct(">HH")

# Ring frames for kwire.native.fused's frame loop: (next, seconds, captured, wire, status, data offset).
FRAMES = FrameLayout(struct.Struct("=II4xIIIH").unpack_from, struct.Struct("=4xII").unpack_from,
                     TP_STATUS_VLAN_VALID)


@dataclass(slots=True)
class RingStats:
    """Counters of one ring capture (written by the thread that feeds, read by anyone)."""

    packets: int = 0        # packets walked
    bytes: int = 0          # their length on the wire
    truncated: int = 0      # packets longer than the snap length, cut
    kernel_drops: int = 0   # packets the kernel dropped because every block was taken
    blocks: int = 0         # blocks walked
    block_packets: int = 0  # packets of the last block walked
    block_ts_ns: int = 0    # capture time of that block's last packet


def interface_type(iface: str) -> int:
    """The ARPHRD_* type of `iface` (CaptureError: no permission, no such interface)."""
    try:
        probe = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)  # protocol 0: receives nothing
    except PermissionError:
        raise CaptureError(permission_message(iface)) from None
    except OSError as exc:
        raise CaptureError(f"cannot open a capture socket: {exc.strerror or exc}") from None
    with probe:
        try:
            probe.bind((iface, 0))
        except OSError as exc:
            if exc.errno in (errno.ENODEV, errno.ENXIO):
                raise CaptureError(f"no interface named {iface!r}") from None
            raise CaptureError(f"cannot capture on {iface}: {exc.strerror or exc}") from None
        return probe.getsockname()[3]


class RingCapture:
    """Sniff `iface` (None: every interface) through the BPF `expression`; see the module docstring."""

    def __init__(self, iface: str | None, expression: str = "tcp", *, ring_bytes: int = RING_BYTES,
                 block_size: int = BLOCK_SIZE, retire_ms: int = RETIRE_MS):
        self.iface = None if iface in (None, "", "any") else iface
        self.expression = expression
        self.block_size = max(mmap.PAGESIZE, block_size // mmap.PAGESIZE * mmap.PAGESIZE)
        self.blocks = max(2, ring_bytes // self.block_size)
        self.retire_ms = max(1, int(retire_ms))
        self.linktype = LINKTYPE_ETHERNET
        self.stats = RingStats()
        self._sock: socket.socket | None = None
        self._ring: mmap.mmap | None = None
        self._next = 0  # the block to read next

    @property
    def where(self) -> str:
        return self.iface or "every interface"

    def fileno(self) -> int:
        return self._sock.fileno() if self._sock is not None else -1

    # -- opening

    def open(self) -> None:
        ethernet = False
        if self.iface is not None:
            check_interface(self.iface)
            ethernet = interface_type(self.iface) in ETHERNET_HATYPES
        self.linktype = LINKTYPE_ETHERNET if ethernet else LINKTYPE_RAW
        program = kernel_prologue(ip_only=not ethernet) + compile_filter(self.expression, self.linktype)
        # Bound to an interface, the socket receives nothing before bind(); "every interface" needs
        # the protocol at once: what arrives before the ring exists stays in a buffer never read.
        kind = socket.SOCK_RAW if ethernet else socket.SOCK_DGRAM
        try:
            sock = socket.socket(socket.AF_PACKET, kind, 0 if self.iface else socket.htons(ETH_P_ALL))
        except PermissionError:
            raise CaptureError(permission_message(self.where)) from None
        except OSError as exc:
            raise CaptureError(f"cannot open a capture socket: {exc.strerror or exc}") from None
        try:
            if self.iface is None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 0)
            attach_filter(sock, program, self.expression)
            self._ring = self._map_ring(sock)
            if self.iface is not None:
                try:
                    sock.bind((self.iface, ETH_P_ALL))
                except OSError as exc:
                    raise CaptureError(f"cannot capture on {self.iface}: {exc.strerror or exc}") from None
            self._sock = sock
            self.read_drops()
            self.stats.kernel_drops = 0
        except BaseException:
            if self._ring is not None:
                self._ring.close()
                self._ring = None
            sock.close()
            self._sock = None
            raise

    def _map_ring(self, sock: socket.socket) -> mmap.mmap:
        size, count = self.block_size, self.blocks
        try:
            sock.setsockopt(SOL_PACKET, PACKET_VERSION, TPACKET_V3)
        except OSError as exc:
            raise CaptureError(f"this kernel offers no TPACKET_V3 capture ring: {exc.strerror or exc}") from None
        req = _REQ3.pack(size, count, FRAME_SIZE, size // FRAME_SIZE * count, self.retire_ms, 0, 0)
        try:
            sock.setsockopt(SOL_PACKET, PACKET_RX_RING, req)
            return mmap.mmap(sock.fileno(), size * count, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as exc:
            raise CaptureError(f"cannot set up a capture ring of {size * count >> 20} MiB: "
                               f"{exc.strerror or exc}") from None

    # -- reading

    def feed(self, sink: RecordSink, writer=None, idle_s: float = IDLE_S) -> Iterator[None]:
        """Hand every packet to `sink`, block by block, yielding after each block (and every
        `idle_s` without one). `writer` (kwire.capture.pcapwrite.PcapWriter) gets every block first.
        Stops when the caller stops iterating; CaptureError when the socket fails (the interface
        went away)."""
        ring, size, count = self._ring, self.block_size, self.blocks
        assert ring is not None, "open() first"
        poller = select.poll()
        poller.register(self.fileno(), select.POLLIN | select.POLLERR)
        idle_ms = max(1, int(idle_s * 1000))
        status = _STATUS.unpack_from
        while True:
            base = self._next * size
            if not status(ring, base + 8)[0] & TP_STATUS_USER:
                for _, events in poller.poll(idle_ms):
                    if events & select.POLLERR:
                        self._raise_socket_error()
                if not status(ring, base + 8)[0] & TP_STATUS_USER:
                    yield
                    continue
            if writer is not None:
                writer.write(block_records(ring, base, size, self.linktype))
            walk_block(ring, base, size, self.linktype, sink, self.stats)
            _STATUS.pack_into(ring, base + 8, TP_STATUS_KERNEL)  # the block goes back to the kernel
            self._next = (self._next + 1) % count
            yield

    def ready(self) -> bool:
        """Has the kernel handed over the next block (feed() would walk it without waiting)?"""
        return self._ring is not None and bool(
            _STATUS.unpack_from(self._ring, self._next * self.block_size + 8)[0] & TP_STATUS_USER)

    def _raise_socket_error(self) -> None:
        code = self._sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) if self._sock else 0
        reason = "the interface went away" if code in (errno.ENETDOWN, errno.ENODEV, errno.ENXIO) else (
            f"socket error: {errno.errorcode.get(code, code)}")
        raise CaptureError(f"capture on {self.where} stopped: {reason}")

    def read_drops(self) -> int:
        """Add what the kernel dropped since the last call to stats.kernel_drops; the total."""
        if self._sock is not None:
            try:
                _, drops, _ = _STATS3.unpack(self._sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, _STATS3.size))
                self.stats.kernel_drops += drops
            except OSError:
                pass
        return self.stats.kernel_drops

    def close(self) -> None:
        """Release the ring and the socket (in this process: a forked copy keeps its own)."""
        if self._ring is not None:
            self._ring.close()
            self._ring = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> RingCapture:
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def walk_block(ring, base: int, size: int, linktype: int, sink: RecordSink, stats: RingStats) -> None:
    """Hand every frame of the block at ring[base:base + size] to `sink` (see the module docstring)."""
    count, first, used, last_s, last_ns = _BLOCK.unpack_from(ring, base)
    stats.blocks += 1
    stats.block_packets = count
    stats.block_ts_ns = last_s * NS + last_ns
    if not count:
        return
    end = base + min(used, size)
    pos = base + first
    record, frame_run = sink.record, sink.frame_run
    runs = linktype == LINKTYPE_ETHERNET
    frame = _FRAME.unpack_from
    n = wire = cut = 0
    while pos < end:
        step, sec, nsec, caplen, wirelen, status, mac = frame(ring, pos)
        n += 1
        wire += wirelen
        if caplen < wirelen:
            cut += 1
        following = pos + step if step else end
        start = pos + mac
        if status & TP_STATUS_VLAN_VALID and runs:
            data = _tagged(ring, pos, start, caplen, status)
            record(sec * NS + nsec, linktype, data, 0, len(data), wirelen + 4)
        elif record(sec * NS + nsec, linktype, ring, start, start + caplen, wirelen) and runs and step:
            following, taken, nbytes = frame_run(ring, following, end, FRAMES)
            n += taken
            wire += nbytes
        pos = following
    stats.packets += n
    stats.bytes += wire
    stats.truncated += cut


def _tagged(ring, pos: int, start: int, caplen: int, status: int) -> bytes:
    """The Ethernet frame at ring[start:start + caplen] with its 802.1Q tag put back after the MACs."""
    tci, tpid = _VLAN.unpack_from(ring, pos + 32)
    tag = _TAG.pack(tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100, tci & 0xFFFF)
    return ring[start:start + 12] + tag + ring[start + 12:start + caplen]


_RECORD = struct.Struct("=IIII")


def block_records(ring, base: int, size: int, linktype: int) -> list:
    """The block's frames as classic pcap records (nanosecond, this machine's byte order), as
    alternating (16-byte record header, packet) pieces: a frame's seconds, nanoseconds, captured and
    wire length are such a header, byte for byte."""
    count, first, used, _, _ = _BLOCK.unpack_from(ring, base)
    pieces: list = []
    if not count:
        return pieces
    end = base + min(used, size)
    pos = base + first
    append = pieces.append
    frame = _FRAME.unpack_from
    while pos < end:
        step, sec, nsec, caplen, wirelen, status, mac = frame(ring, pos)
        start = pos + mac
        if status & TP_STATUS_VLAN_VALID and linktype == LINKTYPE_ETHERNET:  # the tag put back
            append(_RECORD.pack(sec, nsec, caplen + 4, wirelen + 4))
            append(_tagged(ring, pos, start, caplen, status))
        else:
            append(ring[pos + 4:pos + 20])
            append(ring[start:start + caplen])
        pos = pos + step if step else end
    return pieces
