"""kwire.capture.live: real packets from the loopback, the bounded queue, and clear errors."""

from __future__ import annotations

import socket
import struct
import time

import pytest

from kwire.capture import live
from kwire.capture.live import LiveCapture, can_capture, default_filter
from kwire.capture.packet import LINKTYPE_ETHERNET, LINKTYPE_RAW
from kwire.errors import CaptureError

needs_capture = pytest.mark.skipif(can_capture() is not None, reason=str(can_capture()))


def _listener() -> tuple[socket.socket, int]:
    """A listening TCP socket on 127.0.0.1 and its port."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    return server, port


def _talk(server: socket.socket, port: int, payloads: list[bytes]) -> None:
    """Connect, send each payload client -> server (waiting for it to arrive), close."""
    client = socket.create_connection(("127.0.0.1", port))
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn, _ = server.accept()
    for p in payloads:
        client.sendall(p)
        got = b""
        while len(got) < len(p):
            got += conn.recv(65536)
    client.close()
    conn.close()
    server.close()


def _take_all(cap: LiveCapture, want, timeout: float = 10.0) -> list:
    got = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not want(got):
        got += cap.take(0.1)
    return got


def _tcp_payload(packet) -> bytes:
    data = packet.data
    ihl = (data[0] & 0x0F) * 4
    offset = (data[ihl + 12] >> 4) * 4
    return data[ihl + offset:]


@needs_capture
def test_loopback_packets_arrive_once_as_raw_ip_with_kernel_timestamps():
    server, port = _listener()
    payloads = [f"kwire-live-test-{i}".encode() for i in range(5)]
    before = time.time_ns()
    with LiveCapture("lo", f"tcp port {port}") as cap:
        _talk(server, port, payloads)
        packets = _take_all(cap, lambda got: sum(1 for p in got if _tcp_payload(p)) >= 5)
    packets += cap.take(0)  # whatever came after (the closing handshake), the sniffer stopped
    stats = cap.stats
    after = time.time_ns()
    carrying = [p for p in packets if _tcp_payload(p)]
    # The loopback shows every packet going out and coming back: kwire keeps one copy.
    assert [_tcp_payload(p) for p in carrying] == payloads
    assert all(p.linktype == LINKTYPE_RAW and p.data[0] >> 4 == 4 for p in packets)
    assert all(before <= p.ts_ns <= after for p in packets)
    assert [p.ts_ns for p in packets] == sorted(p.ts_ns for p in packets)
    assert all(len(p.data) == p.wire_len for p in packets)
    ports = {struct.unpack_from(">HH", p.data, 20) for p in packets}
    assert all(port in pair for pair in ports)
    assert stats.packets == len(packets) and stats.queue_drops == 0 and stats.kernel_drops == 0


@needs_capture
def test_the_filter_keeps_other_traffic_out():
    server, port = _listener()
    other, other_port = _listener()
    with LiveCapture("lo", f"tcp port {port}") as cap:
        _talk(other, other_port, [b"not for kwire"])
        _talk(server, port, [b"for kwire"])
        packets = _take_all(cap, lambda got: any(_tcp_payload(p) for p in got))
    assert [_tcp_payload(p) for p in packets if _tcp_payload(p)] == [b"for kwire"]


@needs_capture
def test_a_full_queue_drops_and_counts_instead_of_growing():
    server, port = _listener()
    with LiveCapture("lo", f"tcp port {port}", queue_packets=8) as cap:
        _talk(server, port, [b"x" * 10] * 40)  # about 80 packets, nobody taking them
        deadline = time.monotonic() + 10
        while cap.stats.packets < 80 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cap.queue_length <= 8
        assert cap.stats.max_queue <= 8
        assert cap.stats.queue_drops >= cap.stats.packets - 8
        assert cap.stats.drop_episodes >= 1
        taken = cap.take(0.1)
        assert len(taken) == cap.stats.queued <= 8 + cap.stats.drop_episodes * 4
        assert cap.queue_length == 0


@needs_capture
def test_the_queue_is_bounded_in_bytes_too():
    server, port = _listener()
    with LiveCapture("lo", f"tcp port {port}", queue_bytes=2000) as cap:
        _talk(server, port, [b"y" * 900] * 10)
        deadline = time.monotonic() + 10
        while cap.stats.packets < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cap.stats.queued_bytes - cap.stats.taken_bytes <= 2000
        assert cap.stats.queue_drops > 0


@needs_capture
def test_after_dropping_it_takes_packets_again_once_half_drained():
    server, port = _listener()
    with LiveCapture("lo", f"tcp port {port}", queue_packets=4) as cap:
        client = socket.create_connection(("127.0.0.1", port))
        conn, _ = server.accept()
        for _ in range(10):
            client.sendall(b"z")
            conn.recv(10)
            time.sleep(0.01)
        time.sleep(0.3)
        assert cap.stats.queue_drops > 0
        cap.take(0.1)  # drained
        dropped = cap.stats.queue_drops
        client.sendall(b"after")
        conn.recv(10)
        packets = _take_all(cap, lambda got: any(_tcp_payload(p) == b"after" for p in got), timeout=5)
        assert any(_tcp_payload(p) == b"after" for p in packets)
        assert cap.stats.queue_drops == dropped
        client.close(), conn.close(), server.close()


_BURST = """
import socket, sys
server = socket.socket(); server.bind(("127.0.0.1", int(sys.argv[1]))); server.listen()
client = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
peer, _ = server.accept()
for _ in range(5000):
    client.send(b"b" * 200)
