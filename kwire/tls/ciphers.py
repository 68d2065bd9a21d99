"""Record protection: open (authenticate and decrypt) one TLS record with known keys.

One class per construction, all with `open(seq, header, body) -> (content type, plaintext)`,
raising TlsDecodeError(AUTH_FAILED) when the tag or MAC does not verify:
- `Tls13Aead`: TLS 1.3 AES-GCM and ChaCha20-Poly1305; nonce = IV xor seq, AAD = record header,
  inner content type after the content, zero padding stripped (RFC 8446 section 5.2).
- `Tls12Gcm`: TLS 1.2 AES-GCM; nonce = 4-byte salt + 8-byte explicit nonce from the record
  (RFC 5288); AAD = seq, type, version, plaintext length.
- `Tls12ChaCha`: TLS 1.2 ChaCha20-Poly1305 (RFC 7905): nonce = IV xor seq, no explicit nonce.
- `Tls12Cbc`: TLS 1.2 AES-CBC with HMAC, MAC-then-encrypt (RFC 5246 section 6.2.3.2) or
  encrypt-then-MAC (RFC 7366); the IV is the record's first block.
`find(seqs, header, body)` tries candidate sequence numbers (after a gap) and returns the first that
verifies, or None. Plaintext is bytes or a memoryview over it (no per-byte Python loop anywhere).
Cipher objects hold keys in slots and have no repr of their own that shows them.
"""

from __future__ import annotations

import struct
from hmac import compare_digest

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.hmac import HMAC

from kwire.tls.info import AUTH_FAILED, TlsDecodeError
from kwire.tls.keyschedule import HASHES
from kwire.tls.suites import AES_CBC, AES_GCM, CHACHA20, TLS13, CipherSuite

_AAD12 = struct.Struct("!QBHH").pack  # seq, type, version, length
_TAG = 16


def _failed(what: str) -> TlsDecodeError:
    return TlsDecodeError(AUTH_FAILED, f"record {what} did not verify")


def _aead(cipher: str, key: bytes):
    return AESGCM(key) if cipher == AES_GCM else ChaCha20Poly1305(key)


class RecordCipher:
    """Base: `overhead` is the fewest bytes a protected record body can have."""

    __slots__ = ("overhead",)

    def open(self, seq: int, header, body) -> tuple[int, object]:
        raise NotImplementedError

    def find(self, seqs, header, body) -> tuple[int, int, object] | None:
        """(seq, content type, plaintext) for the first of `seqs` under which the record verifies."""
        for seq in seqs:
            try:
                ctype, plain = self.open(seq, header, body)
            except TlsDecodeError:
                continue
            return seq, ctype, plain
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


class Tls13Aead(RecordCipher):
    __slots__ = ("_decrypt", "_iv")

    def __init__(self, cipher: str, key: bytes, iv: bytes):
        self.overhead = _TAG + 1
        self._decrypt = _aead(cipher, key).decrypt
        self._iv = int.from_bytes(iv, "big")

    def open(self, seq: int, header, body) -> tuple[int, object]:
        try:
            plain = self._decrypt((self._iv ^ seq).to_bytes(12, "big"), body, header)
        except InvalidTag:
            raise _failed("tag") from None
        if plain and plain[-1]:
            return plain[-1], memoryview(plain)[:-1]
        content = plain.rstrip(b"\x00")  # padded record (rare)
        if not content:
            raise TlsDecodeError(AUTH_FAILED, "record without a content type")
        return content[-1], content[:-1]


class Tls12Gcm(RecordCipher):
    __slots__ = ("_decrypt", "_salt")

    def __init__(self, key: bytes, salt: bytes):
        self.overhead = 8 + _TAG
        self._decrypt = AESGCM(key).decrypt
        self._salt = salt

    def open(self, seq: int, header, body) -> tuple[int, object]:
        if len(body) < 24:
            raise _failed("length")
        ctype = header[0]
        aad = _AAD12(seq, ctype, (header[1] << 8) | header[2], len(body) - 24)
        try:
            return ctype, self._decrypt(self._salt + bytes(body[:8]), body[8:], aad)
        except InvalidTag:
            raise _failed("tag") from None


