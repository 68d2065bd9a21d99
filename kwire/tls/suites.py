"""TLS versions and cipher suites: what kwire can decrypt, and names for the ones it cannot.

A `CipherSuite` says everything the key schedule and the record ciphers need: the protocol
version it belongs to, the bulk cipher (`AES_GCM`, `CHACHA20`, `AES_CBC`), key and IV lengths,
the MAC of the CBC suites and the hash of the PRF (TLS 1.2) or HKDF (TLS 1.3). `SUITES` holds the
decryptable ones; `suite_name(id)` names any id (IANA names for common suites, else hex).
"""

from __future__ import annotations

from dataclasses import dataclass

TLS10, TLS11, TLS12, TLS13 = 0x0301, 0x0302, 0x0303, 0x0304

VERSION_NAMES = {0x0300: "SSL 3.0", TLS10: "TLS 1.0", TLS11: "TLS 1.1", TLS12: "TLS 1.2", TLS13: "TLS 1.3"}

AES_GCM, CHACHA20, AES_CBC = "AES-GCM", "ChaCha20-Poly1305", "AES-CBC"


def version_name(version: int | None) -> str | None:
    """'TLS 1.2' for 0x0303; hex for anything else (draft and GREASE values); None for None."""
    if version is None:
        return None
    return VERSION_NAMES.get(version, f"0x{version:04x}")


@dataclass(frozen=True, slots=True)
class CipherSuite:
    id: int
    name: str
    version: int  # TLS12 or TLS13
    cipher: str  # AES_GCM, CHACHA20 or AES_CBC
    key_len: int
    fixed_iv_len: int  # key-block IV bytes: 12 (TLS 1.3, ChaCha20), 4 (TLS 1.2 GCM salt), 0 (CBC: IV per record)
    hash: str  # PRF / HKDF hash: "sha256" or "sha384"
    mac: str | None = None  # CBC suites: the record MAC hash ("sha1", "sha256", "sha384")

    @property
    def mac_len(self) -> int:
        return {None: 0, "sha1": 20, "sha256": 32, "sha384": 48}[self.mac]


def _s13(id_: int, name: str, cipher: str, key_len: int, hash_: str) -> CipherSuite:
    return CipherSuite(id_, name, TLS13, cipher, key_len, 12, hash_)


def _gcm12(id_: int, name: str) -> CipherSuite:
    big = "AES_256" in name
    return CipherSuite(id_, name, TLS12, AES_GCM, 32 if big else 16, 4, "sha384" if big else "sha256")


def _chacha12(id_: int, name: str) -> CipherSuite:
    return CipherSuite(id_, name, TLS12, CHACHA20, 32, 12, "sha256")


def _cbc12(id_: int, name: str) -> CipherSuite:
    mac = "sha384" if name.endswith("SHA384") else "sha256" if name.endswith("SHA256") else "sha1"
    return CipherSuite(id_, name, TLS12, AES_CBC, 32 if "AES_256" in name else 16, 0,
                       "sha384" if mac == "sha384" else "sha256", mac)


_ALL = [
    _s13(0x1301, "TLS_AES_128_GCM_SHA256", AES_GCM, 16, "sha256"),
    _s13(0x1302, "TLS_AES_256_GCM_SHA384", AES_GCM, 32, "sha384"),
    _s13(0x1303, "TLS_CHACHA20_POLY1305_SHA256", CHACHA20, 32, "sha256"),
    _gcm12(0x009C, "TLS_RSA_WITH_AES_128_GCM_SHA256"),
    _gcm12(0x009D, "TLS_RSA_WITH_AES_256_GCM_SHA384"),
    _gcm12(0x009E, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"),
    _gcm12(0x009F, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384"),
    _gcm12(0xC02B, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"),
    _gcm12(0xC02C, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
    _gcm12(0xC02F, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
    _gcm12(0xC030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"),
    _chacha12(0xCCA8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
    _chacha12(0xCCA9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"),
    _chacha12(0xCCAA, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
    _cbc12(0x002F, "TLS_RSA_WITH_AES_128_CBC_SHA"),
    _cbc12(0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA"),
    _cbc12(0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA"),
    _cbc12(0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA"),
    _cbc12(0x003C, "TLS_RSA_WITH_AES_128_CBC_SHA256"),
    _cbc12(0x003D, "TLS_RSA_WITH_AES_256_CBC_SHA256"),
    _cbc12(0x0067, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256"),
    _cbc12(0x006B, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256"),
    _cbc12(0xC009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"),
    _cbc12(0xC00A, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA"),
    _cbc12(0xC013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"),
    _cbc12(0xC014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"),
    _cbc12(0xC023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256"),
    _cbc12(0xC024, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384"),
    _cbc12(0xC027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"),
    _cbc12(0xC028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"),
]

SUITES: dict[int, CipherSuite] = {s.id: s for s in _ALL}

# Names of suites seen in the wild that kwire does not decrypt (reported by name).
_OTHER_NAMES = {
    0x1304: "TLS_AES_128_CCM_SHA256",
    0x1305: "TLS_AES_128_CCM_8_SHA256",
    0x000A: "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
    0x0005: "TLS_RSA_WITH_RC4_128_SHA",
    0xC012: "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
    0xC0AC: "TLS_ECDHE_ECDSA_WITH_AES_128_CCM",
    0xC0AD: "TLS_ECDHE_ECDSA_WITH_AES_256_CCM",
    0xC09C: "TLS_RSA_WITH_AES_128_CCM",
    0xC09D: "TLS_RSA_WITH_AES_256_CCM",
    0x00FF: "TLS_EMPTY_RENEGOTIATION_INFO_SCSV",
}


def suite_name(suite_id: int | None) -> str | None:
    """The IANA name of a cipher suite id, or '0x....' when kwire does not know it."""
    if suite_id is None:
        return None
    suite = SUITES.get(suite_id)
    if suite is not None:
        return suite.name
    return _OTHER_NAMES.get(suite_id, f"0x{suite_id:04x}")
