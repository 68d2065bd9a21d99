#!/usr/bin/env python3
"""Traffic for `kwire live`, and how many packets per second it sustains.

Three commands:

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

    sudo python scripts/bench_live.py bench [--pps 20000,40000,50000,60000] [--seconds 60]
                                            [--capture FILE] [--markdown FILE] [--scrape-every S]
                                            [-- KWIRE_LIVE_OPTIONS]
        How fast `kwire live` keeps up: a real capture replayed onto a veth pair inside a network
        namespace of its own with Debian's tcpreplay at each rate (--pps: the first pps x seconds
        packets of the capture, so no connection repeats), `kwire live -i <the other end> --json`
        capturing. Per rate: packets sent and seen, kernel and queue drops, exchanges by status
        against what kwire's pipeline makes of the same file, CPU of kwire's two processes (in
        cores), the load average; then the highest rate with no drop and every exchange paired. The
        capture defaults to a many-small recording large enough for the highest rate
        (scripts/record_capture.py, recorded once into /tmp/kwire-bench/live). Needs root, ip,
        ethtool, editcap and tcpreplay. With `-- --metrics 127.0.0.1:9464 --no-screen` and
        `--scrape-every 5` the exporter is on and scraped (OpenMetrics, as Prometheus asks) every 5 s
        from inside the namespace; the row says how many scrapes answered and the slowest.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
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
# bench: a real capture replayed onto a veth pair at set rates, `kwire live` on the other end

VETH_TX, VETH_RX = "kwb-tx", "kwb-rx"
BENCH_DIR = "/tmp/kwire-bench/live"
READY_S = 60.0     # the longest kwire may take to open its capture
DRAIN_S = 3.0      # after the replay, before kwire is stopped: the last blocks and batches go through


def _run(argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs)


def capture_for(rates: list[int], seconds: float, capture: str | None) -> str:
    """The capture to replay: the one given, else a many-small recording large enough for the highest
    rate (recorded once by scripts/record_capture.py, about 2 packets per exchange)."""
    if capture:
        return capture
    messages = int(max(rates) * seconds / 2 * 1.05)
    path = os.path.join(BENCH_DIR, f"many-small-{messages}.pcap")
    if not os.path.exists(path):
        os.makedirs(BENCH_DIR, exist_ok=True)
        print(f"recording {path} ({messages} messages)...", file=sys.stderr, flush=True)
        _run([sys.executable, os.path.join(ROOT, "scripts", "record_capture.py"), "--scenario", "many-small",
              "--messages", str(messages), "--debug", "feature", "--timeout", str(max(600, messages // 2000)),
              "--out", path], timeout=max(900, messages // 1000))
    return path


def prefix_of(capture: str, packets: int) -> tuple[str, dict]:
    """The first `packets` packets of the capture (editcap), and what kwire's own pipeline makes of
    that file: the exchanges by status the live run is held to (both cached beside it)."""
    base = os.path.join(BENCH_DIR, f"{os.path.basename(capture)}.first{packets}")
    path, counts = base + ".pcap", base + ".json"
    if not os.path.exists(path):
        os.makedirs(BENCH_DIR, exist_ok=True)
        _run(["editcap", "-F", "pcap", "-r", capture, path, f"1-{packets}"])
    if not os.path.exists(counts):
        sys.path.insert(0, ROOT)
        from kwire.pipeline import RunSummary, analyze_files

        summary = RunSummary()
        for _ in analyze_files([path], decode=False, summary=summary):
            pass
        with open(counts, "w") as f:
            json.dump({"packets": summary.capture.packets, "total": summary.exchanges, "paired": summary.paired,
                       "no_response": summary.no_response, "no_request": summary.no_request}, f)
    with open(counts) as f:
        return path, json.load(f)


def make_veth_namespace(ns: str) -> None:
    """A namespace holding a veth pair: tcpreplay sends on one end, kwire captures on the other. No
    offloads merge or split what tcpreplay sends; nothing but the capture reads the packets (they are
    addressed to no one here)."""
    _run(["ip", "netns", "add", ns])
    _run(["ip", "-n", ns, "link", "set", "lo", "up"])  # for a scraper of kwire's exporter (--scrape-every)
    _run(["ip", "-n", ns, "link", "add", VETH_TX, "type", "veth", "peer", "name", VETH_RX])
    for dev in (VETH_TX, VETH_RX):
        _run(["ip", "-n", ns, "link", "set", dev, "mtu", "65535", "up"])
        subprocess.run(namespace_argv(ns, "ethtool", "-K", dev, "gro", "off", "tso", "off", "gso", "off"),
                       capture_output=True)


def _ifindex(ns: str, dev: str) -> int:
    return int(_run(["ip", "-n", ns, "-o", "link", "show", dev]).stdout.split(":", 1)[0])


def _socket_on(ns: str, ifindex: int) -> bool:
    """Has a packet socket been bound to this interface (/proc/net/packet of the namespace)?"""
    lines = _run(namespace_argv(ns, "cat", "/proc/net/packet")).stdout.splitlines()[1:]
    return any(int(line.split()[4]) == ifindex for line in lines if len(line.split()) > 4)


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


SCRAPER = r"""
import json, signal, sys, time, urllib.request
url, every = sys.argv[1], float(sys.argv[2])
scrapes, failures, stop = [], [], []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
next_at = time.monotonic()
while not stop:
    t0 = time.monotonic()
    try:
        req = urllib.request.Request(url, headers={"Accept": "application/openmetrics-text; version=1.0.0"})
        with urllib.request.urlopen(req, timeout=10) as r:
            size = len(r.read())
        scrapes.append((time.monotonic() - t0, size))
    except OSError as exc:
        failures.append(str(exc))
    next_at += every
    while not stop and time.monotonic() < next_at:
        time.sleep(0.05)
