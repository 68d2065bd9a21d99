"""Live capture one packet at a time, handed over through a bounded queue: where there is no ring.

On Linux `kwire live` reads interfaces through kwire.capture.ring (a TPACKET_V3 ring, no system
call per packet, in a process of its own). This module is the per-packet path it replaced, kept for
the systems without one: scapy's own listening socket (`conf.L2listen`, backend "scapy", the link
type scapy reports, no kernel drop counts), and on Linux an AF_PACKET SOCK_DGRAM socket read with
one recvmsg per packet (backend "packet": kernel nanosecond timestamps, the link header already
stripped, every packet LINKTYPE_RAW, the loopback's outgoing copies left out).

Owns that socket, the sniffer thread and the queue between it and the pipeline. Guarantees:
- Opening fails fast with one CaptureError naming the problem (no permission, unknown interface,
  a BPF filter libpcap rejects); nothing is captured before the filter (kwire.capture.bpf) is attached.
- The queue is bounded by packets and by bytes (about a second or two of work for the pipeline):
  when it is full, packets are counted in `stats.queue_drops` and discarded until it has drained
  to half, so an overload costs a few long gaps (a few resyncs) rather than a gap every packet, and
  the dashboard never falls more than the queue behind the wire.
- The kernel's own drops (socket buffer overflow, PACKET_STATISTICS) are read about twice a
  second and added to `stats.kernel_drops`.
"""

from __future__ import annotations

import collections
import errno
import select
import socket
import struct
import sys
import threading
import time
from dataclasses import dataclass

from kwire.capture.bpf import (SNAPLEN, attach_filter, check_interface, compile_filter, default_filter,
                               interface_names, permission_message, quiet_scapy)
from kwire.capture.packet import LINKTYPE_RAW, Packet
from kwire.errors import CaptureError

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
ARPHRD_LOOPBACK = 772
PACKET_OUTGOING = 4
SOL_PACKET = 263
PACKET_STATISTICS = 6
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
_RCVTIMEO = struct.Struct("ll")  # struct timeval
_TIMESPEC = struct.Struct("ll")  # struct timespec, as SCM_TIMESTAMPNS carries it
_TPACKET_STATS = struct.Struct("II")  # tp_packets, tp_drops (reading resets them)

QUEUE_PACKETS = 10_000    # packets waiting for the pipeline
QUEUE_BYTES = 16 << 20    # bytes waiting for the pipeline
SOCKET_BUFFER = 32 << 20  # kernel receive buffer asked for
POLL_S = 0.2              # the sniffer wakes this often with no traffic, to notice stop()
DROP_STATS_S = 0.5        # how often the kernel's counters are read


@dataclass(slots=True)
class LiveStats:
    """Counters of one live capture. Each field is written by one thread only."""

    packets: int = 0        # packets the sniffer received (queued or dropped)
    bytes: int = 0          # bytes the packets had on the wire
    truncated: int = 0      # packets longer than SNAPLEN, cut
    queue_drops: int = 0    # packets discarded because the queue was full
    drop_episodes: int = 0  # times the queue filled up (each one a run of drops)
    max_queue: int = 0      # the most packets ever waiting
    kernel_drops: int = 0   # packets the kernel dropped before kwire could read them
    queued: int = 0         # packets handed to the queue (so queue length = queued - taken)
    queued_bytes: int = 0
    taken: int = 0          # written by the consumer
    taken_bytes: int = 0
    error: str | None = None  # why the sniffer thread stopped, when it failed


