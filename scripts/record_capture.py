#!/usr/bin/env python3
"""Record real Kafka traffic, with ground truth, for kwire's tests and benchmarks.

What it owns: an isolated network namespace whose loopback has MTU 1500 and segmentation offloads
off (so TCP segments are real-sized, not 64 KiB blobs), a tcpdump on that loopback, and scenarios
that run real Kafka clients inside it: confluent-kafka (librdkafka) and Debian's kcat, talking to
librdkafka's in-process mock cluster (`test.mock.num.brokers`). Every client logs with
`debug=protocol` to stderr; that log, kept whole, is the capture's ground truth (CAPTURE.truth.log,
parsed by tests/truthlog.py).

What it guarantees: the namespace and tcpdump are gone when `record` returns or raises; a scenario
that does not deliver every message it produced, a tcpdump that drops packets, or a tool that fails
raises RecordError (the CLI exits 1 with one line); the files are written only by a run that worked
(a failed run may leave partial files behind, named in the error).

Run as root (ip netns and tcpdump need it):
    python scripts/record_capture.py --scenario produce-consume --codec zstd --out captures/x.pcap
Importable: `record(RecordOptions(...)) -> RecordResult`; `run_scenario(options)` runs one scenario
in the current namespace without capturing (what the recorder runs inside the namespace).

How the mock cluster's address is found: the client that hosts the cluster (a Producer configured
with `test.mock.num.brokers`) answers `list_topics()` with the mock brokers' host:port; librdkafka
also logs it once ("MOCK ... Mock cluster enabled: ... replaced with 127.0.0.1:P1,127.0.0.1:P2").
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import random
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click

SCENARIOS = ("produce-consume", "multi-broker", "share", "kcat", "many-small", "bulk-fetch")
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
GROUP_PROTOCOLS = ("classic", "consumer")

# Per-scenario defaults: (brokers, messages).
_DEFAULTS = {
    "produce-consume": (1, 20),
    "multi-broker": (3, 30),
    "share": (1, 10),
    "kcat": (1, 10),
    "many-small": (1, 20000),
    "bulk-fetch": (1, 0),
}

_TCPDUMP_READY_S = 15.0
_TCPDUMP_STOP_S = 20.0
_SETTLE_S = 0.3  # lets the last FIN/ACKs reach tcpdump before it is stopped
_BULK_CHUNK = 2 * 1024 * 1024  # bulk-fetch: bytes produced between two read-backs


class RecordError(RuntimeError):
    """A recording that could not be made: a missing tool, a failed scenario, dropped packets."""


@dataclass(frozen=True)
class RecordOptions:
    scenario: str = "produce-consume"
    out: Path = Path("capture.pcap")
    pcapng: bool = False  # convert tcpdump's pcap to pcapng with editcap
    nano: bool = False  # nanosecond timestamps (pcap magic a1b23c4d; pcapng if_tsresol 9)
    codec: str = "none"
    brokers: int | None = None  # None: the scenario's default
    messages: int | None = None  # None: the scenario's default
    bytes: int = 4 * 1024 * 1024  # bulk-fetch: volume produced then fetched
    value_size: int = 8192  # bulk-fetch: bytes per message value
    debug: str = "protocol"  # librdkafka debug contexts for every client
    group_protocol: str = "classic"  # consumer group protocol: classic (JoinGroup...) or consumer (KIP-848)
    timeout: float = 120.0  # for the whole scenario
    max_in_flight: int | None = None  # many-small: requests in flight per connection (librdkafka's default if None)

    def __post_init__(self) -> None:
        if self.scenario not in SCENARIOS:
            raise RecordError(f"unknown scenario {self.scenario!r}; choose from {', '.join(SCENARIOS)}")
        if self.codec not in CODECS:
            raise RecordError(f"unknown codec {self.codec!r}; choose from {', '.join(CODECS)}")
        if self.group_protocol not in GROUP_PROTOCOLS:
            raise RecordError(f"unknown group protocol {self.group_protocol!r}")
        if self.brokers is not None and not 1 <= self.brokers <= 16:
            raise RecordError("brokers must be 1..16")
        if self.messages is not None and self.messages < 1:
            raise RecordError("messages must be at least 1")

    @property
    def broker_count(self) -> int:
        return self.brokers if self.brokers is not None else _DEFAULTS[self.scenario][0]

    @property
    def message_count(self) -> int:
        if self.messages is not None:
            return self.messages
        if self.scenario == "bulk-fetch":
            return max(1, -(-self.bytes // max(1, self.value_size)))
        return _DEFAULTS[self.scenario][1]

    @property
    def truth_log(self) -> Path:
        return Path(str(self.out) + ".truth.log")


@dataclass(frozen=True)
class RecordResult:
    capture: Path
    truth_log: Path
    packets: int  # as tcpdump counted them
    dropped: int  # by the kernel, as tcpdump counted them
    summary: dict = field(default_factory=dict)  # what the scenario reported (bootstrap, counts, versions)


# ----------------------------------------------------------------------------------------------
# Tools, namespace, tcpdump


def missing_tools(options: RecordOptions | None = None) -> list[str]:
    """Names of the programs a recording needs that are not on PATH."""
    needed = ["ip", "ethtool", "tcpdump"]
    if options is not None and options.pcapng:
        needed.append("editcap")
    if options is not None and options.scenario == "kcat":
        needed.append("kcat")
    return [tool for tool in needed if shutil.which(tool) is None]


def why_not_recordable(options: RecordOptions | None = None) -> str | None:
    """None when this machine can record (root, tools present), else the reason it cannot."""
    if os.geteuid() != 0:
        return "recording needs root (ip netns, tcpdump)"
    missing = missing_tools(options)
    if missing:
        return "missing tools: " + ", ".join(missing)
    try:
        import confluent_kafka  # noqa: F401
    except ImportError:
        return "confluent-kafka is not installed"
    return None


def _run(argv: list[str], what: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RecordError(f"{what} failed ({shlex.join(argv)}): {proc.stderr.strip() or proc.returncode}")
    return proc


def in_namespace(ns: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


@contextlib.contextmanager
def network_namespace(name: str | None = None) -> Iterator[str]:
    """A fresh namespace with only a loopback (MTU 1500, TSO/GSO/GRO off); deleted on exit."""
    ns = name or f"kwire-rec-{os.getpid()}-{secrets.token_hex(3)}"
    _run(["ip", "netns", "add", ns], "creating the network namespace")
    try:
        _run(in_namespace(ns, "ip", "link", "set", "lo", "mtu", "1500", "up"), "bringing up lo")
        _run(in_namespace(ns, "ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"),
             "turning offloads off")
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


class Tcpdump:
    """One tcpdump writing `path` from the namespace's loopback; start() returns once it listens."""

    def __init__(self, ns: str, path: Path, nano: bool = False):
        argv = ["tcpdump", "-i", "lo", "-n", "-s", "0", "-B", "65536", "--immediate-mode", "-U",
                "-Z", "root", "-w", str(path)]
        if nano:
            argv.append("--time-stamp-precision=nano")
        argv.append("tcp")
        self.argv = in_namespace(ns, *argv)
        self.proc: subprocess.Popen | None = None
        self._lines: list[str] = []
        self._ready = threading.Event()
        self._reader: threading.Thread | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + _TCPDUMP_READY_S
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None:
                self._reader.join(2)
                raise RecordError(f"tcpdump exited at start: {' '.join(self._lines).strip()}")
            if time.monotonic() > deadline:
                self.kill()
                raise RecordError("tcpdump did not report 'listening on' in time")

    def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self._lines.append(line)
            if "listening on" in line:
                self._ready.set()

    def stop(self) -> tuple[int, int]:
        """SIGINT, wait for the flush; returns (packets captured, packets dropped by the kernel)."""
        assert self.proc is not None
        if self.proc.poll() is None:
            time.sleep(_SETTLE_S)
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(_TCPDUMP_STOP_S)
            except subprocess.TimeoutExpired:
                self.kill()
                raise RecordError("tcpdump did not stop on SIGINT") from None
        if self._reader is not None:
            self._reader.join(5)
        text = "".join(self._lines)
        captured = re.search(r"(\d+) packets? captured", text)
        dropped = re.search(r"(\d+) packets? dropped by kernel", text)
        if captured is None:
            raise RecordError(f"tcpdump gave no statistics: {text.strip()}")
        return int(captured.group(1)), int(dropped.group(1)) if dropped else 0

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)


