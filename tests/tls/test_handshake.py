"""Handshake messages: parsed from the RFC 8448 traces, reassembled across records, skipped when big."""

from __future__ import annotations

import pytest

from kwire.tls import handshake as hs
from kwire.tls.info import TlsDecodeError
from tests.tls import build
from tests.tls import rfc8448 as R

# RFC 8448 section 5: HelloRetryRequest (a ServerHello with the special random)
HRR = ("16030300b0020000ac0303cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c00130100008400330002"
       "0017002c0074007271dcd04bb88bc3189119398a00000000eefafc76c146b823b096f8aacad365dd0030953f4edf625636e5f21b"
       "b2e23fcc654b1b5b40318d10d137abcbb87574e36e8a1f025f7dfa5d6e50781b5eda4aa15b0c8be778257d16aa3030e9e7841dd9"
       "e4c0342267e8ca0caf571fb2b7cff0f934b0002b00020304")


def messages(record_hex: str) -> list:
    return hs.HandshakeReader().feed(bytes.fromhex(record_hex)[5:])


def test_rfc8448_client_and_server_hello() -> None:
    [(kind, body)] = messages(R.CLIENT_HELLO)
    ch = hs.parse_client_hello(body)
    assert kind == hs.CLIENT_HELLO and ch.random.hex() == R.CLIENT_RANDOM
    assert ch.server_name == "server" and ch.supported_versions == [0x0304]
    assert ch.cipher_suites == [0x1301, 0x1303, 0x1302] and not ch.pre_shared_key
    [(kind, body)] = messages(R.SERVER_HELLO)
    sh = hs.parse_server_hello(body)
    assert kind == hs.SERVER_HELLO and sh.version == 0x0304 and sh.cipher_suite == 0x1301
    assert not sh.hello_retry
    [(_, body)] = messages(HRR)
    assert hs.parse_server_hello(body).hello_retry


def test_tls12_hello_extensions() -> None:
    body = build.client_hello(bytes(32), suites=(0xC02F,), alpn=("kafka", "h2"), tls13=False,
                              session_id=b"\x01" * 32, ticket=b"t" * 40)[4:]
    ch = hs.parse_client_hello(body)
    assert ch.alpn == ["kafka", "h2"] and ch.session_ticket and ch.extended_master_secret and ch.encrypt_then_mac
    sh = hs.parse_server_hello(build.server_hello(bytes(32), 0xC02F, tls13=False, etm=True, alpn="kafka")[4:])
    assert sh.version == 0x0303 and sh.encrypt_then_mac and sh.extended_master_secret and sh.alpn == "kafka"


def test_whole_byte_by_byte_and_trailing() -> None:
    data = (build.client_hello(bytes(32)) + build.handshake(hs.CERTIFICATE, bytes(70000))
            + build.handshake(hs.FINISHED, bytes(12)))
    whole = hs.HandshakeReader().feed(data)
    assert [k for k, _ in whole] == [hs.CLIENT_HELLO, hs.CERTIFICATE, hs.FINISHED]
    assert whole[1][1] is None  # too big: skipped, not buffered
    reader = hs.HandshakeReader()
    one = [m for i in range(len(data)) for m in reader.feed(data[i:i + 1])]
    assert one == whole and len(reader.buf) < 4
    reader = hs.HandshakeReader()
    assert reader.feed(data + b"\x14\x00") == whole and bytes(reader.buf) == b"\x14\x00"


@pytest.mark.parametrize("cut", [1, 10, 40, 60])
def test_truncated_messages_raise_decode_errors(cut) -> None:
    body = build.client_hello(bytes(32), alpn=("kafka",))[4:]
    with pytest.raises(TlsDecodeError) as err:
        hs.parse_client_hello(body[:cut])
    assert err.value.kind == "bad_handshake"
