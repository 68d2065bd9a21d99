"""Key schedules: from the secrets a key log holds to the keys and IVs that protect records.

TLS 1.2 (RFC 5246 section 5 and 6.3): the PRF P_hash built on HMAC, and the key block expanded
from the master secret and both randoms (`tls12_key_block`). TLS 1.3 (RFC 8446 section 7):
HKDF-Expand-Label, the traffic key and IV of a traffic secret (`tls13_traffic_keys`), and the next
generation of an application traffic secret after a KeyUpdate (`tls13_next_secret`).

Only primitives of the `cryptography` package (HMAC, HKDFExpand, hashes) are used. Key material
is returned as bytes and never put in a message, a repr or an exception.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.hmac import HMAC
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

from kwire.tls.suites import AES_CBC, CipherSuite

HASHES = {"sha1": hashes.SHA1, "sha256": hashes.SHA256, "sha384": hashes.SHA384}
HASH_LEN = {"sha1": 20, "sha256": 32, "sha384": 48}


def hmac(hash_name: str, key: bytes, data: bytes) -> bytes:
    h = HMAC(key, HASHES[hash_name]())
    h.update(data)
    return h.finalize()


def prf_tls12(hash_name: str, secret: bytes, label: bytes, seed: bytes, length: int) -> bytes:
    """PRF(secret, label, seed) of TLS 1.2 = P_hash(secret, label + seed), `length` bytes."""
    seed = label + seed
    out = bytearray()
    a = seed
    while len(out) < length:
        a = hmac(hash_name, secret, a)  # A(i) = HMAC(secret, A(i-1))
        out += hmac(hash_name, secret, a + seed)
    return bytes(out[:length])


@dataclass(frozen=True, slots=True)
class Tls12Keys:
    """One TLS 1.2 key block, split (RFC 5246 section 6.3). Never shown."""

    client_mac: bytes = field(repr=False)
    server_mac: bytes = field(repr=False)
    client_key: bytes = field(repr=False)
    server_key: bytes = field(repr=False)
    client_iv: bytes = field(repr=False)
    server_iv: bytes = field(repr=False)

    def for_direction(self, from_client: bool) -> tuple[bytes, bytes, bytes]:
        """(mac key, cipher key, fixed IV) of the records one side sends."""
        if from_client:
            return self.client_mac, self.client_key, self.client_iv
        return self.server_mac, self.server_key, self.server_iv


def tls12_key_block(suite: CipherSuite, master_secret: bytes, client_random: bytes,
                    server_random: bytes) -> Tls12Keys:
    """The key block of `suite`: key_expansion over server_random + client_random."""
    mac_len = suite.mac_len if suite.cipher == AES_CBC else 0
    sizes = (mac_len, mac_len, suite.key_len, suite.key_len, suite.fixed_iv_len, suite.fixed_iv_len)
    block = prf_tls12(suite.hash, master_secret, b"key expansion", server_random + client_random, sum(sizes))
    parts = []
    pos = 0
    for size in sizes:
        parts.append(block[pos:pos + size])
        pos += size
    return Tls12Keys(*parts)


def hkdf_expand_label(hash_name: str, secret: bytes, label: bytes, context: bytes, length: int) -> bytes:
    """HKDF-Expand-Label (RFC 8446 section 7.1): HkdfLabel = length, "tls13 " + label, context."""
    full = b"tls13 " + label
    info = struct.pack("!HB", length, len(full)) + full + struct.pack("!B", len(context)) + context
    return HKDFExpand(HASHES[hash_name](), length, info).derive(secret)


def tls13_traffic_keys(suite: CipherSuite, secret: bytes) -> tuple[bytes, bytes]:
    """(write key, write IV) of a TLS 1.3 traffic secret."""
    key = hkdf_expand_label(suite.hash, secret, b"key", b"", suite.key_len)
    iv = hkdf_expand_label(suite.hash, secret, b"iv", b"", 12)
    return key, iv


def tls13_next_secret(suite: CipherSuite, secret: bytes) -> bytes:
    """application_traffic_secret_N+1 = HKDF-Expand-Label(secret_N, "traffic upd", "", Hash.length)."""
    return hkdf_expand_label(suite.hash, secret, b"traffic upd", b"", HASH_LEN[suite.hash])
