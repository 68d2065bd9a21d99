"""SASL credentials never reach any output unless --show-secrets.

Real exchanges: librdkafka 2.16 clients authenticating with PLAIN, SCRAM-SHA-256 and OAUTHBEARER
(unsecured JWT) against the small broker of data/record_sasl.py. Every output path is run: inspect
(JSON, JSON with --records, rich), stats (JSON, rich, HTML) and live's replay dashboard; the secret
parts of every AuthBytes (found with --show-secrets) must appear in none of them, as text, hex or
base64. Synthetic messages cover the parsers' corners, and hypothesis checks sasl_view on anything.
"""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.render.jsonl import exchange_json, exchange_record
from kwire.render.values import SECRET_APIS, plain_body, sasl_view
from kwire.pipeline import analyze_files
from tests.fuzz.conversation import conversation_pcap
from tests.kafka.frames import request_frame, response_frame

DATA = Path(__file__).resolve().parent / "data"
CAPTURES = sorted(DATA.glob("sasl-*.pcap"))
PASSWORDS = {"sasl-plain.pcap": "plain-secret-pw-4711", "sasl-scram-sha-256.pcap": "scram-secret-pw-4711"}


def run(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "kwire", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout + proc.stderr


def auth_messages(path) -> list[bytes]:
    out = []
    for ex in analyze_files([str(path)]):
        for body in (ex.request, ex.response):
            if body and isinstance(body.get("AuthBytes"), (bytes, bytearray, memoryview)):
                out.append(bytes(body["AuthBytes"]))
    return out


def secret_parts(message: bytes) -> list[bytes]:
    """The parts of one SASL message that must never be shown."""
    parts = []
    if message.count(b"\0") == 2:
        parts.append(message.split(b"\0")[2])  # PLAIN password
    for piece in message.replace(b"\x01", b",").split(b","):
        key, _, value = piece.partition(b"=")
        if key in (b"r", b"s", b"p", b"v", b"c") and len(value) >= 6:
            parts.append(value)  # SCRAM nonces, salt, proof, signature, channel binding
        if key == b"auth":
            parts.append(value.split(b" ", 1)[-1])  # the bearer token
    return parts


def forms(secret: bytes) -> list[str]:
    """The secret as text, hex and base64 (a tail of 8 bytes is enough to give it away)."""
    tail = secret[-12:]
    return [tail.decode("latin-1"), tail.hex(), secret.hex(), base64.b64encode(secret).decode()[:12]]


def assert_no_secret(text: str, messages: list[bytes]) -> None:
    for message in messages:
        if len(message) >= 6:
            assert message.hex() not in text
        for part in secret_parts(message):
            for form in forms(part):
                assert form not in text, f"secret {part[:4]!r}... shown"


@pytest.mark.parametrize("capture", CAPTURES, ids=[p.name for p in CAPTURES])
def test_real_sasl_secrets_redacted_everywhere(tmp_path, capture):
    messages = auth_messages(capture)
    assert len(messages) >= 2
    assert any(secret_parts(m) for m in messages)
    password = PASSWORDS.get(capture.name)
    if capture.name == "sasl-plain.pcap":
        assert any(password.encode() in m for m in messages)  # the capture does hold it (SCRAM never sends it)
    html = tmp_path / "report.html"
    outputs = [
        run("inspect", "--json", str(capture)),
        run("inspect", "--json", "--records", str(capture)),
        run("inspect", str(capture)),
        run("stats", "--json", str(capture)),
        run("stats", "--html", str(html), str(capture)),
        run("live", "--replay", str(capture), "--speed", "0", "--exit-when-done"),
    ]
    outputs.append(html.read_text())
    for text in outputs:
        assert_no_secret(text, messages)
        if password:
            assert password not in text
    shown = run("inspect", "--json", "--show-secrets", str(capture))
    assert all(m.hex() in shown for m in messages if m)


def test_real_sasl_structure_is_shown():
    views = {}
    for capture in CAPTURES:
        for ex in analyze_files([str(capture)]):
            if ex.api_key == 36:
                record = exchange_record(ex)
                views.setdefault(capture.name, []).append((record["request"]["AuthBytes"],
                                                           record["response"]["AuthBytes"]))
    plain = views["sasl-plain.pcap"][0][0]
    assert plain["mechanism"] == "PLAIN" and plain["username"] == "alice"
    scram = views["sasl-scram-sha-256.pcap"]
    assert [r["message"] for r, _ in scram] == ["client-first", "client-final"]
    assert [r["message"] for _, r in scram] == ["server-first", "server-final"]
    assert scram[0][0]["username"] == "alice" and scram[0][1]["iterations"] == 4096
    oauth = views["sasl-oauthbearer.pcap"][0][0]
    assert oauth["mechanism"] == "OAUTHBEARER" and oauth["auth_scheme"] == "Bearer"


# ---- synthetic messages ---------------------------------------------------------------------------

SYNTHETIC = [
    (b"\0bob\0pa55word-xyz", {"mechanism": "PLAIN", "username": "bob"}),
    (b"admin\0bob\0pa55word-xyz", {"mechanism": "PLAIN", "username": "bob", "authzid": "admin"}),
    (b"n,,n=b=2Cob,r=rOprNGfwEbeRWgbNEkqO", {"mechanism": "SCRAM", "message": "client-first", "username": "b,ob"}),
    (b"n,a=adm,n=bob,r=rOprNGfwEbeRWgbNEkqO,tokenauth=true",
     {"mechanism": "SCRAM", "message": "client-first", "username": "bob", "authzid": "adm"}),
    (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
     {"mechanism": "SCRAM", "message": "server-first", "iterations": 4096}),
    (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
     {"mechanism": "SCRAM", "message": "client-final"}),
    (b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", {"mechanism": "SCRAM", "message": "server-final"}),
    (b"e=invalid-proof", {"mechanism": "SCRAM", "message": "server-final", "error": "invalid-proof"}),
    (b"n,a=bob,\x01host=server.example.com\x01port=9092\x01auth=Bearer eyJhbGciOiJIUzI1.eyJzdWIi.c2lnbmF0dXJl\x01\x01",
     {"mechanism": "OAUTHBEARER", "authzid": "bob", "auth_scheme": "Bearer", "extensions": ["host", "port"]}),
    (b"\x60\x82\x02\x10\x06\x09\x2a\x86\x48\x86\xf7\x12\x01\x02\x02", {}),  # a Kerberos token
    (b"", {}),
]


@pytest.mark.parametrize("message, shown", SYNTHETIC)
def test_sasl_view(message, shown):
    view = sasl_view(message)
    assert view == {"redacted": len(message), **shown}
    assert_no_secret(json.dumps(view), [message])


def sasl_exchange_pcap(version: int, request_auth: bytes, response_auth: bytes) -> bytes:
    flexible = version >= 2

    def auth(data: bytes) -> bytes:
        if flexible:
            n = len(data) + 1
            return bytes([n]) + data if n < 0x80 else bytes([(n & 0x7F) | 0x80, n >> 7]) + data
        return struct.pack(">i", len(data)) + data

    req = auth(request_auth) + (b"\x00" if flexible else b"")
    if flexible:
        resp = struct.pack(">h", 0) + b"\x00" + auth(response_auth) + struct.pack(">q", 0) + b"\x00"
    else:
        resp = struct.pack(">hh", 0, -1) + auth(response_auth) + (struct.pack(">q", 0) if version else b"")
    return conversation_pcap([
        (0, request_frame(17, 1, 1, "cli", struct.pack(">h", 5) + b"PLAIN")),
        (1, response_frame(1, struct.pack(">hi", 0, 1) + struct.pack(">h", 5) + b"PLAIN")),
        (0, request_frame(36, version, 2, "cli", req, flexible=flexible)),
        (1, response_frame(2, resp, flexible=flexible)),
    ])


@pytest.mark.parametrize("version", [0, 1, 2])
@pytest.mark.parametrize("message", [m for m, _ in SYNTHETIC if m])
def test_every_version_redacted_in_json_and_rich(tmp_path, version, message):
    path = tmp_path / "sasl.pcap"
    path.write_bytes(sasl_exchange_pcap(version, message, message))
    exchanges = list(analyze_files([str(path)]))
    sasl = [ex for ex in exchanges if ex.api_key == 36]
    assert len(sasl) == 1 and sasl[0].request is not None and sasl[0].response is not None
    from rich.console import Console

    from kwire.render.rich_view import exchange_view

    for ex in exchanges:
        console = Console(record=True, width=200, file=open("/dev/null", "w"))
        console.print(exchange_view(ex, records="full"))
        for text in (exchange_json(ex), exchange_json(ex, records="full"), console.export_text()):
            assert_no_secret(text, [message])
    assert message.hex() in exchange_json(sasl[0], show_secrets=True)


def test_secret_apis_always_take_the_walking_path():
    assert 36 in SECRET_APIS
    body = {"Tokens": [{"Hmac": b"hmac-secret-bytes", "TokenId": "t"}], "SaltedPassword": b"salted"}
    plain = plain_body(body)
    assert plain == {"Tokens": [{"Hmac": {"redacted": 17}, "TokenId": "t"}], "SaltedPassword": {"redacted": 6}}


@pytest.mark.parametrize("user", ["", "A", "Al", "Ali", "Alic", "Alice", "0", "Zz9"])
def test_raw_sasl_tokens_after_handshake_v0_never_shown(tmp_path, user):
    """After SaslHandshake v0 the SASL tokens travel as bare length-prefixed frames; whatever kwire
    makes of them, no password byte may come out (not even as a correlation id)."""
    password = b"hunter2-secret!"
    token = b"\0" + user.encode() + b"\0" + password
    path = tmp_path / "v0.pcap"
    path.write_bytes(conversation_pcap([
        (0, request_frame(17, 0, 1, "cli", struct.pack(">h", 5) + b"PLAIN")),
        (1, response_frame(1, struct.pack(">hi", 0, 1) + struct.pack(">h", 5) + b"PLAIN")),
        (0, struct.pack(">i", len(token)) + token),
        (1, struct.pack(">i", 0)),
        (0, request_frame(3, 1, 2, "cli", struct.pack(">i", 0))),
        (1, response_frame(2, struct.pack(">ii", 0, 0) + struct.pack(">i", 0))),
    ]))
    text = "\n".join(exchange_json(ex) for ex in analyze_files([str(path)]))
    assert_no_secret(text, [token])
    for i in range(len(password) - 3):
        assert str(int.from_bytes(password[i:i + 4], "big")) not in text
        assert str(int.from_bytes(password[i:i + 2], "big")) not in text.replace('"api_key":', "")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | st.builds(
    lambda a, b, c: a + b"\0" + b + b"\0" + c, st.binary(max_size=20), st.binary(max_size=20), st.binary(min_size=1, max_size=40))
    | st.builds(lambda s: ("n,,n=u,r=" + s).encode(), st.text(max_size=50))
    | st.builds(lambda s: ("n,,\x01auth=Bearer " + s + "\x01\x01").encode(), st.text(max_size=50)))
def test_sasl_view_on_anything(message):
    view = sasl_view(message)
    assert view["redacted"] == len(message)
    text = json.dumps(view, ensure_ascii=False)
    if message.count(b"\0") == 2:
        password = message.split(b"\0")[2]
        if len(password) >= 6:
            assert password.decode("utf-8", "replace") not in text
    if b"auth=Bearer " in message:
        token = message.split(b"auth=Bearer ", 1)[1].split(b"\x01")[0]
        if len(token) >= 6:
            assert token.decode("utf-8", "replace") not in text


def test_plain_names_withheld_when_they_contain_the_password():
    # Found by test_sasl_view_on_anything: a user named like the password would show the password.
    for message in (b"\0hunter22\0hunter22", b"hunter22\0bob\0hunter22", b"\0xxhunter22xx\0hunter22"):
        view = sasl_view(message)
        assert view == {"redacted": len(message), "mechanism": "PLAIN"}
    assert sasl_view(b"\0bob\0hunter22")["username"] == "bob"
