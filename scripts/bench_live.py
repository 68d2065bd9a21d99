#!/usr/bin/env python3
"""Traffic for `kwire live`, and how many packets per second it sustains.

Two commands:

    python scripts/bench_live.py traffic --seconds 10 [--rate 200] [--flood] [--no-share]
        Real Kafka traffic on the loopback for a while: librdkafka's in-process mock cluster
        (confluent-kafka, `test.mock.num.brokers`), a producer, a consumer group member and, when
        confluent-kafka has one, a share-group consumer (ShareFetch / ShareAcknowledge). Prints the
        bootstrap address as one JSON line as soon as the cluster is up, and a summary at the end.
        --flood: no pacing, one message per request, several producers (as many packets as it can).

    python scripts/bench_live.py record --out FILE [--seconds 3] [--rate 30]
        `traffic` in a fresh network namespace (only its loopback, MTU 1500, offloads off) under
        tcpdump: a small real capture with Produce, Fetch, ShareFetch and ShareAcknowledge (how
        tests/live/data/mixed.pcap was made). Needs root, ip, ethtool and tcpdump.

    python scripts/bench_live.py bench [--seconds 10] [--rates 500,2000,0] [--replay FILE]
        Runs kwire's live path headless (LiveCapture on lo -> Feeder -> DashboardState, the screen
        snapshot twice a second as the dashboard takes it) while `traffic` runs at each rate
        (0: --flood), and reports per run: packets the sniffer received per second, packets the
        pipeline processed per second, exchanges per second, queue and kernel drops. With --replay,
        also the offline ceiling: a capture replayed at --speed 0 through the same feeder.
        Needs root (packet socket on lo).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOPIC = "kwire-live"


# ----------------------------------------------------------------------------------------------
# traffic


def traffic(seconds: float, rate: float, flood: bool, share: bool, brokers: int = 3) -> dict:
    import confluent_kafka
    from confluent_kafka import Consumer, Producer

    quiet = {"log_level": 0}
    host = Producer({"test.mock.num.brokers": brokers, "client.id": "live-producer", "linger.ms": 0 if flood else 5,
                     **({"batch.num.messages": 1, "acks": 1} if flood else {}), **quiet})
    metadata = host.list_topics(timeout=15)
    bootstrap = ",".join(f"{b.host}:{b.port}" for b in sorted(metadata.brokers.values(), key=lambda b: b.id))
    for _ in range(100):  # the mock cluster creates the topic on first use
        md = host.list_topics(TOPIC, timeout=5)
        if md.topics.get(TOPIC) is not None and md.topics[TOPIC].error is None:
            break
        time.sleep(0.05)
    print(json.dumps({"bootstrap": bootstrap}), flush=True)

    stop = threading.Event()
    counts = {"produced": 0, "consumed": 0, "share_consumed": 0}
    errors: list[str] = []

    def consume() -> None:
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "live-group", "client.id": "live-consumer",
                             "auto.offset.reset": "earliest", "enable.auto.commit": True,
                             "auto.commit.interval.ms": 500, **quiet})
        consumer.subscribe([TOPIC])
        try:
            while not stop.is_set():
                msg = consumer.poll(0.2)
                if msg is not None and not msg.error():
                    counts["consumed"] += 1
        finally:
            consumer.close()

    def share_consume() -> None:
        consumer = confluent_kafka.ShareConsumer({"bootstrap.servers": bootstrap, "group.id": "live-share-group",
                                                  "client.id": "live-share-consumer",
                                                  "share.acknowledgement.mode": "explicit", **quiet})
        consumer.subscribe([TOPIC])
        try:
            while not stop.is_set():
                for msg in consumer.poll(0.2):
                    if not msg.error():
                        counts["share_consumed"] += 1
                        consumer.acknowledge(msg)
                consumer.commit_async()
        finally:
            consumer.close()

    def guarded(target):
        def run(*args):
            try:
                target(*args)
            except Exception as exc:  # noqa: BLE001 - reported in the summary
                errors.append(f"{target.__name__}: {exc}")
        return run

    threads = [threading.Thread(target=guarded(consume), daemon=True)]
    if share and hasattr(confluent_kafka, "ShareConsumer"):
        threads.append(threading.Thread(target=guarded(share_consume), daemon=True))
    producers = [host]
    if flood:
        producers += [Producer({"bootstrap.servers": bootstrap, "client.id": f"live-flood-{i}", "linger.ms": 0,
                                "batch.num.messages": 1, "acks": 1, **quiet}) for i in range(2)]
    for t in threads:
        t.start()

    def produce(producer) -> None:
        value = b"kwire live " * 8
        end = time.monotonic() + seconds
        interval = 0 if flood or rate <= 0 else 1.0 / rate
        next_at = time.monotonic()
        i = 0
        while time.monotonic() < end:
            try:
                producer.produce(TOPIC, key=str(i).encode(), value=value)
                counts["produced"] += 1
            except BufferError:
                producer.poll(0.01)
                continue
            i += 1
            producer.poll(0)
            if interval:
                next_at += interval
                delay = next_at - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
        producer.flush(10)

    workers = [threading.Thread(target=guarded(produce), args=(p,), daemon=True) for p in producers[1:]]
    for w in workers:
        w.start()
    guarded(lambda: produce(host))()
    for w in workers:
        w.join(15)
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(15)
    return {"bootstrap": bootstrap, **counts, "errors": errors}


# ----------------------------------------------------------------------------------------------
# record


def namespace_argv(ns: str, *argv: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *argv]


def make_namespace(ns: str) -> None:
    """A network namespace whose loopback looks like a network: MTU 1500, no segmentation offload."""
    subprocess.run(["ip", "netns", "add", ns], check=True, capture_output=True)
    subprocess.run(namespace_argv(ns, "ip", "link", "set", "lo", "mtu", "1500", "up"), check=True,
                   capture_output=True)
    subprocess.run(namespace_argv(ns, "ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"),
                   capture_output=True)


def delete_namespace(ns: str) -> None:
    subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def record(out: str, seconds: float, rate: float) -> dict:
    ns = f"kwire-live-rec-{os.getpid()}"
    make_namespace(ns)
    try:
        dump = subprocess.Popen(namespace_argv(ns, "tcpdump", "-i", "lo", "-n", "-s", "0", "-U", "-w", out, "tcp"),
                                stderr=subprocess.PIPE, text=True)
        try:
            line = dump.stderr.readline()
            if "listening" not in line:
                raise RuntimeError(f"tcpdump: {line.strip()}")
            run = subprocess.run(namespace_argv(ns, sys.executable, os.path.abspath(__file__), "traffic",
                                                "--seconds", str(seconds), "--rate", str(rate)),
                                 capture_output=True, text=True, timeout=seconds + 120)
            time.sleep(0.3)
        finally:
            dump.terminate()
            rest = dump.communicate(timeout=20)[1]
        summary = json.loads(run.stdout.strip().splitlines()[-1])
        summary["tcpdump"] = " ".join(rest.split())
        return summary
    finally:
        delete_namespace(ns)


# ----------------------------------------------------------------------------------------------
# bench


def _traffic_process(seconds: float, rate: float) -> subprocess.Popen:
    argv = [sys.executable, os.path.abspath(__file__), "traffic", "--seconds", str(seconds)]
    argv += ["--flood"] if rate == 0 else ["--rate", str(rate)]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def bench_live(seconds: float, rate: float) -> dict:
    sys.path.insert(0, ROOT)
    from kwire.live.feeder import Feeder
    from kwire.live.sources import SniffSource
    from kwire.live.state import DashboardState

    source = SniffSource("lo", "tcp")
    state = DashboardState("live", "lo")
    feeder = Feeder(source, state)
    feeder.start()
    proc = _traffic_process(seconds, rate)
    proc.stdout.readline()  # the cluster is up
    started = time.monotonic()
    cpu0 = time.process_time()
    stats = source.capture.stats
    first = (stats.packets, stats.taken)
    snaps = 0
    worst_snapshot = 0.0
    while proc.poll() is None:
        time.sleep(0.5)
        t0 = time.monotonic()
        feeder.snapshot()
        worst_snapshot = max(worst_snapshot, time.monotonic() - t0)
        snaps += 1
    elapsed = time.monotonic() - started
    # Let the queue drain, then stop.
    drain_end = time.monotonic() + 30
    while source.capture.queue_length and time.monotonic() < drain_end:
        time.sleep(0.1)
    drained = time.monotonic() - started
    cpu = time.process_time() - cpu0
    snap = feeder.snapshot()
    feeder.stop()
    received = stats.packets - first[0]
    processed = stats.taken - first[1]
    return {"rate": "flood" if rate == 0 else rate, "seconds": round(elapsed, 2),
            "received_pps": round(received / elapsed), "processed_pps": round(processed / drained),
            "exchanges": snap.exchanges, "exchanges_per_s": round(snap.exchanges / drained),
            "kwire_cpu_s": round(cpu, 2), "processed_per_cpu_s": round(processed / cpu) if cpu else None,
            "load": round(os.getloadavg()[0], 1), "queue_drops": stats.queue_drops, "kernel_drops": stats.kernel_drops, "gaps": snap.health.gaps,
            "max_queue": stats.max_queue, "drop_episodes": stats.drop_episodes, "worst_snapshot_ms": round(worst_snapshot * 1000, 1)}


def bench_replay(path: str) -> dict:
    sys.path.insert(0, ROOT)
    from kwire.live.feeder import Feeder
    from kwire.live.sources import ReplaySource
    from kwire.live.state import DashboardState

    source = ReplaySource([path], 0)
    state = DashboardState("replay", path)
    feeder = Feeder(source, state)
    t0 = time.monotonic()
    cpu0 = time.process_time()
    feeder.start()
    while not feeder.wait(0.5):
        feeder.snapshot()
    elapsed = time.monotonic() - t0
    cpu = time.process_time() - cpu0
    snap = feeder.snapshot()
    return {"replay": path, "packets": source.packets, "exchanges": snap.exchanges, "seconds": round(elapsed, 2),
            "cpu_s": round(cpu, 2), "packets_per_s": round(source.packets / elapsed),
            "packets_per_cpu_s": round(source.packets / cpu), "exchanges_per_cpu_s": round(snap.exchanges / cpu),
            "load": round(os.getloadavg()[0], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("traffic")
    t.add_argument("--seconds", type=float, default=10.0)
    t.add_argument("--rate", type=float, default=200.0, help="messages per second (0: as fast as possible)")
    t.add_argument("--flood", action="store_true")
    t.add_argument("--no-share", action="store_true")
    t.add_argument("--brokers", type=int, default=3)
    r = sub.add_parser("record")
    r.add_argument("--out", required=True)
    r.add_argument("--seconds", type=float, default=3.0)
    r.add_argument("--rate", type=float, default=30.0)
    b = sub.add_parser("bench")
    b.add_argument("--seconds", type=float, default=10.0)
    b.add_argument("--rates", default="500,2000,0", help="comma-separated message rates; 0 floods")
    b.add_argument("--replay", default=None, help="also replay this capture at full speed")
    args = parser.parse_args()
    if args.command == "traffic":
        summary = traffic(args.seconds, args.rate, args.flood or args.rate == 0, not args.no_share, args.brokers)
        print(json.dumps(summary), flush=True)
        return
    if args.command == "record":
        print(json.dumps(record(args.out, args.seconds, args.rate)), flush=True)
        return
    if args.replay:
        print(json.dumps(bench_replay(args.replay)), flush=True)
    for rate in (float(r) for r in args.rates.split(",") if r.strip()):
        print(json.dumps(bench_live(args.seconds, rate)), flush=True)


if __name__ == "__main__":
    main()