# ----------------------------------------------------------------------------------------------
# Recording


def _scenario_argv(options: RecordOptions) -> list[str]:
    """The command that runs the scenario inside the namespace: this script, --in-namespace."""
    return [sys.executable, str(Path(__file__).resolve()), "--in-namespace",
            "--scenario", options.scenario, "--codec", options.codec,
            "--brokers", str(options.broker_count), "--messages", str(options.message_count),
            "--bytes", str(options.bytes), "--value-size", str(options.value_size),
            "--debug", options.debug, "--group-protocol", options.group_protocol,
            "--timeout", str(options.timeout)] + (
                ["--max-in-flight", str(options.max_in_flight)] if options.max_in_flight else [])


def _versions() -> dict:
    import confluent_kafka

    version = confluent_kafka.version()  # a str in 2.16, a (str, int) tuple in older releases
    versions = {"confluent_kafka": version if isinstance(version, str) else version[0],
                "librdkafka": confluent_kafka.libversion()[0]}
    if shutil.which("kcat"):
        out = subprocess.run(["kcat", "-V"], capture_output=True, text=True)
        match = re.search(r"Version (\S+) \((.*?)librdkafka (\S+)", out.stdout + out.stderr)
        if match:
            versions["kcat"] = match.group(1)
            versions["kcat_librdkafka"] = match.group(3)
    return versions


