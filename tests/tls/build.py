"""Build TLS conversations for tests and benchmarks: handshake records and protected records.

The protecting side is written here from the RFCs, independently of kwire.tls: keys come from a
PRF and an HKDF-Expand-Label written with the standard library's hmac/hashlib (not the
`cryptography` HMAC kwire uses), records are sealed with `cryptography`'s ciphers the way a TLS
stack seals them. `Conversation` makes a whole connection (ClientHello, ServerHello, CCS or the
TLS 1.3 flights, application data, KeyUpdate) and the key log line(s) that open it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from kwire.tls.suites import AES_CBC, AES_GCM, SUITES, TLS12, TLS13

_H = {"sha1": hashlib.sha1, "sha256": hashlib.sha256, "sha384": hashlib.sha384}


def p_hash(name: str, secret: bytes, seed: bytes, length: int) -> bytes:
    """RFC 5246 P_hash with the standard library (an implementation apart from kwire's)."""
    out, a = b"", seed
    while len(out) < length:
        a = hmac.new(secret, a, _H[name]).digest()
        out += hmac.new(secret, a + seed, _H[name]).digest()
    return out[:length]


def hkdf_expand_label(name: str, secret: bytes, label: bytes, length: int) -> bytes:
    """RFC 8446 HKDF-Expand-Label with an empty context, HKDF-Expand (RFC 5869) by hand."""
    full = b"tls13 " + label
    info = struct.pack("!HB", length, len(full)) + full + b"\x00"
    out, block, i = b"", b"", 1
    while len(out) < length:
        block = hmac.new(secret, block + info + bytes([i]), _H[name]).digest()
        out += block
        i += 1
    return out[:length]


def record(ctype: int, body: bytes, version: int = 0x0303) -> bytes:
    return struct.pack("!BHH", ctype, version, len(body)) + body


def handshake(msg_type: int, body: bytes) -> bytes:
    return bytes([msg_type]) + len(body).to_bytes(3, "big") + body


def _ext(kind: int, data: bytes) -> bytes:
    return struct.pack("!HH", kind, len(data)) + data


def client_hello(random: bytes, *, suites=(0x1301,), server_name: str | None = "kafka.test",
                 alpn=(), tls13: bool = True, session_id: bytes = b"", ticket: bytes = b"",
                 ems: bool = True, etm: bool = True) -> bytes:
    exts = b""
    if server_name:
        name = server_name.encode()
        entry = b"\x00" + struct.pack("!H", len(name)) + name
        exts += _ext(0, struct.pack("!H", len(entry)) + entry)
    if alpn:
        names = b"".join(bytes([len(a)]) + a.encode() for a in alpn)
        exts += _ext(16, struct.pack("!H", len(names)) + names)
    if tls13:
        exts += _ext(43, b"\x04\x03\x04\x03\x03")
    if ems:
        exts += _ext(23, b"")
    if etm:
        exts += _ext(22, b"")
    exts += _ext(35, ticket)
    body = (b"\x03\x03" + random + bytes([len(session_id)]) + session_id
            + struct.pack("!H", 2 * len(suites)) + b"".join(struct.pack("!H", s) for s in suites)
            + b"\x01\x00" + struct.pack("!H", len(exts)) + exts)
    return handshake(1, body)


def server_hello(random: bytes, suite: int, *, tls13: bool = True, session_id: bytes = b"",
                 ems: bool = True, etm: bool = False, alpn: str | None = None) -> bytes:
    exts = b""
    if tls13:
        exts += _ext(43, b"\x03\x04")
    else:
        if ems:
            exts += _ext(23, b"")
        if etm:
            exts += _ext(22, b"")
        if alpn:
            name = bytes([len(alpn)]) + alpn.encode()
            exts += _ext(16, struct.pack("!H", len(name)) + name)
    body = (b"\x03\x03" + random + bytes([len(session_id)]) + session_id + struct.pack("!H", suite) + b"\x00"
            + struct.pack("!H", len(exts)) + exts)
    return handshake(2, body)


class Sealer:
    """Protects the records one side sends (TLS 1.2 or 1.3), counting its sequence number."""

    def __init__(self, suite_id: int, key: bytes, iv: bytes, mac_key: bytes = b"", etm: bool = False,
                 secret: bytes | None = None):
        self.suite = SUITES[suite_id]
        self.key, self.iv, self.mac_key, self.etm, self.secret = key, iv, mac_key, etm, secret
        self.seq = 0

    def seal(self, ctype: int, plain: bytes, pad: int = 0) -> bytes:
        suite, seq = self.suite, self.seq
        self.seq += 1
        if suite.version == TLS13:
            aead = AESGCM(self.key) if suite.cipher == AES_GCM else ChaCha20Poly1305(self.key)
            inner = plain + bytes([ctype]) + bytes(pad)
            header = struct.pack("!BHH", 23, 0x0303, len(inner) + 16)
            nonce = (int.from_bytes(self.iv, "big") ^ seq).to_bytes(12, "big")
            return header + aead.encrypt(nonce, inner, header)
        aad = struct.pack("!QBHH", seq, ctype, 0x0303, len(plain))
        if suite.cipher == AES_GCM:
            explicit = seq.to_bytes(8, "big")
            return record(ctype, explicit + AESGCM(self.key).encrypt(self.iv + explicit, plain, aad))
        if suite.cipher != AES_CBC:
            nonce = (int.from_bytes(self.iv, "big") ^ seq).to_bytes(12, "big")
            return record(ctype, ChaCha20Poly1305(self.key).encrypt(nonce, plain, aad))
        mac = lambda data: hmac.new(self.mac_key, data, _H[suite.mac]).digest()  # noqa: E731
        iv = os.urandom(16)
        if not self.etm:
            plain = plain + mac(aad + plain)
        pad = 15 - len(plain) % 16  # TLS padding: pad + 1 bytes, each of value pad
        padded = plain + bytes([pad]) * (pad + 1)
        enc = Cipher(algorithms.AES(self.key), modes.CBC(iv)).encryptor()
        body = iv + enc.update(padded) + enc.finalize()
        if self.etm:
            body += mac(struct.pack("!QBHH", seq, ctype, 0x0303, len(body)) + body)
        return record(ctype, body)

    def key_update(self) -> bytes:
        """A TLS 1.3 KeyUpdate record; the keys move to the next generation after it."""
        out = self.seal(22, handshake(24, b"\x00"))
        name = self.suite.hash
        self.secret = hkdf_expand_label(name, self.secret, b"traffic upd", len(self.secret))
        self.key = hkdf_expand_label(name, self.secret, b"key", self.suite.key_len)
        self.iv = hkdf_expand_label(name, self.secret, b"iv", 12)
        self.seq = 0
        return out


def tls13_sealer(suite_id: int, secret: bytes) -> Sealer:
    suite = SUITES[suite_id]
    return Sealer(suite_id, hkdf_expand_label(suite.hash, secret, b"key", suite.key_len),
                  hkdf_expand_label(suite.hash, secret, b"iv", 12), secret=secret)


class Conversation:
    """One TLS connection: `client` / `server` (lists of wire bytes per record, in order as
    `wire`), the key log text, and sealers to add application data."""

    def __init__(self, suite_id: int = 0x1301, *, etm: bool = False, alpn: str | None = None,
                 server_name: str | None = "kafka.test", seed: int = 1):
        rnd = __import__("random").Random(seed)
        self.client_random = rnd.randbytes(32)
        self.server_random = rnd.randbytes(32)
        self.suite = SUITES[suite_id]
        self.wire: list[tuple[int, bytes]] = []  # (direction, record bytes): 0 client -> server
        tls13 = self.suite.version == TLS13
        self.wire.append((0, record(22, client_hello(self.client_random, suites=(suite_id,), tls13=tls13,
                                                      server_name=server_name, alpn=(alpn,) if alpn else ()),
                                    0x0301)))
        self.wire.append((1, record(22, server_hello(self.server_random, suite_id, tls13=tls13, etm=etm,
                                                     alpn=None if tls13 else alpn))))
        cr = self.client_random.hex()
        if tls13:
            secrets = [rnd.randbytes(32 if self.suite.hash == "sha256" else 48) for _ in range(4)]
            labels = ("CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET",
                      "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0")
            self.keylog = "".join(f"{label} {cr} {s.hex()}\n" for label, s in zip(labels, secrets))
            chs, shs = tls13_sealer(suite_id, secrets[0]), tls13_sealer(suite_id, secrets[1])
            self.wire.append((1, record(20, b"\x01")))
            ee = handshake(8, self._ee(alpn))
            self.wire.append((1, shs.seal(22, ee + handshake(11, bytes(900)) + handshake(20, bytes(32)))))
            self.wire.append((0, record(20, b"\x01")))
            self.wire.append((0, chs.seal(22, handshake(20, bytes(32)))))
            self.sealers = (tls13_sealer(suite_id, secrets[2]), tls13_sealer(suite_id, secrets[3]))
        else:
            master = rnd.randbytes(48)
            self.keylog = f"CLIENT_RANDOM {cr} {master.hex()}\n"
            s = self.suite
            mac_len = s.mac_len if s.cipher == AES_CBC else 0
            block = p_hash(s.hash, master, b"key expansion" + self.server_random + self.client_random,
                           2 * (mac_len + s.key_len + s.fixed_iv_len))
            cut = [mac_len, mac_len, s.key_len, s.key_len, s.fixed_iv_len, s.fixed_iv_len]
            parts, pos = [], 0
            for n in cut:
                parts.append(block[pos:pos + n])
                pos += n
            cmac, smac, ckey, skey, civ, siv = parts
            self.sealers = (Sealer(suite_id, ckey, civ, cmac, etm), Sealer(suite_id, skey, siv, smac, etm))
            self.wire.append((1, record(22, handshake(11, bytes(700)) + handshake(14, b""))))
            self.wire.append((0, record(22, handshake(16, bytes(33)))))
            self.wire.append((0, record(20, b"\x01")))
            self.wire.append((0, self.sealers[0].seal(22, handshake(20, bytes(12)))))
            self.wire.append((1, record(20, b"\x01")))
            self.wire.append((1, self.sealers[1].seal(22, handshake(20, bytes(12)))))
        self.plain: tuple[bytearray, bytearray] = (bytearray(), bytearray())

    @staticmethod
    def _ee(alpn: str | None) -> bytes:
        if not alpn:
            return struct.pack("!H", 0)
        names = bytes([len(alpn)]) + alpn.encode()
        ext = _ext(16, struct.pack("!H", len(names)) + names)
        return struct.pack("!H", len(ext)) + ext

    def send(self, direction: int, data: bytes, pad: int = 0) -> bytes:
        """Application data from `direction` in one record; returns the record."""
        rec = self.sealers[direction].seal(23, data, pad) if pad else self.sealers[direction].seal(23, data)
        self.wire.append((direction, rec))
        self.plain[direction].extend(data)
        return rec

    def key_update(self, direction: int) -> bytes:
        rec = self.sealers[direction].key_update()
        self.wire.append((direction, rec))
        return rec

    def stream(self, direction: int) -> bytes:
        return b"".join(rec for d, rec in self.wire if d == direction)
