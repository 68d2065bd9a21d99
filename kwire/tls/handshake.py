"""TLS handshake messages: reassembled across records, and the few kwire reads, parsed.

`HandshakeReader.feed(data)` takes the content of handshake records of one direction (plaintext,
or decrypted) and returns the messages completed, as `(msg_type, body)`; a message larger than
MAX_MESSAGE (a certificate chain) or of a type kwire does not read is skipped without being
buffered, and reported with body None. Parsers (`parse_client_hello`, `parse_server_hello`,
`parse_encrypted_extensions`, `parse_key_update`) read what the decryption and the report need:
versions (supported_versions included), randoms, session ids, cipher suites, SNI, ALPN,
extended_master_secret, encrypt_then_mac, session tickets and pre-shared keys. A message that does
not parse raises TlsDecodeError(BAD_HANDSHAKE); nothing is read past a message's end.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kwire.tls.info import BAD_HANDSHAKE, TlsDecodeError

HELLO_REQUEST, CLIENT_HELLO, SERVER_HELLO, NEW_SESSION_TICKET, END_OF_EARLY_DATA = 0, 1, 2, 4, 5
ENCRYPTED_EXTENSIONS, CERTIFICATE, SERVER_KEY_EXCHANGE, CERTIFICATE_REQUEST = 8, 11, 12, 13
SERVER_HELLO_DONE, CERTIFICATE_VERIFY, CLIENT_KEY_EXCHANGE, FINISHED, KEY_UPDATE = 14, 15, 16, 20, 24

PARSED = frozenset({CLIENT_HELLO, SERVER_HELLO, NEW_SESSION_TICKET, ENCRYPTED_EXTENSIONS, FINISHED, KEY_UPDATE,
                    HELLO_REQUEST, END_OF_EARLY_DATA})
MAX_MESSAGE = 1 << 16  # bigger messages (certificates) are skipped, not buffered

# ServerHello.random of a HelloRetryRequest: SHA-256("HelloRetryRequest") (RFC 8446 4.1.3)
HRR_RANDOM = bytes.fromhex("cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c")

EXT_SERVER_NAME, EXT_ALPN, EXT_ENCRYPT_THEN_MAC, EXT_EXTENDED_MASTER_SECRET = 0, 16, 22, 23
EXT_SESSION_TICKET, EXT_PRE_SHARED_KEY, EXT_EARLY_DATA, EXT_SUPPORTED_VERSIONS = 35, 41, 42, 43


class _Reader:
    """Bounds-checked reads from one message body."""

    __slots__ = ("buf", "pos", "end", "what")

    def __init__(self, buf, what: str, pos: int = 0, end: int | None = None):
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end
        self.what = what

    def take(self, n: int):
        if n > self.end - self.pos:
            raise TlsDecodeError(BAD_HANDSHAKE, f"{self.what}: {n} bytes wanted, {self.end - self.pos} left",
                                 self.pos)
        start = self.pos
        self.pos += n
        return self.buf[start:self.pos]

    def uint(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def vector(self, len_bytes: int):
        return self.take(self.uint(len_bytes))

    def sub(self, len_bytes: int, what: str) -> "_Reader":
        n = self.uint(len_bytes)
        self.take(n)
        return _Reader(self.buf, what, self.pos - n, self.pos)

    def left(self) -> int:
        return self.end - self.pos


def _extensions(r: _Reader, what: str) -> dict[int, object]:
    """Extension type -> data (the last one wins when a type repeats)."""
    out: dict[int, object] = {}
    if not r.left():
        return out
    ext = r.sub(2, what + " extensions")
    while ext.left():
        kind = ext.uint(2)
        out[kind] = ext.vector(2)
    return out


def _alpn_list(data) -> list[str]:
    r = _Reader(data, "ALPN")
    names = r.sub(2, "ALPN list")
    out = []
    while names.left():
        out.append(bytes(names.vector(1)).decode("ascii", "replace"))
    return out


def _server_name(data) -> str | None:
    r = _Reader(data, "server_name")
    names = r.sub(2, "server_name list")
    while names.left():
        kind = names.uint(1)
        name = names.vector(2)
        if kind == 0:
            return bytes(name).decode("ascii", "replace")
    return None


@dataclass(slots=True)
class ClientHello:
    legacy_version: int
    random: bytes
    session_id: bytes
    cipher_suites: list[int]
    server_name: str | None = None
    alpn: list[str] = field(default_factory=list)
    supported_versions: list[int] = field(default_factory=list)
    extended_master_secret: bool = False
    encrypt_then_mac: bool = False
    session_ticket: bool = False  # a non-empty ticket offered (TLS 1.2 resumption)
    pre_shared_key: bool = False  # PSK identities offered (TLS 1.3 resumption)
    early_data: bool = False


@dataclass(slots=True)
class ServerHello:
    legacy_version: int
    random: bytes
    session_id: bytes
    cipher_suite: int
    selected_version: int | None = None  # supported_versions (TLS 1.3)
    extended_master_secret: bool = False
    encrypt_then_mac: bool = False
    alpn: str | None = None  # TLS 1.2 (TLS 1.3 says it in EncryptedExtensions)
    pre_shared_key: bool = False  # the server accepted a PSK (TLS 1.3 resumption)

    @property
    def version(self) -> int:
        return self.selected_version if self.selected_version is not None else self.legacy_version

    @property
    def hello_retry(self) -> bool:
        return self.random == HRR_RANDOM


def parse_client_hello(body) -> ClientHello:
    r = _Reader(body, "ClientHello")
    hello = ClientHello(r.uint(2), bytes(r.take(32)), bytes(r.vector(1)), [])
    suites = r.sub(2, "cipher suites")
    while suites.left() >= 2:
        hello.cipher_suites.append(suites.uint(2))
    r.vector(1)  # compression methods
    ext = _extensions(r, "ClientHello")
    if EXT_SERVER_NAME in ext:
        hello.server_name = _server_name(ext[EXT_SERVER_NAME])
    if EXT_ALPN in ext:
        hello.alpn = _alpn_list(ext[EXT_ALPN])
    if EXT_SUPPORTED_VERSIONS in ext:
        versions = _Reader(ext[EXT_SUPPORTED_VERSIONS], "supported_versions").sub(1, "versions")
        while versions.left() >= 2:
            hello.supported_versions.append(versions.uint(2))
    hello.extended_master_secret = EXT_EXTENDED_MASTER_SECRET in ext
    hello.encrypt_then_mac = EXT_ENCRYPT_THEN_MAC in ext
    hello.session_ticket = bool(len(ext.get(EXT_SESSION_TICKET, b"")))
    hello.pre_shared_key = EXT_PRE_SHARED_KEY in ext
    hello.early_data = EXT_EARLY_DATA in ext
    return hello


def parse_server_hello(body) -> ServerHello:
    r = _Reader(body, "ServerHello")
    hello = ServerHello(r.uint(2), bytes(r.take(32)), bytes(r.vector(1)), r.uint(2))
    r.uint(1)  # compression method
    ext = _extensions(r, "ServerHello")
    if EXT_SUPPORTED_VERSIONS in ext:
        data = ext[EXT_SUPPORTED_VERSIONS]
        if len(data) != 2:
            raise TlsDecodeError(BAD_HANDSHAKE, "ServerHello supported_versions is not one version")
        hello.selected_version = int.from_bytes(data, "big")
    hello.extended_master_secret = EXT_EXTENDED_MASTER_SECRET in ext
    hello.encrypt_then_mac = EXT_ENCRYPT_THEN_MAC in ext
    hello.pre_shared_key = EXT_PRE_SHARED_KEY in ext
    if EXT_ALPN in ext:
        names = _alpn_list(ext[EXT_ALPN])
        hello.alpn = names[0] if names else None
    return hello


def parse_encrypted_extensions(body) -> str | None:
    """The ALPN protocol the server chose (TLS 1.3), or None."""
    ext = _extensions(_Reader(body, "EncryptedExtensions"), "EncryptedExtensions")
    if EXT_ALPN in ext:
        names = _alpn_list(ext[EXT_ALPN])
        return names[0] if names else None
    return None


def parse_key_update(body) -> bool:
    """KeyUpdate.request_update: True when the sender asks the peer to update too."""
    if len(body) != 1 or body[0] > 1:
        raise TlsDecodeError(BAD_HANDSHAKE, "KeyUpdate is not one byte 0 or 1")
    return body[0] == 1


class HandshakeReader:
    """Handshake messages of one direction, across records (see the module docstring)."""

    __slots__ = ("buf", "skip", "skip_type")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.skip = 0  # body bytes of a skipped message still to come
        self.skip_type = -1

    def reset(self) -> None:
        """Bytes were lost: drop the message in progress."""
        self.buf.clear()
        self.skip = 0
        self.skip_type = -1

    def feed(self, data) -> list[tuple[int, object]]:
        out: list[tuple[int, object]] = []
        view = memoryview(data)
        if self.skip:
            n = min(self.skip, len(view))
            self.skip -= n
            view = view[n:]
            if self.skip:
                return out
            out.append((self.skip_type, None))
        buf = self.buf
        buf += view
        pos = 0
        while len(buf) - pos >= 4:
            msg_type = buf[pos]
            length = int.from_bytes(buf[pos + 1:pos + 4], "big")
            if msg_type not in PARSED or length > MAX_MESSAGE:
                left = len(buf) - pos - 4
                if left >= length:
                    out.append((msg_type, None))
                    pos += 4 + length
                    continue
                self.skip = length - left
                self.skip_type = msg_type
                pos = len(buf)
                break
            if len(buf) - pos - 4 < length:
                break
            out.append((msg_type, bytes(buf[pos + 4:pos + 4 + length])))
            pos += 4 + length
        del buf[:pos]
        return out