def record(options: RecordOptions) -> RecordResult:
    """Run one scenario in a fresh namespace under tcpdump; write the capture and its truth log."""
    reason = why_not_recordable(options)
    if reason:
        raise RecordError(reason)
    out = Path(options.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    truth = options.truth_log
    raw = out.with_name(out.name + ".tmp.pcap") if options.pcapng else out
    child_argv = _scenario_argv(options)
    header = {"scenario": options.scenario, "codec": options.codec, "brokers": options.broker_count,
              "messages": options.message_count, "debug": options.debug,
              "group_protocol": options.group_protocol, **_versions()}
    if options.scenario == "bulk-fetch":
        header.update(bytes=options.bytes, value_size=options.value_size)

    with network_namespace() as ns:
        dump = Tcpdump(ns, raw, nano=options.nano)
        dump.start()
        child_out = ""
        try:
            with truth.open("w") as truth_file:
                truth_file.write(f"# kwire record_capture: {json.dumps(header, sort_keys=True)}\n")
                truth_file.write(f"# command: {shlex.join(['scripts/record_capture.py', *_cli_argv(options)])}\n")
                truth_file.flush()
                child = subprocess.Popen(in_namespace(ns, *child_argv), stdout=subprocess.PIPE,
                                         stderr=truth_file, text=True, start_new_session=True)
                try:
                    child_out, _ = child.communicate(timeout=options.timeout + 30)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
                    child.communicate()
                    raise RecordError(f"scenario {options.scenario} did not finish in time; see {truth}") from None
        finally:
            try:
                packets, dropped = dump.stop()
            finally:
                dump.kill()
    summary = _last_json(child_out)
    if child.returncode != 0 or summary is None:
        raise RecordError(f"scenario {options.scenario} failed (exit {child.returncode}): "
                          f"{(summary or {}).get('error', child_out.strip()[-500:])}; see {truth}")
    if dropped:
        raise RecordError(f"tcpdump reports {dropped} packets dropped by the kernel; capture {raw} is incomplete")
    with truth.open("a") as truth_file:
        truth_file.write(f"# summary: {json.dumps(summary, sort_keys=True)}\n")
    if options.pcapng:
        _run(["editcap", "-F", "pcapng", str(raw), str(out)], "converting to pcapng")
        raw.unlink()
    return RecordResult(capture=out, truth_log=truth, packets=packets, dropped=dropped, summary=summary)


def _last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                return value
    return None


def _cli_argv(options: RecordOptions) -> list[str]:
    argv = ["--scenario", options.scenario, "--out", str(options.out), "--codec", options.codec,
            "--brokers", str(options.broker_count), "--messages", str(options.message_count)]
    if options.scenario == "bulk-fetch":
        argv += ["--bytes", str(options.bytes), "--value-size", str(options.value_size)]
    if options.pcapng:
        argv.append("--pcapng")
    if options.nano:
        argv.append("--nano")
    if options.debug != "protocol":
        argv += ["--debug", options.debug]
    if options.group_protocol != "classic":
        argv += ["--group-protocol", options.group_protocol]
    return argv


# ----------------------------------------------------------------------------------------------
# Scenarios: run inside the namespace, librdkafka logging to this process's stderr.


class _Deadline:
    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def check(self, what: str) -> None:
        if self.left() <= 0:
            raise RecordError(f"timed out {what}")


def _conf(client_id: str, options: RecordOptions, bootstrap: str | None = None, **extra) -> dict:
    conf = {"client.id": client_id, "debug": options.debug}
    if bootstrap is not None:
        conf["bootstrap.servers"] = bootstrap
    conf.update({key.replace("_", "."): value for key, value in extra.items()})
    return conf


def mock_cluster_host(options: RecordOptions, client_id: str = "kwire-producer", **producer_conf):
    """A Producer that hosts the mock cluster; returns (producer, bootstrap 'host:port,...').

    The mock brokers listen on 127.0.0.1 with random ports for as long as this producer lives; the
    producer itself is also a real client of them (its Metadata, Produce... are on the wire too).
    """
    from confluent_kafka import Producer

    conf = _conf(client_id, options, test_mock_num_brokers=options.broker_count, **producer_conf)
    producer = Producer(conf)
    metadata = producer.list_topics(timeout=15)
    brokers = sorted(metadata.brokers.values(), key=lambda b: b.id)
    if not brokers:
        raise RecordError("the mock cluster reported no brokers")
    return producer, ",".join(f"{b.host}:{b.port}" for b in brokers)


def _create_topic(producer, topic: str, deadline: _Deadline) -> int:
    """The mock cluster creates topics on first Metadata (4 partitions, spread over the brokers)."""
    while True:
        metadata = producer.list_topics(topic, timeout=max(1.0, deadline.left()))
        info = metadata.topics.get(topic)
        if info is not None and info.error is None and info.partitions:
            return len(info.partitions)
        deadline.check(f"waiting for topic {topic}")
        time.sleep(0.1)


def _create_spread_topic(producer, base: str, brokers: int, deadline: _Deadline) -> tuple[str, int]:
    """A topic whose partition leaders cover every broker (the mock places leaders at random, so
    topics are created under new names until one does). Returns (topic, partitions)."""
    for attempt in range(20):
        topic = base if attempt == 0 else f"{base}-{attempt}"
        partitions = _create_topic(producer, topic, deadline)
        leaders = {p.leader for p in producer.list_topics(topic, timeout=5).topics[topic].partitions.values()}
        if len(leaders) >= min(brokers, partitions):
            return topic, partitions
    raise RecordError(f"no topic with leaders on all {brokers} brokers after 20 tries")


def _value(codec: str, i: int) -> bytes:
    # Text that compresses: the codec must do visible work.
    return (f"value-{codec}-{i}|" + "kwire sniffs kafka " * 6).encode()


def _produce(producer, topic: str, items: list[tuple[str, bytes]], deadline: _Deadline,
             flush_every: int = 0, partition: int | None = None) -> int:
    failures: list[str] = []
    delivered = 0

    def on_delivery(err, msg) -> None:
        nonlocal delivered
        if err is not None:
            failures.append(str(err))
        else:
            delivered += 1

    for i, (key, value) in enumerate(items):
        kwargs = {"key": key, "value": value, "on_delivery": on_delivery,
                  "headers": [("idx", str(i).encode())]}
        if partition is not None:
            kwargs["partition"] = partition
        while True:
            try:
                producer.produce(topic, **kwargs)
                break
            except BufferError:
                producer.poll(0.05)
                deadline.check("producing")
        if flush_every and (i + 1) % flush_every == 0:
            producer.flush(max(1.0, deadline.left()))
        elif i % 1000 == 999:
            producer.poll(0)
    remaining = producer.flush(max(1.0, deadline.left()))
    if remaining or failures:
        raise RecordError(f"produce: {remaining} undelivered, errors {failures[:3]}")
    return delivered


class _GroupReader:
    """A consumer-group member that checks every message against what was produced (by CRC)."""

    def __init__(self, options: RecordOptions, bootstrap: str, topic: str, client_id: str = "kwire-consumer"):
        from confluent_kafka import Consumer

        conf = _conf(client_id, options, bootstrap,
                     group_id=f"kwire-group-{options.scenario}-{options.codec}",
                     auto_offset_reset="earliest", enable_auto_commit=False)
        if options.group_protocol == "consumer":
            conf["group.protocol"] = "consumer"
        self.consumer = Consumer(conf)
        self.assigned = False
        self.seen: dict[str, int] = {}
        self.next_offsets: dict[tuple[str, int], int] = {}
        self.consumer.subscribe([topic], on_assign=self._on_assign)

    def _on_assign(self, consumer, partitions) -> None:
        self.assigned = bool(partitions) or self.assigned

    def _poll(self, deadline: _Deadline) -> None:
        msg = self.consumer.poll(min(0.5, max(0.05, deadline.left())))
        if msg is None:
            return
        if msg.error():
            if msg.error().code() == -191:  # _PARTITION_EOF
                return
            raise RecordError(f"consume: {msg.error()}")
        self.seen[msg.key().decode()] = zlib.crc32(msg.value() or b"")
        where = (msg.topic(), msg.partition())
        self.next_offsets[where] = max(self.next_offsets.get(where, 0), msg.offset() + 1)

    def wait_assigned(self, deadline: _Deadline) -> None:
        while not self.assigned:
            deadline.check("waiting for the group assignment")
            self._poll(deadline)

    def read(self, expected: dict[str, bytes], deadline: _Deadline) -> None:
        """Poll until every key of `expected` was seen; raise if a value differs."""
        missing = [key for key in expected if key not in self.seen]
        while missing:
            deadline.check(f"consuming ({len(expected) - len(missing)}/{len(expected)} messages)")
            self._poll(deadline)
            missing = [key for key in missing if key not in self.seen]
        wrong = [key for key, value in expected.items() if self.seen[key] != zlib.crc32(value)]
        if wrong:
            raise RecordError(f"consume: {len(wrong)} messages differ from what was produced, e.g. {wrong[:3]}")

    def close(self, commit: bool = True) -> None:
        try:
            if commit and self.next_offsets:
                # Explicit offsets: an OffsetCommit goes out even if a rebalance dropped the stored ones.
                from confluent_kafka import TopicPartition

                offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self.next_offsets.items())]
                self.consumer.commit(offsets=offsets, asynchronous=False)  # OffsetCommit
        finally:
            self.consumer.close()  # LeaveGroup