print(json.dumps({"scrapes": len(scrapes), "failures": len(failures), "first_failure": failures[:1],
                  "max_s": max((s for s, _ in scrapes), default=None),
                  "max_bytes": max((b for _, b in scrapes), default=None)}))
"""


def start_scraper(ns: str, extra: list[str], every: float) -> subprocess.Popen | None:
    """A scraper of kwire's exporter (the address of `--metrics` in `extra`) every `every` seconds,
    inside the namespace, asking for OpenMetrics as Prometheus does."""
    if not every or "--metrics" not in extra:
        return None
    address = extra[extra.index("--metrics") + 1]
    host, _, port = address.rpartition(":")
    url = f"http://{host.strip('[]') or '127.0.0.1'}:{port}/metrics"
    return subprocess.Popen(namespace_argv(ns, sys.executable, "-c", SCRAPER, url, str(every)),
                            stdout=subprocess.PIPE, text=True)


def stop_scraper(scraper: subprocess.Popen | None) -> dict | None:
    if scraper is None:
        return None
    scraper.send_signal(signal.SIGTERM)
    out, _ = scraper.communicate(timeout=60)
    return json.loads(out.strip().splitlines()[-1]) if out.strip() else None


def bench_rate(ns: str, capture: str, pps: int, seconds: float, extra: list[str], scrape_every: float = 0) -> dict:
    """One rate: the first pps x seconds packets of the capture, replayed at pps, against kwire live
    (and a scraper of its exporter every `scrape_every` seconds when `extra` has --metrics)."""
    path, expected = prefix_of(capture, int(pps * seconds))
    kwire = subprocess.Popen(namespace_argv(ns, sys.executable, "-m", "kwire", "live", "-i", VETH_RX, "--json",
                                            *extra), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        ifindex, deadline = _ifindex(ns, VETH_RX), time.monotonic() + READY_S
        while not _socket_on(ns, ifindex):
            if kwire.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"kwire live did not start: {kwire.stderr.read().strip()}")
            time.sleep(0.1)
        time.sleep(0.5)  # the capture process is forked right after the socket is bound
        load = os.getloadavg()[0]
        processes = [kwire.pid, *_children(kwire.pid)]
        cpu0 = [_cpu_s(p) for p in processes]
        scraper = start_scraper(ns, extra, scrape_every)
        try:
            replay = _run(namespace_argv(ns, "tcpreplay", "-T", "nano", "-i", VETH_TX, "--pps", str(pps), path),
                          timeout=seconds * 4 + 120)
            cpu = [_cpu_s(p) - c for p, c in zip(processes, cpu0)]
            time.sleep(DRAIN_S)
        finally:
            scraped = stop_scraper(scraper)
        kwire.send_signal(signal.SIGTERM)
        out, err = kwire.communicate(timeout=180)
    finally:
        if kwire.poll() is None:
            kwire.kill()
            kwire.communicate()
    doc = json.loads(out)
    sent = re.search(r"Actual: (\d+) packets .* in ([0-9.]+) seconds", replay.stdout)
    rated = re.search(r"Rated: .*?([0-9.]+) pps", replay.stdout)
    return {"pps": pps, "sent": int(sent[1]), "replay_s": float(sent[2]), "rated_pps": float(rated[1]),
            "packets": doc["packets"], "kernel_drops": doc["kernel_drops"], "queue_drops": doc["queue_drops"],
            "exchanges": doc["exchanges"], "expected": expected, "gaps": doc["gaps"],
            "lag_s": doc["figures_lag_max_s"],
            "cpu_capture": round(cpu[1] / float(sent[2]), 2) if len(cpu) > 1 else None,
            "cpu_dashboard": round(cpu[0] / float(sent[2]), 2), "load": round(load, 2), "error": doc["error"],
            "scrapes": scraped, "stderr": err.strip().splitlines()[-1:]}


def clean(row: dict) -> bool:
    """No packet dropped anywhere and every exchange the capture holds paired as the file says."""
    exchanges, expected = row["exchanges"], row["expected"]
    return (row["packets"] == row["sent"] and not row["kernel_drops"] and not row["queue_drops"]
            and all(exchanges[k] == expected[k] for k in ("paired", "no_response", "no_request")))


def table(rows: list[dict], seconds: float) -> str:
    lines = ["| rate asked (pps) | sent (pps) | packets sent | packets seen | kernel drops | queue drops | "
             "paired / in the capture | no_response | no_request | figures behind, max s | "
             "CPU capture / dashboard process | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        e, x = r["exchanges"], r["expected"]
        lines.append(f"| {r['pps']:,} | {r['rated_pps']:,.0f} | {r['sent']:,} | {r['packets']:,} | "
                     f"{r['kernel_drops']:,} | {r['queue_drops']:,} | {e['paired']:,} / {x['paired']:,} | "
                     f"{e['no_response']:,} ({x['no_response']:,}) | {e['no_request']:,} ({x['no_request']:,}) | "
                     f"{r['lag_s']:.2f} | {r['cpu_capture']:.2f} / {r['cpu_dashboard']:.2f} | {r['load']:.2f} |")
    good = [r["pps"] for r in rows if clean(r)]
    lines.append("")
    lines.append(f"Highest rate with no drop and every exchange paired ({seconds:g} s each): "
                 + (f"{max(good):,} packets/s" if good else "none of the rates tried"))
    return "\n".join(lines)


def bench(rates: list[int], seconds: float, capture: str | None, markdown: str | None, extra: list[str],
          scrape_every: float = 0) -> None:
    capture = capture_for(rates, seconds, capture)
    ns = f"kwire-bench-{os.getpid()}"
    make_veth_namespace(ns)
    rows = []
    try:
        for pps in sorted(rates):
            row = bench_rate(ns, capture, pps, seconds, extra, scrape_every)
            rows.append(row)
            print(json.dumps(row), flush=True)
    finally:
        delete_namespace(ns)
    text = table(rows, seconds)
    print(text)
    if markdown:
        with open(markdown, "w") as f:
            f.write(text + "\n")


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
    b.add_argument("--pps", default="20000,40000,50000,60000", help="comma-separated packet rates")
    b.add_argument("--seconds", type=float, default=60.0, help="seconds of replay per rate")
    b.add_argument("--capture", default=None, help="the capture to replay (default: record a many-small one)")
    b.add_argument("--markdown", default=None, help="also write the table to this file")
    b.add_argument("--scrape-every", type=float, default=0, metavar="S",
                   help="with --metrics ADDRESS among the kwire options: scrape it every S seconds")
    b.add_argument("kwire_options", nargs="*", help="more options for kwire live (after --)")
    args = parser.parse_args()
    if args.command == "traffic":
        summary = traffic(args.seconds, args.rate, args.flood or args.rate == 0, not args.no_share, args.brokers)
        print(json.dumps(summary), flush=True)
        return
    if args.command == "record":
        print(json.dumps(record(args.out, args.seconds, args.rate)), flush=True)
        return
    rates = [int(float(x)) for x in args.pps.split(",") if x.strip()]
    bench(rates, args.seconds, args.capture, args.markdown, args.kwire_options, args.scrape_every)


if __name__ == "__main__":
    main()
