"""TlsStream end to end: RFC 8448's trace and built conversations of every suite, fed whole, byte
by byte and split anywhere; damage (flipped bytes, lost records, gaps) costs a record, not the
connection; reasons when nothing can be decrypted; no secret ever shown."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.tls import KeyLog, TlsStream
from kwire.tls.info import AUTH_FAILED, REASON_NO_HANDSHAKE, REASON_NO_KEY, REASON_NO_KEYLOG
from kwire.tls.records import MAX_RECORD
from kwire.tls.suites import SUITES
from tests.tls import rfc8448 as R
from tests.tls.build import Conversation, client_hello, record, server_hello
from tests.tls.helpers import Factory, connection, feed_split

ALL_SUITES = sorted(SUITES)
CBC_SUITES = [s for s in ALL_SUITES if SUITES[s].cipher == "AES-CBC"]


def keys_of(text: str) -> KeyLog:
    log = KeyLog()
    log.add_text(text)
    return log


def run(wire, keys, *, need: int = 0, split=None, conn=None, **kw):
    inner = Factory(need)
    infos = []
    stream = TlsStream(conn or connection(), inner, keys, lambda c, i: infos.append(i), **kw)
    for ts, (direction, rec) in enumerate(wire):
        if split is None:
            stream.data(direction, ts, rec)
        else:
            feed_split(stream, direction, ts, rec, split(rec))
    stream.close(10**6, "fin")
    assert infos == [stream.info]
    return stream, inner


def rfc_wire():
    return [(d, bytes.fromhex(h)) for d, h in R.CONVERSATION]


@pytest.mark.parametrize("split", [None, lambda rec: range(1, len(rec)), lambda rec: [len(rec) - 1]],
                         ids=["whole", "byte-by-byte", "all-but-last"])
def test_rfc8448_trace(split) -> None:
    stream, inner = run(rfc_wire(), keys_of(R.KEY_LOG), split=split)
    rec = inner.one
    assert rec.stream == [bytearray(R.PAYLOAD), bytearray(R.PAYLOAD)]
    assert rec.calls[-1][0] == "close" and rec.gaps == [0, 0]
    info = stream.info
    assert (info.state, info.version, info.cipher_suite, info.server_name) == \
        ("encrypted", "TLS 1.3", "TLS_AES_128_GCM_SHA256", "server")
    assert info.records_decrypted == 7 and info.records_failed == 0 and info.reason is None


def test_rfc8448_trace_as_one_stream_with_trailing_bytes() -> None:
    inner = Factory()
    stream = TlsStream(connection(), inner, keys_of(R.KEY_LOG))
    wire = rfc_wire()
    # the server's records all at once (after the client's hello), then the client's, then a cut record
    stream.data(0, 1, wire[0][1])
    need = stream.data(1, 2, b"".join(rec for d, rec in wire if d == 1) + bytes.fromhex(R.SERVER_DATA)[:9])
    assert need == len(bytes.fromhex(R.SERVER_DATA)) - 9
    stream.data(0, 3, b"".join(rec for d, rec in wire[1:] if d == 0))
    assert inner.one.stream == [bytearray(R.PAYLOAD), bytearray(R.PAYLOAD)]


def conversation(suite_id: int, etm: bool = False, sizes=(1, 100, 5000, 16384, 7, 16000)) -> Conversation:
    conv = Conversation(suite_id, etm=etm, alpn="kafka")
    for i, size in enumerate(sizes):
        conv.send(i % 2, bytes((i + j) % 251 for j in range(size)))
    return conv


@pytest.mark.parametrize("suite_id", ALL_SUITES, ids=lambda s: SUITES[s].name)
def test_every_suite(suite_id) -> None:
    for etm in ([False, True] if suite_id in CBC_SUITES else [False]):
        conv = conversation(suite_id, etm)
        stream, inner = run(conv.wire, keys_of(conv.keylog))
        assert [bytes(s) for s in inner.one.stream] == [bytes(p) for p in conv.plain]
        info = stream.info
        assert info.cipher_suite == SUITES[suite_id].name and info.alpn == "kafka"
        assert info.encrypt_then_mac is etm and info.records_failed == 0 and info.decrypted


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([0x1301, 0x1303, 0xC02F, 0xCCA8, 0xC027]), st.data())
def test_split_anywhere_and_held_for_the_inner_need(suite_id, data) -> None:
    conv = conversation(suite_id)
    stream_bytes = [conv.stream(0), conv.stream(1)]
    need = data.draw(st.sampled_from([0, 3, 20000]))
    inner = Factory(need)
    stream = TlsStream(connection(), inner, keys_of(conv.keylog))
    # both directions in record order, each record cut at random places
    for ts, (direction, rec) in enumerate(conv.wire):
        cuts = sorted(data.draw(st.lists(st.integers(1, max(1, len(rec) - 1)), max_size=4)))
        feed_split(stream, direction, ts, rec, cuts)
    stream.close(99, "end")
    assert [bytes(s) for s in inner.one.stream] == [bytes(p) for p in conv.plain]
    assert sum(map(len, stream_bytes)) == sum(stream.info.ciphertext_bytes)


class Frames:
    """An inner consumer that frames as kwire.kafka does (4-byte length, then the body): it asks for
    the rest of the frame in progress and notes each frame with the time data() completed it."""

    def __init__(self, conn=None):
        self.buf = (bytearray(), bytearray())
        self.frames: list[tuple[int, int, bytes]] = []  # (direction, ts_ns, frame)

    def data(self, direction: int, ts_ns: int, data) -> int:
        buf = self.buf[direction]
        buf += b"".join(bytes(p) for p in data) if type(data) is tuple else data
        while len(buf) >= 4 and len(buf) >= 4 + int.from_bytes(buf[:4], "big"):
            end = 4 + int.from_bytes(buf[:4], "big")
            self.frames.append((direction, ts_ns, bytes(buf[:end])))
            del buf[:end]
        return 4 + int.from_bytes(buf[:4], "big") - len(buf) if len(buf) >= 4 else 0

    def gap(self, direction: int, ts_ns: int, size: int) -> None:
        raise AssertionError("no gap in this conversation")

    def close(self, ts_ns: int, reason: str) -> None:
        pass


def segments(wire, mss: int = 1448) -> list[tuple[int, bytes]]:
    """A conversation's records as TCP would carry them: each burst of one direction cut every `mss`
    bytes, so segments end inside records and start the next ones."""
    out, pending = [], bytearray()
    for i, (direction, rec) in enumerate(wire):
        pending += rec
        if i + 1 == len(wire) or wire[i + 1][0] != direction:
            out += [(direction, bytes(pending[j:j + mss])) for j in range(0, len(pending), mss)]
            pending.clear()
    return out


@pytest.mark.parametrize("suite_id", [0x1301, 0x1303, 0xC02F, 0xC027])
def test_the_need_holds_a_frame_of_many_records_and_it_completes_when_it_did(suite_id) -> None:
    """TCP that heeds data()'s answer (holding segments until that many bytes are in) and TCP that
    hands over every segment give the inner consumer the same frames at the same capture times; the
    answer covers the rest of the frame, not only of the record, so a frame of many records comes in
    a few deliveries rather than one per record."""
    conv = Conversation(suite_id)
    frames = [(0, 60000), (1, 40), (0, 20), (1, 50000), (1, 3), (0, 16380)]
    for n, (direction, size) in enumerate(frames):
        frame = size.to_bytes(4, "big") + bytes((n + j) % 251 for j in range(size))
        for i in range(0, len(frame), 16384):
            conv.send(direction, frame[i:i + 16384])
    wire = segments(conv.wire)
    loose, held = Frames(), Frames()
    stream = TlsStream(connection(), lambda conn: loose, keys_of(conv.keylog))
    for ts, (direction, seg) in enumerate(wire):
        stream.data(direction, ts, seg)
    stream = TlsStream(connection(), lambda conn: held, keys_of(conv.keylog))
    answers = []
    want, pieces = [0, 0], ([], [])
    for ts, (direction, seg) in enumerate(wire):
        pieces[direction].append(seg)
        if want[direction] > len(seg):
            want[direction] -= len(seg)
            continue
        data = pieces[direction][0] if len(pieces[direction]) == 1 else tuple(pieces[direction])
        pieces[direction].clear()
        want[direction] = stream.data(direction, ts, data)
        answers.append(want[direction])
    assert not pieces[0] and not pieces[1]
    assert held.frames == loose.frames and len(held.frames) == len(frames)
    assert max(answers) > MAX_RECORD + 5  # more than any one record can still need


def test_key_update_and_padding() -> None:
    conv = Conversation(0x1302)
    conv.send(0, b"before")
    conv.key_update(0)
    conv.send(0, b"after", pad=40)
    conv.key_update(1)
    conv.send(1, b"server after")
    stream, inner = run(conv.wire, keys_of(conv.keylog))
    assert bytes(inner.one.stream[0]) == b"beforeafter" and bytes(inner.one.stream[1]) == b"server after"
    assert stream.info.key_updates == 2 and stream.info.records_failed == 0


@pytest.mark.parametrize("suite_id", [0x1301, 0x1303, 0xC030, 0xCCA8, 0xC013])
def test_flipped_byte_costs_that_record_only(suite_id) -> None:
    conv = conversation(suite_id, sizes=(10, 20, 30, 40, 50, 60))
    damaged = len(conv.wire) - 4  # the client's 3rd-last application record
    d, rec = conv.wire[damaged]
    wire = list(conv.wire)
    wire[damaged] = (d, rec[:-3] + bytes([rec[-3] ^ 0x40]) + rec[-2:])
    stream, inner = run(wire, keys_of(conv.keylog))
    info = stream.info
    assert info.records_failed == 1 and [p.kind for p in info.problems] == [AUTH_FAILED]
    assert inner.one.gaps[d] == 1
    expected = conv.plain[d].replace(bytes((i + j) % 251 for i in [2] for j in range(30)), b"")
    assert bytes(inner.one.stream[d]) == bytes(expected)
    assert bytes(inner.one.stream[1 - d]) == bytes(conv.plain[1 - d])
    assert info.state == "encrypted"


@pytest.mark.parametrize("suite_id", [0x1301, 0x1302, 0xC02F, 0xCCA8, 0xC028])
def test_lost_records_in_a_gap_are_skipped_and_the_rest_decrypted(suite_id) -> None:
    conv = Conversation(suite_id)
    payloads = [bytes([i]) * (300 + 37 * i) for i in range(40)]
    for p in payloads:
        conv.send(0, p)
    inner = Factory()
    stream = TlsStream(connection(), inner, keys_of(conv.keylog))
    handshake_records = len(conv.wire) - len(payloads)
    for direction, rec in conv.wire[:handshake_records]:
        stream.data(direction, 0, rec)
    client = [rec for d, rec in conv.wire if d == 0]
    first_app = len(client) - len(payloads)
    for rec in client[first_app:first_app + 5]:
        stream.data(0, 1, rec)
    lost = b"".join(client[first_app + 5:first_app + 12])
    stream.data(0, 2, lost[:100])  # the start of the first lost record was captured
    stream.gap(0, 3, len(lost) - 200)
    stream.data(0, 4, lost[-100:])  # the end of the last lost record too
    for rec in client[first_app + 12:]:
        stream.data(0, 5, rec)
    stream.close(6, "fin")
    rec = inner.one
    assert bytes(rec.stream[0]) == b"".join(payloads[:5] + payloads[12:])
    assert rec.gaps[0] == 1 and stream.info.records_failed == 0 and stream.info.gaps == 1


def test_gap_during_the_tls13_handshake_finds_the_application_keys() -> None:
    conv = Conversation(0x1301)
    conv.send(1, b"first")
    conv.send(1, b"second")
    server = [rec for d, rec in conv.wire if d == 1]
    inner = Factory()
    stream = TlsStream(connection(), inner, keys_of(conv.keylog))
    stream.data(0, 0, conv.wire[0][1])
    stream.data(1, 1, server[0] + server[1])  # ServerHello and CCS; the encrypted flight is lost
    stream.gap(1, 2, len(server[2]))
    stream.data(1, 3, server[3] + server[4])
    stream.close(4, "fin")
    assert bytes(inner.one.stream[1]) == b"firstsecond"


def test_reasons_when_nothing_can_be_decrypted() -> None:
    conv = conversation(0x1301)
    stream, inner = run(conv.wire, None)
    assert stream.info.reason == REASON_NO_KEYLOG and not inner.made
    stream, inner = run(conv.wire, KeyLog())
    assert stream.info.reason == REASON_NO_KEY and stream.info.records_undecrypted > 0
    assert stream.info.cipher_suite == "TLS_AES_128_GCM_SHA256" and stream.info.server_name == "kafka.test"
    hello = record(22, client_hello(bytes(32), suites=(0x1304,)), 0x0301)
    stream, _ = run([(0, hello), (1, record(22, server_hello(bytes(32), 0x1304)))], KeyLog())
    assert stream.info.reason == "unsupported cipher suite TLS_AES_128_CCM_SHA256"
    sh10 = server_hello(bytes(32), 0x002F, tls13=False).replace(b"\x02\x00\x00", b"\x02\x00\x00", 1)
    sh10 = sh10[:4] + b"\x03\x01" + sh10[6:]
    stream, _ = run([(0, hello), (1, record(22, sh10))], KeyLog())
    assert stream.info.reason == "unsupported TLS version TLS 1.0"
    app = [rec for d, rec in conv.wire[-4:]]
    stream, inner = run([(0, rec) for rec in app], keys_of(conv.keylog), conn=connection(initiator=None))
    assert stream.info.reason == REASON_NO_HANDSHAKE and stream.info.records[0] >= 2


def test_wrong_keys_give_up_after_a_few_records() -> None:
    conv = conversation(0xC02F, sizes=(10,) * 20)
    wrong = conv.keylog.replace(conv.keylog.split()[-1], "00" * 48)
    stream, inner = run(conv.wire, keys_of(wrong))
    assert stream.info.state == "undecryptable" and stream.info.reason == "authentication failed"
    assert stream.info.records_failed <= 8 and stream.info.records_undecrypted > 0


def test_waiting_for_keys_that_come_later() -> None:
    conv = conversation(0x1301)
    keys = KeyLog()
    inner = Factory()
    stream = TlsStream(connection(), inner, keys, key_wait_bytes=1 << 16)
    for ts, (direction, rec) in enumerate(conv.wire):
        if ts == 4:
            keys.add_text(conv.keylog)  # the client wrote its key log a little after the capture saw it
        stream.data(direction, ts, rec)
    stream.close(99, "fin")
    assert [bytes(s) for s in inner.one.stream] == [bytes(p) for p in conv.plain]


def test_secrets_never_shown() -> None:
    conv = conversation(0xC013, sizes=(10, 20))
    keys = keys_of(conv.keylog)
    secret = conv.keylog.split()[-1]
    wire = list(conv.wire)
    d, rec = wire[-1]
    wire[-1] = (d, rec[:-1] + bytes([rec[-1] ^ 1]))
    stream, inner = run(wire, keys)
    shown = " ".join([repr(stream), repr(stream.info), repr(stream.session.directions),
                      repr([d.slot for d in stream.session.directions]), repr(keys), str(stream.info.as_dict())])
    for p in stream.info.problems:
        shown += p.detail
    assert secret not in shown and secret[:16] not in shown
