"""Key schedules against published vectors and against an implementation apart from kwire's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.tls.keyschedule import (
    hkdf_expand_label, prf_tls12, tls12_key_block, tls13_next_secret, tls13_traffic_keys,
)
from kwire.tls.suites import SUITES
from tests.tls import build
from tests.tls import rfc8448 as R

# The TLS 1.2 PRF vector circulated on the IETF TLS working group list (P_SHA256, 100 bytes).
SHA256_SECRET, SHA256_SEED = "9bbe436ba940f017b17652849a71db35", "a0ba9f936cda311827a6f796ffd5198c"
SHA256_OUT = ("e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a6b301791e90d35c9c9a46b4e14baf9af"
              "0fa022f7077def17abfd3797c0564bab4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff70187"
              "347b66")
# P_SHA384 from the same list (its first 48 bytes), extended to 148 bytes with OpenSSL:
# openssl kdf -keylen 148 -kdfopt digest:SHA2-384 -kdfopt hexsecret:b80b... -kdfopt hexseed:<"test label"+seed> TLS1-PRF
SHA384_SECRET, SHA384_SEED = "b80b733d6ceefcdc71566ea48e5567df", "cd665cf6a8447dd6ff8b27555edb7465"
SHA384_OUT = ("7b0c18e9ced410ed1804f2cfa34a336a1c14dffb4900bb5fd7942107e81c83cde9ca0faa60be9fe34f82b1233c9146a0"
              "e534cb400fed2700884f9dc236f80edd8bfa961144c9e8d792eca722a7b32fc3d416d473ebc2c5fd4abfdad05d9184259b"
              "5bf8cd4d90fa0d31e2dec479e4f1a26066f2eea9a69236a3e52655c9e9aee691c8f3a26854308d5eaa3be85e0990703d73"
              "e56f")


def test_tls12_prf_published_vectors() -> None:
    got = prf_tls12("sha256", bytes.fromhex(SHA256_SECRET), b"test label", bytes.fromhex(SHA256_SEED), 100)
    assert got.hex() == SHA256_OUT
    got = prf_tls12("sha384", bytes.fromhex(SHA384_SECRET), b"test label", bytes.fromhex(SHA384_SEED), 148)
    assert got.hex() == SHA384_OUT
    assert prf_tls12("sha256", bytes.fromhex(SHA256_SECRET), b"test label", bytes.fromhex(SHA256_SEED),
                     7).hex() == SHA256_OUT[:14]


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(sorted(s.id for s in SUITES.values() if s.version == 0x0303)), st.binary(min_size=48, max_size=48),
       st.binary(min_size=32, max_size=32), st.binary(min_size=32, max_size=32))
def test_tls12_key_block_equals_the_standard_library_prf(suite_id, master, client_random, server_random) -> None:
    suite = SUITES[suite_id]
    keys = tls12_key_block(suite, master, client_random, server_random)
    mac = suite.mac_len if suite.mac else 0
    n = 2 * (mac + suite.key_len + suite.fixed_iv_len)
    block = build.p_hash(suite.hash, master, b"key expansion" + server_random + client_random, n)
    assert (keys.client_mac + keys.server_mac + keys.client_key + keys.server_key + keys.client_iv
            + keys.server_iv) == block
    assert len(keys.client_key) == suite.key_len and len(keys.server_iv) == suite.fixed_iv_len


def test_tls13_traffic_keys_rfc8448() -> None:
    suite = SUITES[0x1301]
    for secret, key, iv in ((R.CLIENT_HS_SECRET, R.CLIENT_HS_KEY, R.CLIENT_HS_IV),
                            (R.SERVER_HS_SECRET, R.SERVER_HS_KEY, R.SERVER_HS_IV),
                            (R.CLIENT_APP_SECRET, R.CLIENT_APP_KEY, R.CLIENT_APP_IV),
                            (R.SERVER_APP_SECRET, R.SERVER_APP_KEY, R.SERVER_APP_IV)):
        got_key, got_iv = tls13_traffic_keys(suite, bytes.fromhex(secret))
        assert (got_key.hex(), got_iv.hex()) == (key, iv)


def test_hkdf_expand_label_rfc8448_finished_key() -> None:
    # RFC 8448 section 3: {server} derive secret "tls13 finished" from the server handshake secret
    got = hkdf_expand_label("sha256", bytes.fromhex(R.SERVER_HS_SECRET), b"finished", b"", 32)
    assert got.hex() == "008d3b66f816ea559f96b537e885c31fc068bf492c652f01f288a1d8cdc19fc8"


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([0x1301, 0x1302, 0x1303]), st.binary(min_size=48, max_size=48))
def test_tls13_schedule_equals_a_hand_written_hkdf(suite_id, raw) -> None:
    suite = SUITES[suite_id]
    secret = raw[:32] if suite.hash == "sha256" else raw
    key, iv = tls13_traffic_keys(suite, secret)
    assert key == build.hkdf_expand_label(suite.hash, secret, b"key", suite.key_len)
    assert iv == build.hkdf_expand_label(suite.hash, secret, b"iv", 12)
    assert tls13_next_secret(suite, secret) == build.hkdf_expand_label(suite.hash, secret, b"traffic upd",
                                                                       len(secret))
