#!/usr/bin/env python3
"""Record real SASL exchanges of librdkafka (confluent-kafka) with tcpdump (run as root, Linux).

    python tests/render/data/record_sasl.py

librdkafka's mock cluster has no SASL, so a tiny broker here answers just enough for a real client
to authenticate: ApiVersions (v0..v3), SaslHandshake v1 (offering the one mechanism), and
SaslAuthenticate (v0..v2). PLAIN and OAUTHBEARER (librdkafka's unsecured JWT) are accepted; for
SCRAM-SHA-256 it sends a server-first message continuing the client's nonce, then a server-final
message with a made-up signature, which the client rejects: all four SCRAM messages are on the wire.
After authentication the broker closes the connection. Each capture (sasl-<mechanism>.pcap) holds
one client's first connection; the credentials are the SECRETS below, which tests look for in
kwire's output.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PORT = 19093
USER = "alice"
SECRETS = {"PLAIN": "plain-secret-pw-4711", "SCRAM-SHA-256": "scram-secret-pw-4711"}
API_RANGES = [(18, 0, 3), (17, 0, 1), (36, 0, 2), (3, 0, 12)]


def _frames(conn: socket.socket):
    buf = b""
    while True:
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">i", buf[:4])[0]:
            data = conn.recv(65536)
            if not data:
                return
            buf += data
        n = struct.unpack(">i", buf[:4])[0]
        yield buf[4:4 + n]
        buf = buf[4 + n:]


def _send(conn: socket.socket, payload: bytes) -> None:
    conn.sendall(struct.pack(">i", len(payload)) + payload)


def _request(frame: bytes) -> tuple[int, int, int, bytes]:
    api, version, corr = struct.unpack(">hhi", frame[:8])
    n = struct.unpack(">h", frame[8:10])[0]
    pos = 10 + max(n, 0)
    flexible = (api == 18 and version >= 3) or (api == 36 and version >= 2)
    if flexible:
        pos += 1  # empty tagged fields
    return api, version, corr, frame[pos:]


def _uvarint(n: int) -> bytes:
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _auth_bytes(version: int, body: bytes) -> bytes:
    if version >= 2:
        n = 0
        pos = 0
        shift = 0
        while True:
            b = body[pos]
            n |= (b & 0x7F) << shift
            pos += 1
            shift += 7
            if b < 0x80:
                break
        return body[pos:pos + n - 1]
    n = struct.unpack(">i", body[:4])[0]
    return body[4:4 + n]


def _auth_response(corr: int, version: int, auth: bytes, error: int = 0) -> bytes:
    if version >= 2:
        return (struct.pack(">i", corr) + b"\x00" + struct.pack(">h", error) + b"\x00"
                + _uvarint(len(auth) + 1) + auth + struct.pack(">q", 0) + b"\x00")
    out = struct.pack(">ih", corr, error) + struct.pack(">h", -1) + struct.pack(">i", len(auth)) + auth
    if version >= 1:
        out += struct.pack(">q", 0)
    return out


def serve(mechanism: str, ready: threading.Event, done: threading.Event) -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", PORT))
    srv.listen(4)
    ready.set()
    conn, _ = srv.accept()
    with conn, srv:
        for frame in _frames(conn):
            api, version, corr, body = _request(frame)
            if api == 18:
                if version >= 3:
                    keys = b"".join(struct.pack(">hhh", k, lo, hi) + b"\x00" for k, lo, hi in API_RANGES)
                    _send(conn, struct.pack(">ih", corr, 0) + _uvarint(len(API_RANGES) + 1) + keys
                          + struct.pack(">i", 0) + b"\x00")
                else:
                    keys = b"".join(struct.pack(">hhh", k, lo, hi) for k, lo, hi in API_RANGES)
                    _send(conn, struct.pack(">ihi", corr, 0, len(API_RANGES)) + keys)
            elif api == 17:
                name = mechanism.encode()
                _send(conn, struct.pack(">ihi", corr, 0, 1) + struct.pack(">h", len(name)) + name)
            elif api == 36:
                auth = _auth_bytes(version, body)
                if mechanism == "SCRAM-SHA-256" and auth.startswith(b"n,,"):
                    nonce = dict(p.split(b"=", 1) for p in auth[3:].split(b","))[b"r"]
                    reply = b"r=" + nonce + b"kwireServerNonce,s=a3dpcmUtc2FsdA==,i=4096"
                    _send(conn, _auth_response(corr, version, reply))
                elif mechanism == "SCRAM-SHA-256":
                    _send(conn, _auth_response(corr, version, b"v=bWFkZS11cC1zaWduYXR1cmU="))
                    time.sleep(0.3)
                    break
                else:
                    _send(conn, _auth_response(corr, version, b""))
                    time.sleep(0.3)
                    break
            else:
                break
    done.set()


def client(mechanism: str) -> None:
    from confluent_kafka import Producer

    conf = {"bootstrap.servers": f"127.0.0.1:{PORT}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": mechanism, "client.id": f"kwire-sasl-{mechanism.lower()}",
            "reconnect.backoff.ms": 10000, "reconnect.backoff.max.ms": 10000}
    if mechanism == "OAUTHBEARER":
        conf.update({"enable.sasl.oauthbearer.unsecure.jwt": True,
                     "sasl.oauthbearer.config": f"principal={USER} scope=kwire-scope"})
    else:
        conf.update({"sasl.username": USER, "sasl.password": SECRETS[mechanism]})
    producer = Producer(conf)
    producer.poll(2.0)
    del producer


def record(mechanism: str) -> Path:
    out = HERE / f"sasl-{mechanism.lower()}.pcap"
    dump = subprocess.Popen(["tcpdump", "-i", "lo", "-s", "0", "-w", str(out), "-U", "--immediate-mode", f"tcp port {PORT}"],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    ready, done = threading.Event(), threading.Event()
    server = threading.Thread(target=serve, args=(mechanism, ready, done), daemon=True)
    server.start()
    ready.wait(5)
    runner = threading.Thread(target=client, args=(mechanism,), daemon=True)
    runner.start()
    done.wait(10)
    runner.join(5)
    time.sleep(1.5)
    dump.terminate()
    dump.wait(5)
    return out


if __name__ == "__main__":
    for mech in sys.argv[1:] or ["PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"]:
        print(record(mech))
