"""Kafka over TLS through the whole pipeline, on real captures (captures/tls/): with the clients' key
log, the TLS leg (client <-> stunnel) gives exactly the exchanges of the plaintext leg (stunnel <->
broker) of the same capture: api, version, correlation id, client id, request and response bodies;
the key log works given as a file (`--keylog`) and carried inside a pcapng (Decryption Secrets
Block). Without it every TLS connection is named, with why it was not decrypted, and the closing
lines name --keylog."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from kwire.capture.files import read_captures
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import exchange_json_line
from kwire.tls import KeyLog
from tests.capture import builders as b

TLS = Path(__file__).resolve().parent.parent / "captures" / "tls"
CAPTURES = sorted(TLS.glob("*.pcap"))


def meta(capture: Path) -> dict:
    first = Path(str(capture) + ".truth.log").read_text().splitlines()[0]
    return json.loads(first.split(":", 1)[1])


def keys(capture: Path) -> KeyLog:
    log = KeyLog()
    log.add_text(Path(str(capture) + ".keys").read_text())
    return log


def conversations(exchanges, port: int) -> Counter:
    """The exchanges with a broker on `port`, per connection, as what both legs must share."""
    by_conn: dict[int, list] = {}
    for ex in exchanges:
        if ex.broker.endswith(f":{port}"):
            doc = json.loads(exchange_json_line(ex))
            by_conn.setdefault(ex.connection_id, []).append(json.dumps(
                [doc["api"], doc["api_version"], doc["correlation_id"], doc["client_id"], doc["status"],
                 doc["request"], doc["response"]], sort_keys=True))
    return Counter(tuple(v) for v in by_conn.values())


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_the_decrypted_leg_gives_the_plaintext_legs_exchanges(capture: Path):
    info = meta(capture)
    summary = RunSummary()
    exchanges = list(analyze_files([str(capture)], keys=keys(capture), summary=summary))
    tls = conversations(exchanges, info["tls_port"])
    plain = conversations(exchanges, info["broker_port"])
    assert sum(tls.values()) >= 3 and tls == plain
    assert summary.tls.decrypted >= 3
    assert all(row["decrypted"] or row["reason"].startswith("no handshake") for row in summary.tls.rows)


def test_keys_inside_a_pcapng_decrypt_without_a_key_log_file(tmp_path):
    capture = next(c for c in CAPTURES if "tls13-aes128" in c.name)
    text = Path(str(capture) + ".keys").read_bytes()
    dsb = b.block(0x0000000A, struct.pack("<II", 0x544C534B, len(text)) + text)
    packets = list(read_captures([capture]))
    body = b.shb() + b.idb(1, tsresol=9) + dsb + b"".join(b.epb(0, p.ts_ns, p.data) for p in packets)
    path = tmp_path / "with-secrets.pcapng"
    path.write_bytes(body)
    with_file = conversations(analyze_files([str(capture)], keys=keys(capture)), meta(capture)["tls_port"])
    inside = RunSummary()
    found = conversations(analyze_files([str(path)], summary=inside), meta(capture)["tls_port"])
    assert found == with_file and sum(found.values()) >= 3
    assert inside.tls.decrypted >= 3 and inside.keylog_given


def test_without_keys_every_tls_connection_is_named_with_its_reason():
    capture = next(c for c in CAPTURES if "tls12-aes256gcm" in c.name)
    run = subprocess.run([sys.executable, "-m", "kwire", "inspect", "--json", str(capture)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0
    ports = {json.loads(line)["broker"].rsplit(":", 1)[1] for line in run.stdout.splitlines()}
    assert ports == {str(meta(capture)["broker_port"])}  # the plaintext leg only
    lines = run.stderr.splitlines()
    named = [line for line in lines if line.startswith("kwire: TLS ") and "not decrypted: no key log given" in line]
    assert len(named) >= 3 and all("TLS 1.2" in line and "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384" in line
                                   for line in named)
    assert any("--keylog" in line for line in lines)
    stats = subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", str(capture)],
                           capture_output=True, text=True, timeout=120)
    doc = json.loads(stats.stdout)["tls"]
    assert doc["connections"] >= 3 and doc["decrypted"] == 0
    assert {row["reason"] for row in doc["list"]} >= {"no key log given"}


def test_the_key_log_is_never_echoed(tmp_path):
    capture = next(c for c in CAPTURES if "chacha" in c.name)
    secret_hex = Path(str(capture) + ".keys").read_text().split()[-1]
    broken = tmp_path / "keys.log"
    broken.write_text(Path(str(capture) + ".keys").read_text() + "CLIENT_RANDOM nothex " + secret_hex + "\n")
    for command in (["inspect", "--json"], ["inspect"], ["stats"], ["stats", "--json"]):
        run = subprocess.run([sys.executable, "-m", "kwire", *command, "--keylog", str(broken), str(capture)],
                             capture_output=True, text=True, timeout=120)
        assert secret_hex not in run.stdout and secret_hex not in run.stderr
        assert secret_hex.lower() not in run.stderr.lower()