client.close()
"""


@needs_capture
def test_kernel_drops_are_read_from_the_socket():
    import subprocess
    import sys

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    # The smallest receive buffer the kernel allows: a burst overflows it before the sniffer reads.
    with LiveCapture("lo", f"tcp port {port}", socket_buffer=1) as cap:
        subprocess.run([sys.executable, "-c", _BURST, str(port)], check=True, timeout=60)
        deadline = time.monotonic() + 5
        while cap.stats.kernel_drops == 0 and time.monotonic() < deadline:
            cap.take(0.1)
    assert cap.stats.kernel_drops > 0
    assert cap.stats.queue_drops == 0


@needs_capture
def test_scapy_backend_reads_the_loopback_too():
    server, port = _listener()
    with LiveCapture("lo", f"tcp port {port}", backend="scapy") as cap:
        _talk(server, port, [b"via scapy"])
        packets = _take_all(cap, lambda got: any(_tcp_payload_eth(p) == b"via scapy" for p in got))
    assert packets and all(p.linktype == LINKTYPE_ETHERNET for p in packets)


def _tcp_payload_eth(packet) -> bytes:
    class _P:
        data = packet.data[14:]
    return _tcp_payload(_P)


def test_unknown_interface_is_one_clear_error():
    with pytest.raises(CaptureError, match=r"no interface named 'kwire-nope0' \(this machine has: .*lo"):
        LiveCapture("kwire-nope0").start()


@needs_capture
def test_a_filter_libpcap_rejects_is_one_clear_error():
    with pytest.raises(CaptureError, match=r"bad capture filter 'tcp port': .*syntax error"):
        LiveCapture("lo", "tcp port").start()


def test_no_permission_is_one_clear_error(monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(live.socket, "socket", refuse)
    with pytest.raises(CaptureError, match=r"no permission to capture on lo: run as root or give python CAP_NET_RAW"):
        LiveCapture("lo").start()
    assert "no permission" in can_capture()


def test_default_filter():
    assert default_filter(()) == "tcp"
    assert default_filter((9093, 9092, 9092)) == "tcp and (port 9092 or port 9093)"


@needs_capture
def test_stop_ends_the_sniffer_promptly_without_traffic():
    cap = LiveCapture("lo", "tcp port 1")
    cap.start()
    assert cap.running
    cap.stop()
    assert not cap.running
