"""Why a TLS connection, or its rest, was not decrypted: the tls layer's reasons, registered (kwire.reasons).

A TlsSession says one when it gives up (`TlsInfo.not_decrypted(name, detail)`: the first stands, later ones
follow from it); `tls_row` (kwire.tls.info) names the two a connection's counts say (partly decrypted, nothing
encrypted) when no other was given. The stats document's `tls.list` carries each connection's `reason_kind`
(the name) and `reason` (the text made from it); `kwire inspect` says the text.
"""

from __future__ import annotations

from kwire.reasons import Reason, registry

_SEEN = "the stats document's tls.list (`reason_kind`, and `reason`: its text); kwire inspect's TLS note"

NOT_DECRYPTED_LIST = (
    Reason("no_keylog", "kwire was given no key log (--keylog)", _SEEN, "no key log given"),
    Reason("no_key", "the key log has no entry for the connection's client random", _SEEN,
           "no key log entry for this client random"),
    Reason("no_handshake", "the capture began after the connection's handshake (mid-stream)", _SEEN,
           "handshake not captured"),
    Reason("no_client_hello", "the connection's start was captured but its client sent no ClientHello", _SEEN,
           "no handshake: the client sent no ClientHello"),
    Reason("no_server_hello", "the ServerHello was not captured (the keys cannot be chosen without it)", _SEEN,
           "ServerHello not captured"),
    Reason("unsupported_version", "a TLS version kwire does not decrypt (it reads TLS 1.2 and 1.3)", _SEEN,
           "unsupported TLS version {detail}"),
    Reason("unsupported_cipher_suite", "a cipher suite kwire does not decrypt", _SEEN,
           "unsupported cipher suite {detail}"),
    Reason("auth_failed", "no record verified under the keys the key log gave (a wrong key log, or a tampered "
           "record)", _SEEN, "authentication failed"),
    Reason("lost_sequence", "records decrypted, then, after a gap, records in a row verify under no key: the "
           "record sequence was lost", _SEEN,
           "lost its record sequence after a gap (records in a row verify under no key)"),
    Reason("renegotiation", "a TLS 1.2 renegotiation (kwire does not follow it)", _SEEN,
           "renegotiation not supported"),
    Reason("partly_decrypted", "no reason was given, but some records were not decrypted (a record that did not "
           "verify, after a gap): the counts say what was and was not", _SEEN,
           "partly decrypted: {detail}"),
    Reason("nothing_encrypted", "no reason was given and no encrypted record was captured", _SEEN,
           "no encrypted record captured"),
)

NOT_DECRYPTED = registry(NOT_DECRYPTED_LIST)
(NO_KEYLOG, NO_KEY, NO_HANDSHAKE, NO_CLIENT_HELLO, NO_SERVER_HELLO, UNSUPPORTED_VERSION, UNSUPPORTED_CIPHER_SUITE,
 AUTH_FAILED_REASON, LOST_SEQUENCE, RENEGOTIATION, PARTLY_DECRYPTED, NOTHING_ENCRYPTED) = tuple(NOT_DECRYPTED)
