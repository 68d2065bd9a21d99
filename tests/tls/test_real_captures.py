"""Real Kafka-over-TLS captures (captures/tls/, made by scripts/record_tls.py) against their own
plaintext leg: the bytes kwire decrypts from each TLS connection (client <-> stunnel) must equal,
byte for byte and each way, the bytes of one plaintext connection (stunnel <-> broker) of the same
capture, and framing both with kwire.kafka must give the same exchanges. Without the key log each
TLS connection is reported with what its handshake showed and why it was not decrypted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kwire.kafka.apis import APIS
from kwire.tcp.recorder import StreamClosed, StreamData, StreamGap
from kwire.tcp.stream import Connection
from kwire.tls import KeyLog, TlsDetector
from kwire.tls.info import REASON_NO_KEY
from tests.kafka.frames import Tracker
from tests.tls.capture_streams import run_streams
from tests.tls.helpers import Factory, Recorder

CAPTURES = sorted((Path(__file__).resolve().parents[2] / "captures" / "tls").glob("*.pcap"))
SUITE_NAMES = {  # the terminator's cipher option -> the IANA name kwire reports
    "TLS_AES_128_GCM_SHA256": "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384": "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256": "TLS_CHACHA20_POLY1305_SHA256",
    "ECDHE-RSA-AES256-GCM-SHA384": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    "ECDHE-RSA-CHACHA20-POLY1305": "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    "ECDHE-RSA-AES128-SHA256": "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    "ECDHE-RSA-AES256-SHA": "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
}


def header(capture: Path) -> dict:
    first = Path(str(capture) + ".truth.log").read_text().splitlines()[0]
    return json.loads(first.split(":", 1)[1])


def keylog(capture: Path) -> KeyLog:
    log = KeyLog()
    log.add_text(Path(str(capture) + ".keys").read_text())
    assert log.bad_lines == 0 and len(log) > 0
    return log


def decrypt(capture: Path, keys: KeyLog | None, hold: bool = True):
    infos: dict[int, tuple] = {}
    inner = Factory()
    detector = TlsDetector(inner, keys, lambda conn, info: infos.__setitem__(conn.id, (conn, info)))
    run_streams([capture], detector, hold=hold)
    return infos, {rec.conn.id: rec for rec in inner.made}, detector


def plaintext_leg(capture: Path, broker_port: int) -> list[Recorder]:
    consumers = run_streams([capture], lambda conn: Recorder(conn), hold=False)
    return [rec for rec in consumers.values()
            if broker_port in (rec.conn.a[1], rec.conn.b[1]) and (rec.stream[0] or rec.stream[1])]


def handshaken(infos: dict) -> dict:
    return {cid: info for cid, (conn, info) in infos.items() if info.client_direction is not None}


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_decrypted_bytes_equal_the_plaintext_leg(capture: Path) -> None:
    meta = header(capture)
    infos, inner, detector = decrypt(capture, keylog(capture))
    tls = handshaken(infos)
    assert tls and detector.plain_connections >= len(tls)
    plain = plaintext_leg(capture, meta["broker_port"])
    assert len(plain) == len(tls)
    unmatched = list(plain)
    for cid, info in tls.items():
        assert info.state == "encrypted" and info.reason is None, (cid, info)
        assert info.records_failed == 0 and info.records_undecrypted == 0 and not info.problems
        assert info.version == ("TLS 1.3" if meta["version"] == "TLSv1.3" else "TLS 1.2")
        assert info.cipher_suite == SUITE_NAMES[meta["ciphers"]]
        got = inner[cid]
        assert got.gaps == [0, 0] and got.closed is not None
        match = [p for p in unmatched if p.stream[0] == got.stream[0] and p.stream[1] == got.stream[1]]
        assert match, f"connection {cid}: no plaintext connection carries the same bytes"
        unmatched.remove(match[0])
        assert info.plaintext_bytes == [len(got.stream[0]), len(got.stream[1])]
    assert not unmatched


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_without_holding_segments_the_bytes_are_the_same(capture: Path) -> None:
    keys = keylog(capture)
    _, held, _ = decrypt(capture, keys, hold=True)
    _, loose, _ = decrypt(capture, keys, hold=False)
    assert {cid: [bytes(s) for s in rec.stream] for cid, rec in held.items()} == \
        {cid: [bytes(s) for s in rec.stream] for cid, rec in loose.items()}


def test_resumption_and_mac_then_encrypt_are_seen() -> None:
    by_name = {c.name: c for c in CAPTURES}
    capture = by_name.get("node-tls12-cbc-sha1-mte-resumed.pcap")
    if capture is None:
        pytest.skip("capture not recorded")
    infos, _, _ = decrypt(capture, keylog(capture))
    tls = handshaken(infos).values()
    assert all(not info.encrypt_then_mac for info in tls)
    assert sum(info.resumed for info in tls) >= 1
    assert all(info.server_name == "kafka.test" for info in tls)


def exchanges(chunks_by_conn: dict[int, list[tuple]]) -> dict[int, list[tuple]]:
    """Frame and pair recorded calls with kwire.kafka: {conn id: [(api, version, corr, status)]}."""
    out = {}
    for cid, calls in chunks_by_conn.items():
        tracker = Tracker()
        conn = Connection(cid, (b"\x7f\0\0\1", 1), (b"\x7f\0\0\1", 2), 0, 0)
        found = []
        for call in calls:
            if call[0] == "data":
                found += tracker.on_event(StreamData(conn, call[1], call[2], call[3]))
            elif call[0] == "gap":
                found += tracker.on_event(StreamGap(conn, call[1], call[2], call[3]))
        found += tracker.on_event(StreamClosed(conn, 0, "fin"))
        out[cid] = [(x.request.header.api_key if x.request else None,
                     x.request.header.api_version if x.request else None, x.correlation_id, x.status)
                    for x in found]
    return out


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_kafka_exchanges_of_decrypted_and_plaintext_legs_agree(capture: Path) -> None:
    meta = header(capture)
    infos, inner, _ = decrypt(capture, keylog(capture))
    plain = plaintext_leg(capture, meta["broker_port"])
    decrypted = exchanges({cid: inner[cid].calls for cid in handshaken(infos)})
    cleartext = exchanges({rec.conn.id: rec.calls for rec in plain})
    assert sorted(map(tuple, (tuple(v) for v in decrypted.values()))) == \
        sorted(map(tuple, (tuple(v) for v in cleartext.values())))
    total = sum(len(v) for v in decrypted.values())
    assert total >= 5 and all(status == "paired" for v in decrypted.values() for *_, status in v[:-1])
    apis = {api for v in decrypted.values() for api, *_ in v}
    assert {0, 1, 3, 18} <= apis  # Produce, Fetch, Metadata, ApiVersions


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda p: p.name)
def test_without_the_key_log_every_connection_says_what_and_why(capture: Path) -> None:
    meta = header(capture)
    for keys in (KeyLog(), None):
        infos, inner, _ = decrypt(capture, keys)
        tls = handshaken(infos)
        assert tls
        for info in tls.values():
            assert info.state == "undecryptable"
            assert info.reason == (REASON_NO_KEY if keys is not None else "no key log given")
            assert info.version == ("TLS 1.3" if meta["version"] == "TLSv1.3" else "TLS 1.2")
            assert info.cipher_suite == SUITE_NAMES[meta["ciphers"]]
            assert info.records_decrypted == 0 and info.records_undecrypted > 0
            assert min(info.ciphertext_bytes) > 0
            if meta["client"] == "node":
                assert info.server_name == "kafka.test"
        assert not set(inner) & set(tls)  # nothing decrypted: no Kafka consumer was made for them


_KP_REQUEST = re.compile(r"host=\[127\.0\.0\.1:\d+<-(\d+)\][^>]*> Request (\d+): (\w+)Request\(version=(\d+)")


@pytest.mark.parametrize("capture", [c for c in CAPTURES if c.name.startswith("py-")], ids=lambda p: p.name)
def test_decrypted_requests_are_the_ones_kafka_python_says_it_sent(capture: Path) -> None:
    """The clients' own view: every request kafka-python logged (connection by its local port,
    correlation id, api, version) is a request kwire decrypted on that connection, and no other."""
    by_name = {spec.name: key for key, spec in APIS.items()}
    truth: dict[int, set] = {}
    for line in Path(str(capture) + ".truth.log").read_text().splitlines():
        match = _KP_REQUEST.search(line)
        if match:
            port, corr, name, version = match.groups()
            truth.setdefault(int(port), set()).add((int(corr), by_name[name], int(version)))
    infos, inner, _ = decrypt(capture, keylog(capture))
    seen = {}
    for cid, (conn, info) in infos.items():
        if info.client_direction is None:
            continue
        found = exchanges({cid: inner[cid].calls})[cid]
        seen[conn.endpoint(info.client_direction)[1]] = {(corr, api, version) for api, version, corr, _ in found}
    assert truth and seen == truth
