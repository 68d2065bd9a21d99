"""Detection: TLS connections get a TlsStream, the others the inner consumer itself, bound in place,
with the first bytes handed over exactly as received."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kwire.tls.detect as detect
from kwire.tls import KeyLog, TlsDetector
from kwire.tls.records import header_length
from kwire.tls.stream import TlsStream
from tests.tls.build import Conversation, record
from tests.tls.capture_streams import run_streams
from tests.tls.helpers import Factory, Recorder, connection

CAPTURES = Path(__file__).resolve().parents[2] / "captures" / "tls"

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


# ---- mid-stream: Kafka whose first bytes chain as records; TLS past the window (issue 49) ---------

def _mid_stream_sniffer(inner=None):
    from kwire.pipeline import plain_kafka

    detector = TlsDetector(inner or Factory(), None, plain=plain_kafka)
    return detector, detector(connection(initiator=None))


def _feed(sniffer, direction: int, data: bytes, step: int = 1448) -> list[str]:
    """The verdict after each delivery."""
    verdicts = []
    for i in range(0, len(data), step):
        sniffer.data(direction, i, data[i:i + step])
        verdicts.append(sniffer.verdict)
    return verdicts


def _fake_records(n: int, size: int = 1500) -> bytes:
    return b"".join(record(23, bytes([i + 1]) * size) for i in range(n))


def test_records_then_kafka_requests_mid_stream_are_kafka() -> None:
    from tests.kafka.frames import request_frame

    frames = b"".join(request_frame(3, 9, corr, "midtls", b"\x00" * 40) for corr in range(1, 6))
    stream = _fake_records(4) + frames
    inner = Factory()
    detector, sniffer = _mid_stream_sniffer(inner)
    verdicts = _feed(sniffer, 0, stream)
    assert "tls" not in verdicts and verdicts[-1] == detect.NOT_TLS
    assert bytes(inner.one.stream[0]) == stream and detector.tls_connections == 0


def test_mid_stream_records_are_tls_at_the_end_of_the_window() -> None:
    conv = Conversation(0xC02F)
    for i in range(30):
        conv.send(1, bytes([i]) * 3000)
    server = conv.stream(1)
    tail = server[len(server) // 3 + 11:]  # starts inside a record
    inner = Factory()
    detector, sniffer = _mid_stream_sniffer(inner)
    verdicts = _feed(sniffer, 1, tail)
    first = verdicts.index(detect.TLS)
    assert set(verdicts[:first]) == {detect.UNDECIDED}
    assert first * 1448 < detect.DECIDE_BYTES <= (first + 1) * 1448  # the delivery that fills the window
    sniffer.close(1, "end")
    assert detector.tls_connections == 1 and isinstance(sniffer.close.__self__, TlsStream)
    assert not inner.made or not inner.one.stream[1]  # nothing handed on as plaintext


def test_a_chain_begun_late_in_the_window_is_not_tls() -> None:
    """A TLS stream has a record boundary within its first record's length; a chain found later
    explains too little of the window."""
    stream = b"\xaa" * (detect.FIRST_BOUNDARY + 100) + _fake_records(20)
    detector, sniffer = _mid_stream_sniffer()
    verdicts = _feed(sniffer, 0, stream)
    assert verdicts[-1] == detect.NOT_TLS and detect.TLS not in verdicts


def test_a_short_mid_stream_chain_is_tls_at_close_and_kafka_frames_after_it_are_not() -> None:
    detector, sniffer = _mid_stream_sniffer()
    _feed(sniffer, 1, _fake_records(3))
    assert sniffer.verdict == detect.UNDECIDED
    sniffer.close(1, "end")
    assert detector.tls_connections == 1


def _reference_best(buf: bytes, ends: list[int]) -> int:
    """Chains.update's answer after deliveries ending at `ends`, by walking every chain from scratch."""
    n, best = len(buf), -1
    for i in range(n - 4):
        if i + 3 > n - 2 or not detect.CANDIDATE_HEADER.match(buf, i) or header_length(buf, i) <= 0:
            continue
        born = next(k for k, end in enumerate(ends) if i + 3 <= end - 2)
        pos, headers, later, version = i, 0, 0, buf[i + 1:i + 3]
        while pos + 5 <= n:
            length = header_length(buf, pos)
            if length <= 0 or buf[pos + 1:pos + 3] != version:
                break
            if headers and max(born, next(k for k, end in enumerate(ends) if pos + 5 <= end)) > born:
                later += 1
            headers += 1
            pos += 5 + length
        else:
            if headers >= 2 and later and best < 0:
                best = i
    return best