class LiveCapture:
    """Sniff `iface` (None: every interface) through `bpf`; take packets with `take()`.

    `start()` opens the socket (CaptureError on failure) and starts the sniffer thread; `take()`
    returns the packets waiting (waiting up to `timeout` for the first); `stop()` ends the thread
    and closes the socket. `stats` is safe to read from any thread.
    """

    def __init__(self, iface: str | None = None, bpf: str = "tcp", *, queue_packets: int = QUEUE_PACKETS,
                 queue_bytes: int = QUEUE_BYTES, socket_buffer: int = SOCKET_BUFFER, backend: str | None = None):
        self.iface = None if iface in (None, "", "any") else iface
        self.bpf = bpf
        self.queue_packets = max(1, queue_packets)
        self.queue_bytes = max(1, queue_bytes)
        self.socket_buffer = socket_buffer
        self.backend = backend or ("packet" if hasattr(socket, "AF_PACKET") else "scapy")
        self.stats = LiveStats()
        self._queue: collections.deque[Packet] = collections.deque()
        self._dropping = False  # the queue filled up: drop until it has drained to half
        self._ready = threading.Event()   # set by the sniffer when the queue goes from empty to not
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sock = None

    @property
    def where(self) -> str:
        return self.iface or "every interface"

    # -- opening

    def start(self) -> None:
        if self.iface is not None:
            check_interface(self.iface)
        if self.backend == "packet":
            self._sock = self._open_packet_socket()
            target = self._sniff_packet_socket
        else:
            self._sock = self._open_scapy_socket()
            target = self._sniff_scapy
        self._thread = threading.Thread(target=self._run, args=(target,), name="kwire-sniffer", daemon=True)
        self._thread.start()

    def _open_packet_socket(self) -> socket.socket:
        try:
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
        except PermissionError:
            raise CaptureError(permission_message(self.where)) from None
        except OSError as exc:
            raise CaptureError(f"cannot open a capture socket: {exc.strerror or exc}") from None
        try:
            # Nothing may arrive before the filter: a zero buffer until it is attached.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 0)
            attach_filter(sock, compile_filter(self.bpf, LINKTYPE_RAW), self.bpf)
            if self.iface is not None:
                try:
                    sock.bind((self.iface, ETH_P_ALL))
                except OSError as exc:
                    if exc.errno in (errno.ENODEV, errno.ENXIO):
                        raise CaptureError(f"no interface named {self.iface!r}") from None
                    raise CaptureError(f"cannot capture on {self.iface}: {exc.strerror or exc}") from None
            while True:  # whatever slipped in before the filter
                try:
                    sock.recv(65536, socket.MSG_DONTWAIT)
                except (BlockingIOError, InterruptedError):
                    break
            try:
                sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, self.socket_buffer)
            except OSError:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.socket_buffer)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            # A blocking socket that gives up after POLL_S: one syscall per packet, and stop() is seen.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, _RCVTIMEO.pack(0, int(POLL_S * 1e6)))
            self._kernel_stats(sock)  # zero the kernel's counters
            self.stats.kernel_drops = 0
        except BaseException:
            sock.close()
            raise
        return sock

    def _open_scapy_socket(self):
        quiet_scapy()
        try:
            from scapy.config import conf
            from scapy.error import Scapy_Exception
        except Exception as exc:  # noqa: BLE001
            raise CaptureError(f"live capture needs scapy: {exc}") from None
        try:
            return conf.L2listen(iface=self.iface, filter=self.bpf)
        except PermissionError:
            raise CaptureError(permission_message(self.where)) from None
        except (OSError, Scapy_Exception, ImportError) as exc:
            raise CaptureError(f"cannot capture on {self.where}: {exc}") from None

    # -- the sniffer thread

    def _run(self, target) -> None:
        try:
            target()
        except Exception as exc:  # noqa: BLE001 - reported on the dashboard, never a traceback
            self.stats.error = f"capture stopped: {exc}"
        finally:
            self._ready.set()

    def _enqueue(self, packet: Packet, size: int) -> None:
        stats = self.stats
        waiting = stats.queued - stats.taken
        waiting_bytes = stats.queued_bytes - stats.taken_bytes
        if self._dropping:
            if waiting > self.queue_packets // 2 or waiting_bytes > self.queue_bytes // 2:
                stats.queue_drops += 1
                return
            self._dropping = False
        elif waiting >= self.queue_packets or waiting_bytes + size > self.queue_bytes:
            self._dropping = True
            stats.drop_episodes += 1
            stats.queue_drops += 1
            return
        if waiting >= stats.max_queue:
            stats.max_queue = waiting + 1
        self._queue.append(packet)
        stats.queued += 1
        stats.queued_bytes += size
        if not self._ready.is_set():
            self._ready.set()

    def _kernel_stats(self, sock: socket.socket) -> None:
        try:
            raw = sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, _TPACKET_STATS.size)
        except OSError:
            return
        _, drops = _TPACKET_STATS.unpack(raw)
        self.stats.kernel_drops += drops

    def _sniff_packet_socket(self) -> None:
        sock = self._sock
        buf = bytearray(SNAPLEN)
        view = memoryview(buf)
        recv = sock.recvmsg_into
        cmsg_space = socket.CMSG_SPACE(_TIMESPEC.size)
        trunc = socket.MSG_TRUNC
        unpack_ts = _TIMESPEC.unpack_from
        stats = self.stats
        stop = self._stop
        enqueue = self._enqueue
        next_stats = time.monotonic() + DROP_STATS_S
        n = 0
        while not stop.is_set():
            try:
                size, ancdata, _flags, addr = recv((buf,), cmsg_space, trunc)
            except (BlockingIOError, InterruptedError):
                size = -1
            except OSError as exc:
                if stop.is_set():
                    break
                raise CaptureError(exc.strerror or str(exc)) from None
            if size >= 0:
                n += 1
                proto, pkttype, hatype = addr[1], addr[2], addr[3]
                # The loopback shows each packet twice (out and back in): keep the incoming copy.
                if not (pkttype == PACKET_OUTGOING and hatype == ARPHRD_LOOPBACK) and (
                        proto == ETH_P_IP or proto == ETH_P_IPV6):
                    if ancdata:
                        sec, nsec = unpack_ts(ancdata[0][2])
                        ts_ns = sec * 1_000_000_000 + nsec
                    else:
                        ts_ns = time.time_ns()
                    stats.packets += 1
                    stats.bytes += size
                    if size > SNAPLEN:
                        stats.truncated += 1
                        data = bytes(view)
                    else:
                        data = bytes(view[:size])
                    enqueue(Packet(ts_ns, LINKTYPE_RAW, data, size), len(data))
                if n & 0xFF:
                    continue
            now = time.monotonic()
            if now >= next_stats:
                self._kernel_stats(sock)
                next_stats = now + DROP_STATS_S
        self._kernel_stats(sock)

    def _sniff_scapy(self) -> None:
        from scapy.config import conf

        sock = self._sock
        layer2num = conf.l2types.layer2num
        stats = self.stats
        stop = self._stop
        while not stop.is_set():
            ready, _, _ = select.select([sock], [], [], POLL_S)
            if not ready:
                continue
            cls, data, ts = sock.recv_raw(SNAPLEN)
            if data is None:
                continue
            linktype = layer2num.get(cls)
            if linktype is None:
                linktype = conf.l3types.layer2num.get(cls, 1)
                linktype = LINKTYPE_RAW if linktype in (ETH_P_IP, ETH_P_IPV6) else linktype
            ts_ns = int(ts * 1e9) if ts is not None else time.time_ns()
            stats.packets += 1
            stats.bytes += len(data)
            self._enqueue(Packet(ts_ns, linktype, data, len(data)), len(data))

    # -- the consumer side

    def take(self, timeout: float = 0.1, limit: int = 4096) -> list[Packet]:
        """Up to `limit` queued packets, oldest first; waits up to `timeout` when none are queued."""
        queue = self._queue
        if not queue:
            self._ready.clear()
            if not queue:
                self._ready.wait(timeout)
        out: list[Packet] = []
        pop = queue.popleft
        nbytes = 0
        try:
            while len(out) < limit:
                packet = pop()
                out.append(packet)
                nbytes += len(packet.data)
        except IndexError:
            pass
        stats = self.stats
        stats.taken += len(out)
        stats.taken_bytes += nbytes
        return out

    @property
    def queue_length(self) -> int:
        return self.stats.queued - self.stats.taken

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2 * POLL_S + 1)
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    def __enter__(self) -> LiveCapture:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def can_capture() -> str | None:
    """None when this process may open a capture socket, else why not (for tests and messages)."""
    if not hasattr(socket, "AF_PACKET"):
        return None if sys.platform != "win32" else "live capture is not supported on Windows"
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL)).close()
    except PermissionError:
        return permission_message("any interface")
    except OSError as exc:
        return f"cannot open a capture socket: {exc.strerror or exc}"
    return None


__all__ = ["LiveCapture", "LiveStats", "default_filter", "interface_names", "can_capture"]