def _scenario_produce_consume(options: RecordOptions, deadline: _Deadline) -> dict:
    codec = options.codec
    topic = f"kwire-{options.scenario}-{codec}"
    producer, bootstrap = mock_cluster_host(options, compression_type=codec, linger_ms=20)
    topic, partitions = _create_spread_topic(producer, topic, options.broker_count, deadline)
    items = [(f"key-{codec}-{i}", _value(codec, i)) for i in range(options.message_count)]
    # Two flushes: at least two ProduceRequests, each with a multi-record batch.
    produced = _produce(producer, topic, items, deadline, flush_every=max(1, (len(items) + 1) // 2))
    reader = _GroupReader(options, bootstrap, topic)
    try:
        reader.read(dict(items), deadline)
    except BaseException:
        reader.close(commit=False)
        raise
    reader.close()
    consumed = len(reader.seen)
    producer.close()
    return {"bootstrap": bootstrap, "topic": topic, "partitions": partitions, "produced": produced,
            "consumed": consumed, "keys": f"key-{codec}-0..{len(items) - 1}"}


def _scenario_share(options: RecordOptions, deadline: _Deadline) -> dict:
    import confluent_kafka

    if not hasattr(confluent_kafka, "ShareConsumer"):
        raise RecordError(f"confluent-kafka {_versions()['confluent_kafka']} has no ShareConsumer")
    codec = options.codec
    topic = f"kwire-share-{codec}"
    producer, bootstrap = mock_cluster_host(options, compression_type=codec, linger_ms=20)
    partitions = _create_topic(producer, topic, deadline)
    consumer = confluent_kafka.ShareConsumer(
        _conf("kwire-share-consumer", options, bootstrap, group_id="kwire-share-group",
              share_acknowledgement_mode="explicit"))
    items = [(f"key-{codec}-{i}", _value(codec, i)) for i in range(options.message_count)]
    seen: dict[str, bytes] = {}
    try:
        consumer.subscribe([topic])
        # A share group starts at the log end: join (ShareGroupHeartbeat) and fetch once before producing.
        warmup_end = time.monotonic() + 2.0
        while time.monotonic() < warmup_end:
            consumer.poll(0.5)
        produced = _produce(producer, topic, items, deadline)
        while len(seen) < len(items):
            deadline.check(f"share-consuming ({len(seen)}/{len(items)} messages)")
            for msg in consumer.poll(1.0):
                if msg.error():
                    raise RecordError(f"share consume: {msg.error()}")
                seen[msg.key().decode()] = msg.value()
                consumer.acknowledge(msg)
            consumer.commit_sync()  # ShareAcknowledge
    finally:
        consumer.close()
    if seen != dict(items):
        raise RecordError("share consume: messages differ from what was produced")
    producer.close()
    return {"bootstrap": bootstrap, "topic": topic, "partitions": partitions, "produced": produced,
            "consumed": len(seen), "keys": f"key-{codec}-0..{len(items) - 1}"}


def _scenario_kcat(options: RecordOptions, deadline: _Deadline) -> dict:
    codec = options.codec
    topic = f"kwire-kcat-{codec}"
    host, bootstrap = mock_cluster_host(options, client_id="kwire-mock-host")
    partitions = _create_topic(host, topic, deadline)
    debug = ["-X", f"debug={options.debug}"]
    items = [(f"key-kcat-{i}", f"value-kcat-{codec}-{i} kcat speaks older protocol versions") for i in
             range(options.message_count)]

    def kcat(client_id: str, *args: str, stdin: str | None = None) -> str:
        argv = ["kcat", "-b", bootstrap, "-X", f"client.id={client_id}", *debug, *args]
        proc = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, text=True,
                              timeout=max(1.0, deadline.left()))
        if proc.returncode != 0:
            raise RecordError(f"kcat {' '.join(args)} exited {proc.returncode}")
        return proc.stdout

    kcat("kcat-metadata", "-L", "-t", topic)
    kcat("kcat-producer", "-P", "-t", topic, "-K", "\t", "-z", codec,
         stdin="".join(f"{k}\t{v}\n" for k, v in items))
    # No -q: kcat's quiet mode also silences librdkafka's debug log.
    out = kcat("kcat-consumer", "-C", "-t", topic, "-o", "beginning", "-e", "-f", "%k\t%s\n")
    seen = dict(line.split("\t", 1) for line in out.splitlines() if line)
    if seen != dict(items):
        raise RecordError(f"kcat consumed {len(seen)} of {len(items)} messages, or different ones")
    # A balanced (group) consumer too: JoinGroup/SyncGroup/OffsetCommit at kcat's versions.
    out = kcat("kcat-group-consumer", "-G", f"kwire-kcat-group-{codec}", topic, "-o", "beginning", "-e",
               "-f", "%k\t%s\n")
    seen_group = dict(line.split("\t", 1) for line in out.splitlines() if line)
    if seen_group != dict(items):
        raise RecordError(f"kcat -G consumed {len(seen_group)} of {len(items)} messages, or different ones")
    host.close()
    return {"bootstrap": bootstrap, "topic": topic, "partitions": partitions, "produced": len(items),
            "consumed": len(seen), "keys": f"key-kcat-0..{len(items) - 1}"}


def _scenario_many_small(options: RecordOptions, deadline: _Deadline) -> dict:
    topic = "kwire-many-small"
    # One message per batch and no lingering: each message is its own ProduceRequest (one partition).
    in_flight = {"max_in_flight_requests_per_connection": options.max_in_flight} if options.max_in_flight else {}
    producer, bootstrap = mock_cluster_host(options, compression_type=options.codec, linger_ms=0,
                                            batch_num_messages=1, **in_flight)
    partitions = _create_topic(producer, topic, deadline)
    items = [(f"k{i}", f"v{i}".encode()) for i in range(options.message_count)]
    produced = _produce(producer, topic, items, deadline, partition=0)
    producer.close()
    return {"bootstrap": bootstrap, "topic": topic, "partitions": partitions, "produced": produced,
            "consumed": 0, "keys": f"k0..k{len(items) - 1}"}


def _scenario_bulk_fetch(options: RecordOptions, deadline: _Deadline) -> dict:
    topic = f"kwire-bulk-{options.codec}"
    producer, bootstrap = mock_cluster_host(options, compression_type=options.codec, linger_ms=20)
    partitions = _create_topic(producer, topic, deadline)
    rng = random.Random(20240601)  # incompressible but reproducible payload
    items = [(f"bulk-{i}", rng.randbytes(options.value_size)) for i in range(options.message_count)]
    # The mock cluster keeps only a few MB per partition, so fetch in lockstep with producing:
    # a chunk of _BULK_CHUNK bytes is produced, then read back before the next one.
    per_chunk = max(1, _BULK_CHUNK // max(1, options.value_size))
    reader = _GroupReader(options, bootstrap, topic, client_id="kwire-bulk-consumer")
    produced = 0
    try:
        reader.wait_assigned(deadline)
        for first in range(0, len(items), per_chunk):
            chunk = items[first:first + per_chunk]
            produced += _produce(producer, topic, chunk, deadline)
            reader.read(dict(chunk), deadline)
    except BaseException:
        reader.close(commit=False)
        raise
    reader.close()
    producer.close()
    return {"bootstrap": bootstrap, "topic": topic, "partitions": partitions, "produced": produced,
            "consumed": len(reader.seen), "bytes": sum(len(v) for _, v in items),
            "keys": f"bulk-0..{len(items) - 1}"}


_SCENARIO_RUNNERS = {
    "produce-consume": _scenario_produce_consume,
    "multi-broker": _scenario_produce_consume,
    "share": _scenario_share,
    "kcat": _scenario_kcat,
    "many-small": _scenario_many_small,
    "bulk-fetch": _scenario_bulk_fetch,
}


def run_scenario(options: RecordOptions) -> dict:
    """Run one scenario here (no namespace, no capture); librdkafka logs go to stderr. Returns a summary."""
    deadline = _Deadline(options.timeout)
    started = time.time()
    summary = _SCENARIO_RUNNERS[options.scenario](options, deadline)
    summary.update(scenario=options.scenario, codec=options.codec, brokers=options.broker_count,
                   seconds=round(time.time() - started, 3), **_versions())
    return summary


# ----------------------------------------------------------------------------------------------
# CLI


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--scenario", type=click.Choice(SCENARIOS), default="produce-consume", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("capture.pcap"),
              show_default=True, help="capture file; the truth log is written next to it as OUT.truth.log")
@click.option("--pcapng", is_flag=True, help="write pcapng (tcpdump's pcap converted by editcap)")
@click.option("--nano", is_flag=True, help="nanosecond timestamps")
@click.option("--codec", type=click.Choice(CODECS), default="none", show_default=True)
@click.option("--brokers", type=int, default=None, help="mock brokers (default: 3 for multi-broker, else 1)")
@click.option("--messages", type=int, default=None, help="messages to produce (default per scenario)")
@click.option("--bytes", "volume", type=int, default=4 * 1024 * 1024, show_default=True,
              help="bulk-fetch: bytes to produce then fetch")
@click.option("--value-size", type=int, default=8192, show_default=True, help="bulk-fetch: bytes per value")
@click.option("--debug", default="protocol", show_default=True, help="librdkafka debug contexts")
@click.option("--group-protocol", type=click.Choice(GROUP_PROTOCOLS), default="classic", show_default=True)
@click.option("--timeout", type=float, default=120.0, show_default=True, help="seconds for the scenario")
@click.option("--max-in-flight", type=click.IntRange(min=1), default=None,
              help="many-small: requests in flight per connection (1: each Produce waits for its answer, about "
                   "2 packets per exchange however busy the machine; default: librdkafka's)")
@click.option("--in-namespace", is_flag=True, hidden=True,
              help="run the scenario here, without namespace or capture (what the recorder runs)")
def main(scenario, out, pcapng, nano, codec, brokers, messages, volume, value_size, debug, group_protocol,
         timeout, max_in_flight, in_namespace) -> None:
    """Record real Kafka traffic (librdkafka mock cluster, real clients) with a ground-truth log."""
    try:
        options = RecordOptions(scenario=scenario, out=out, pcapng=pcapng or out.suffix == ".pcapng", nano=nano,
                                codec=codec, brokers=brokers, messages=messages, bytes=volume,
                                value_size=value_size, debug=debug, group_protocol=group_protocol,
                                timeout=timeout, max_in_flight=max_in_flight)
        if in_namespace:
            try:
                summary = run_scenario(options)
            except Exception as exc:  # reported to the recorder as data, on stdout
                print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
                sys.exit(1)
            print(json.dumps(summary, sort_keys=True), flush=True)
            return
        result = record(options)
    except RecordError as exc:
        click.echo(f"record_capture: {exc}", err=True)
        sys.exit(1)
    size = result.capture.stat().st_size
    click.echo(f"{result.capture}: {size} bytes, {result.packets} packets; truth log {result.truth_log}")
    click.echo(json.dumps(dataclasses.asdict(result), default=str, sort_keys=True))


if __name__ == "__main__":
    main()
