"""Detection: TLS connections get a TlsStream, the others the inner consumer itself, bound in place,
with the first bytes handed over exactly as received."""

from __future__ import annotations

import struct

from kwire.tls import KeyLog, TlsDetector
from kwire.tls.stream import TlsStream
from tests.tls.build import Conversation
from tests.tls.helpers import Factory, Recorder, connection

KAFKA_REQUEST = struct.pack(">i", 30) + bytes(range(30))
KAFKA_RESPONSE = struct.pack(">i", 10) + bytes(10)


def test_plaintext_goes_straight_to_the_inner_consumer() -> None:
    inner = Factory(need=7)
    detector = TlsDetector(inner, KeyLog())
    sniffer = detector(connection())
    assert sniffer.data(0, 1, KAFKA_REQUEST[:3]) == 0  # too short to decide: held
    assert sniffer.data(0, 2, (KAFKA_REQUEST[3:10], KAFKA_REQUEST[10:])) == 7
    rec = inner.one
    assert sniffer.data.__self__ is rec and sniffer.gap.__self__ is rec and sniffer.close.__self__ is rec
    assert sniffer.data(1, 3, KAFKA_RESPONSE) == 7
    sniffer.gap(1, 4, 100)
    sniffer.close(5, "fin")
    assert rec.calls == [("data", 0, 1, KAFKA_REQUEST[:3]), ("data", 0, 2, KAFKA_REQUEST[3:]),
                         ("data", 1, 3, KAFKA_RESPONSE), ("gap", 1, 4, 100), ("close", 5, "fin")]
    assert (detector.plain_connections, detector.tls_connections) == (1, 0)


def test_tls_is_recognised_from_the_client_hello() -> None:
    conv = Conversation(0x1301)
    conv.send(0, b"hello kafka")
    keys = KeyLog()
    keys.add_text(conv.keylog)
    inner = Factory()
    detector = TlsDetector(inner, keys)
    sniffer = detector(connection())
    first = conv.wire[0][1]
    sniffer.data(0, 1, first[:2])
    sniffer.data(0, 2, first[2:])
    assert isinstance(sniffer.data.__self__, TlsStream)
    for ts, (d, rec) in enumerate(conv.wire[1:]):
        sniffer.data(d, ts, rec)
    sniffer.close(9, "fin")
    assert bytes(inner.one.stream[0]) == b"hello kafka"
    assert detector.tls_connections == 1


def test_mid_stream_tls_and_mid_stream_kafka() -> None:
    conv = Conversation(0xC02F)
    for i in range(6):
        conv.send(1, bytes([i]) * 3000)
    server = conv.stream(1)
    reports = []
    detector = TlsDetector(Factory(), KeyLog(), lambda conn, info: reports.append(info))
    sniffer = detector(connection(initiator=None))
    tail = server[len(server) // 2 + 11:]  # starts inside a record
    for i in range(0, len(tail), 1448):
        sniffer.data(1, i, tail[i:i + 1448])
    sniffer.close(1, "end")
    assert detector.tls_connections == 1
    assert reports[0].reason == "handshake not captured" and reports[0].records[1] >= 2

    inner = Factory()
    detector = TlsDetector(inner, KeyLog())
    sniffer = detector(connection(initiator=None))
    assert sniffer.data(1, 1, KAFKA_RESPONSE) == 0
    assert detector.plain_connections == 1 and inner.one.stream[1] == KAFKA_RESPONSE


def test_connection_without_bytes_makes_no_consumer() -> None:
    inner = Factory()
    sniffer = TlsDetector(inner)(connection())
    sniffer.close(1, "rst")
    assert inner.made == []


def test_gap_first_then_plaintext() -> None:
    inner = Factory()
    sniffer = TlsDetector(inner)(connection())
    sniffer.gap(0, 1, 50)
    sniffer.data(0, 2, KAFKA_REQUEST)
    assert inner.one.calls == [("gap", 0, 1, 50), ("data", 0, 2, KAFKA_REQUEST)]
    assert isinstance(inner.one, Recorder)