class Tls12ChaCha(RecordCipher):
    __slots__ = ("_decrypt", "_iv")

    def __init__(self, key: bytes, iv: bytes):
        self.overhead = _TAG
        self._decrypt = ChaCha20Poly1305(key).decrypt
        self._iv = int.from_bytes(iv, "big")

    def open(self, seq: int, header, body) -> tuple[int, object]:
        if len(body) < _TAG:
            raise _failed("length")
        ctype = header[0]
        aad = _AAD12(seq, ctype, (header[1] << 8) | header[2], len(body) - _TAG)
        try:
            return ctype, self._decrypt((self._iv ^ seq).to_bytes(12, "big"), body, aad)
        except InvalidTag:
            raise _failed("tag") from None


class Tls12Cbc(RecordCipher):
    __slots__ = ("_algorithm", "_mac", "_mac_len", "_etm")

    def __init__(self, key: bytes, mac_hash: str, mac_key: bytes, mac_len: int, encrypt_then_mac: bool):
        self._algorithm = algorithms.AES(key)
        self._mac = HMAC(mac_key, HASHES[mac_hash]())
        self._mac_len = mac_len
        self._etm = encrypt_then_mac
        # IV block, one cipher block, and the MAC (inside it, or after it with EtM)
        self.overhead = 16 + 16 + (mac_len if encrypt_then_mac else 0)

    def _mac_of(self, seq: int, header, length: int, *parts) -> bytes:
        h = self._mac.copy()
        h.update(_AAD12(seq, header[0], (header[1] << 8) | header[2], length))
        for part in parts:
            h.update(part)
        return h.finalize()

    def _decrypt(self, body) -> bytes:
        if len(body) < 32 or len(body) % 16:
            raise _failed("length")
        decryptor = Cipher(self._algorithm, modes.CBC(bytes(body[:16]))).decryptor()
        return decryptor.update(body[16:]) + decryptor.finalize()

    def _unpad(self, plain: bytes, mac_len: int) -> int:
        """Where the content (and MAC) ends before the padding; raises on bad padding."""
        pad = plain[-1]
        end = len(plain) - pad - 1
        if end < mac_len or plain[end:] != bytes((pad,)) * (pad + 1):
            raise _failed("padding")
        return end

    def open(self, seq: int, header, body) -> tuple[int, object]:
        found = self.find((seq,), header, body)
        if found is None:
            raise _failed("MAC")
        return found[1], found[2]

    def find(self, seqs, header, body) -> tuple[int, int, object] | None:
        mac_len = self._mac_len
        if self._etm:
            n = len(body) - mac_len
            if n < 32:
                return None
            cipher, tag = body[:n], bytes(body[n:])
            for seq in seqs:
                if compare_digest(self._mac_of(seq, header, n, cipher), tag):
                    try:
                        plain = self._decrypt(cipher)
                        return seq, header[0], memoryview(plain)[:self._unpad(plain, 0)]
                    except TlsDecodeError:
                        return None
            return None
        try:
            plain = self._decrypt(body)
            end = self._unpad(plain, mac_len) - mac_len
        except TlsDecodeError:
            return None
        view = memoryview(plain)
        content, tag = view[:end], bytes(view[end:end + mac_len])
        for seq in seqs:
            if compare_digest(self._mac_of(seq, header, end, content), tag):
                return seq, header[0], content
        return None


def record_cipher(suite: CipherSuite, key: bytes, iv: bytes, mac_key: bytes = b"",
                  encrypt_then_mac: bool = False) -> RecordCipher:
    """The opener of one direction's records under `suite` with these keys."""
    if suite.version == TLS13:
        return Tls13Aead(suite.cipher, key, iv)
    if suite.cipher == AES_GCM:
        return Tls12Gcm(key, iv)
    if suite.cipher == CHACHA20:
        return Tls12ChaCha(key, iv)
    if suite.cipher == AES_CBC:
        return Tls12Cbc(key, suite.mac, mac_key, suite.mac_len, encrypt_then_mac)
    raise ValueError(f"no record cipher for {suite.name}")