_piece = st.one_of(st.binary(max_size=12),
                   st.builds(lambda t, v, n: bytes([t, 3, v]) + n.to_bytes(2, "big"),
                             st.integers(20, 24), st.integers(2, 4), st.integers(0, 40)))


@settings(max_examples=300, deadline=None)
@given(st.lists(_piece, max_size=30), st.lists(st.integers(1, 30), min_size=1, max_size=40))
def test_chains_agree_with_walking_every_chain_from_scratch(pieces, cuts) -> None:
    buf = b"".join(pieces)
    chains, held, ends, pos = detect.Chains(), bytearray(), [], 0
    for cut in cuts * (1 + len(buf) // max(1, sum(cuts))):
        if pos >= len(buf):
            break
        held += buf[pos:pos + cut]
        pos += cut
        ends.append(len(held))
        assert chains.update(held) == _reference_best(bytes(held), ends)
    assert chains.steps <= 3 * len(held) + 2 * len(ends)


@pytest.mark.parametrize("skip", [3, 6, 9])
@pytest.mark.parametrize("capture", sorted(CAPTURES.glob("*.pcap")), ids=lambda p: p.name)
def test_real_tls_captures_cut_mid_stream_keep_their_verdicts(capture, skip) -> None:
    """Each connection of the committed recordings with its handshake and first `skip` data segments
    not captured: the client <-> terminator ones are still TLS, the terminator <-> broker ones not."""
    from kwire.pipeline import plain_kafka

    ports = json.loads(Path(str(capture) + ".truth.log").read_text().splitlines()[0].split(":", 1)[1])

    def mid_stream(segments):
        seen: dict = {}
        kept = []
        for seg in segments:
            key = frozenset([(seg.src_ip, seg.src_port), (seg.dst_ip, seg.dst_port)])
            seen[key] = seen.get(key, 0) + (1 if seg.payload else 0)
            if seen[key] > skip and not seg.flags & 0x02:
                kept.append(seg)
        return kept

    detector = TlsDetector(Factory(), None, plain=plain_kafka)
    sniffers = run_streams([capture], detector, mangle=mid_stream)
    assert sniffers and detector.tls_connections
    for sniffer in sniffers.values():
        a, b = sniffer.conn.a[1], sniffer.conn.b[1]
        port = b if b in (ports["tls_port"], ports["broker_port"]) else a
        assert sniffer.verdict == (detect.TLS if port == ports["tls_port"] else detect.NOT_TLS), sniffer.conn


def test_what_was_held_across_gaps_is_handed_on_as_it_came() -> None:
    from tests.kafka.frames import request_frame

    frames = [request_frame(3, 9, corr, "midtls", b"\x00" * 40) for corr in range(1, 4)]
    calls = [("data", 0, 1, _fake_records(1)[:700]), ("data", 1, 2, b"\x17\x03\x03\x01\x00" + bytes(90)),
             ("gap", 0, 3, 100), ("data", 0, 4, _fake_records(2)[:2000]), ("gap", 0, 5, 7),
             ("data", 0, 6, frames[0]), ("data", 0, 7, frames[1] + frames[2][:9]), ("data", 0, 8, frames[2][9:])]
    inner = Factory()
    detector, sniffer = _mid_stream_sniffer(inner)
    for kind, *args in calls:
        getattr(sniffer, kind)(*args)
    assert sniffer.verdict == detect.NOT_TLS
    assert inner.one.calls == calls
