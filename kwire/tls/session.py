"""The per-connection TLS state machine: handshake, keys, and the decryption of each record.

`TlsSession` is sans-IO. The stream (kwire.tls.stream) gives it whole records of either direction
(`on_record`) and the bytes lost in gaps (`on_gap`); it hands application data on through the
`emit(direction, ts_ns, plaintext)` and `emit_gap(direction, ts_ns, size)` callables it was made
with, and fills a TlsInfo. Connection states, with their named transitions:

    UNKNOWN --ClientHello--> HANDSHAKE --keys for the negotiated suite--> ENCRYPTED
    UNKNOWN --encrypted records, no handshake--> UNDECRYPTABLE ("handshake not captured")
    HANDSHAKE --no key log entry / unsupported version or suite--> UNDECRYPTABLE (reason)
    HANDSHAKE --no entry yet, key_wait_bytes > 0--> WAITING_FOR_KEYS --entry found--> ENCRYPTED
    ENCRYPTED --every record fails to verify--> UNDECRYPTABLE ("authentication failed")

Per direction (kwire.tls.direction.Direction): whether its records are protected, the record
cipher and its sequence number, the keys to move to next (TLS 1.3 Finished, KeyUpdate), and after
a gap a search over a bounded window of sequence numbers (and the next keys) for the record that
verifies. Version and suite decide the schedule: TLS 1.3 from the logged traffic secrets, TLS 1.2
from CLIENT_RANDOM's master secret and both randoms (a resumed handshake logs its own).
"""

from __future__ import annotations

from typing import Callable

from kwire.tls import handshake as hs
from kwire.tls.direction import Direction, KeySlot
from kwire.tls.info import BAD_HANDSHAKE, TlsDecodeError, TlsInfo
from kwire.tls.keylog import (
    CLIENT_HANDSHAKE, CLIENT_RANDOM, CLIENT_TRAFFIC_0, SERVER_HANDSHAKE, SERVER_TRAFFIC_0, ClientSecrets, KeySource,
)
from kwire.tls.keyschedule import tls12_key_block
from kwire.tls.reasons import (NO_CLIENT_HELLO, NO_HANDSHAKE, NO_KEY, NO_KEYLOG, NO_SERVER_HELLO, RENEGOTIATION,
                               UNSUPPORTED_CIPHER_SUITE, UNSUPPORTED_VERSION)
from kwire.tls.records import ALERT, APPLICATION_DATA, CHANGE_CIPHER_SPEC, HANDSHAKE
from kwire.tls.suites import SUITES, TLS12, TLS13, suite_name, version_name

UNKNOWN, HANDSHAKE_STATE, WAITING_FOR_KEYS, ENCRYPTED, UNDECRYPTABLE = (
    "unknown", "handshake", "waiting_for_keys", "encrypted", "undecryptable")
NOT_TLS = "not_tls"  # set by the detector (kwire.tls.detect), never by a session


class TlsSession:
    __slots__ = ("client_hello", "directions", "emit", "emit_gap", "info", "key_wait_bytes", "keys", "no_handshake",
                 "saw_certificate", "secrets", "server_hello", "state", "suite", "waiting", "waiting_bytes")

    def __init__(self, keys: KeySource | None, emit: Callable, emit_gap: Callable, *,
                 key_wait_bytes: int = 0, start_seen: bool = False):
        """`start_seen`: the connection's first bytes were captured, so a missing ClientHello was
        never sent (not lost before the capture began)."""
        self.keys = keys
        self.no_handshake = NO_CLIENT_HELLO if start_seen else NO_HANDSHAKE
        self.emit = emit
        self.emit_gap = emit_gap
        self.key_wait_bytes = key_wait_bytes
        self.info = TlsInfo()
        self.state = UNKNOWN
        self.directions = (Direction(0, self.info), Direction(1, self.info))
        self.client_hello: hs.ClientHello | None = None
        self.server_hello: hs.ServerHello | None = None
        self.suite = None
        self.secrets: ClientSecrets | None = None
        self.saw_certificate = False
        self.waiting: list[tuple[int, bytes, bytes, int]] = []  # records held for keys (live)
        self.waiting_bytes = 0

    # -- state ---------------------------------------------------------------------------------

    def _set_state(self, state: str, reason: str | None = None, detail: str | None = None) -> None:
        """`reason`: why it will not be decrypted, a kwire.tls.reasons name (`detail` where it takes one)."""
        self.state = state
        self.info.state = state
        if reason is not None:
            self.info.not_decrypted(reason, detail)

    def _give_up(self, reason: str, detail: str | None = None) -> None:
        """UNDECRYPTABLE: records from now on are counted, not tried."""
        self._set_state(UNDECRYPTABLE, reason, detail)
        for d in self.directions:
            d.cipher = None
            d.next_slot = None
        for _, header, _, _ in self.waiting:
            self.info.records_undecrypted += 1
        self.waiting = []
        self.waiting_bytes = 0

    # -- records -------------------------------------------------------------------------------

    def on_record(self, direction: int, ts_ns: int, header: bytes, body) -> None:
        ctype = header[0]
        d = self.directions[direction]
        if d.protected and (ctype != CHANGE_CIPHER_SPEC or self.suite is None or self.suite.version != TLS13):
            if self.state is WAITING_FOR_KEYS:
                self._wait(direction, ts_ns, header, body)
                return
            if self.state is UNDECRYPTABLE or d.cipher is None:
                self.info.records_undecrypted += 1
                return
            opened = d.open(header, body, ts_ns)
            if opened is None:
                self.emit_gap(direction, ts_ns, max(0, len(body) - d.cipher.overhead))
                if d.hopeless():
                    self._give_up(d.failure_reason())
                return
            self.opened(d, ts_ns, opened[0], opened[1])
            return
        if ctype == HANDSHAKE:
            self._handshake(d, ts_ns, body)
        elif ctype == CHANGE_CIPHER_SPEC:
            self._change_cipher_spec(d, ts_ns)
        elif ctype == APPLICATION_DATA:
            self._unexpected_encrypted(d, ts_ns, header, body)
        elif ctype != ALERT:
            self.info.records_undecrypted += 1

    def opened(self, d: Direction, ts_ns: int, inner_type: int, plain) -> None:
        """A record of `d` that verified: hand its application data on, read its handshake messages."""
        if inner_type == APPLICATION_DATA:
            if plain:
                self.info.plaintext_bytes[d.index] += len(plain)
                self.emit(d.index, ts_ns, plain)
        elif inner_type == HANDSHAKE:
            self._handshake(d, ts_ns, plain)
        d.advance()

    def _unexpected_encrypted(self, d: Direction, ts_ns: int, header: bytes, body) -> None:
        """Application data in a direction not known to be protected."""
        if self.state is UNKNOWN:
            self._set_state(UNDECRYPTABLE, self.no_handshake)
        elif self.server_hello is not None and self.suite is not None and self.state is ENCRYPTED:
            # The ChangeCipherSpec was lost in a gap: protected from here, sequence unknown.
            self._protect(d, from_gap=True)
            self.on_record(d.index, ts_ns, header, body)
            return
        elif self.client_hello is not None and self.server_hello is None:
            if d.index == self.info.client_direction and self.client_hello.early_data:
                self.info.problem("undecrypted", d.index, ts_ns, "0-RTT early data")
            else:
                self._set_state(UNDECRYPTABLE, NO_SERVER_HELLO)
        self.info.records_undecrypted += 1

    def on_gap(self, direction: int, ts_ns: int, lost: int) -> None:
        """`lost` ciphertext bytes of `direction` were not captured (or not readable as records)."""
        self.info.gaps += 1
        d = self.directions[direction]
        d.lost(lost)
        d.hs.reset()
        if d.protected and d.cipher is not None and self.state is ENCRYPTED:
            self.emit_gap(direction, ts_ns, lost)

    def close(self) -> None:
        if self.state is WAITING_FOR_KEYS:
            self._give_up(NO_KEY)
        elif self.state is UNKNOWN and any(self.info.records):
            self.info.not_decrypted(self.no_handshake)
        elif self.state is HANDSHAKE_STATE and self.server_hello is None and self.info.records_undecrypted:
            self.info.not_decrypted(NO_SERVER_HELLO)

    # -- handshake -----------------------------------------------------------------------------

    def _handshake(self, d: Direction, ts_ns: int, data) -> None:
        try:
            for msg_type, body in d.hs.feed(data):
                self._message(d, msg_type, body)
        except TlsDecodeError as exc:
            d.hs.reset()
            self.info.problem(BAD_HANDSHAKE, d.index, ts_ns, str(exc))

    def _message(self, d: Direction, msg_type: int, body) -> None:
        if msg_type == hs.CLIENT_HELLO:
            if self.state in (ENCRYPTED, UNDECRYPTABLE) and d.protected:
                self._give_up(RENEGOTIATION)
            elif body is not None:
                self._client_hello(d, hs.parse_client_hello(body))
        elif msg_type == hs.SERVER_HELLO and body is not None:
            self._server_hello(d, hs.parse_server_hello(body))
        elif msg_type == hs.CERTIFICATE:
            self.saw_certificate = True
        elif msg_type == hs.ENCRYPTED_EXTENSIONS and body is not None:
            self.info.alpn = hs.parse_encrypted_extensions(body) or self.info.alpn
        elif msg_type == hs.FINISHED:
            d.finished()
        elif msg_type == hs.KEY_UPDATE and body is not None:
            hs.parse_key_update(body)
            self.info.key_updates += 1
            d.key_update()
        elif msg_type == hs.NEW_SESSION_TICKET:
            pass  # a ticket for a later connection: nothing to do here

    def _client_hello(self, d: Direction, hello: hs.ClientHello) -> None:
        info = self.info
        if self.client_hello is not None and hello.random != self.client_hello.random:
            info.problem(BAD_HANDSHAKE, d.index, 0, "second ClientHello with another random")
            return
        self.client_hello = hello
        info.client_direction = d.index
        info.server_name = hello.server_name
        info.alpn_offered = hello.alpn
        if self.state is UNKNOWN:
            self._set_state(HANDSHAKE_STATE)

    def _server_hello(self, d: Direction, hello: hs.ServerHello) -> None:
        info = self.info
        if self.client_hello is None:
            self._set_state(UNDECRYPTABLE, self.no_handshake)
            return
        if hello.hello_retry:
            info.hello_retry = True
            return
        self.server_hello = hello
        version = hello.version
        info.version = version_name(version)
        info.cipher_suite = suite_name(hello.cipher_suite)
        info.extended_master_secret = hello.extended_master_secret
        info.encrypt_then_mac = hello.encrypt_then_mac
        if hello.alpn is not None:
            info.alpn = hello.alpn
        self._resumption(hello)
        if version not in (TLS12, TLS13):
            self._give_up(UNSUPPORTED_VERSION, version_name(version))
            return
        suite = SUITES.get(hello.cipher_suite)
        if suite is None or suite.version != version:
            self._give_up(UNSUPPORTED_CIPHER_SUITE, suite_name(hello.cipher_suite))
            return
        self.suite = suite
        self._find_keys()
        if version == TLS13:
            for direction in self.directions:
                self._protect(direction)

    def _resumption(self, hello: hs.ServerHello) -> None:
        ch = self.client_hello
        info = self.info
        if hello.version == TLS13:
            if hello.pre_shared_key:
                info.resumed, info.resumption = True, "psk"
        elif hello.session_id and hello.session_id == ch.session_id:
            info.resumed, info.resumption = True, "session_id"
        elif ch.session_ticket:
            info.resumption = "session_ticket"  # confirmed when the server's CCS comes before a Certificate

    def _change_cipher_spec(self, d: Direction, ts_ns: int) -> None:
        if self.suite is None or self.suite.version != TLS12:
            return  # TLS 1.3 compatibility CCS, or nothing to decrypt with
        info = self.info
        if d.index != info.client_direction and not self.saw_certificate and info.resumption == "session_ticket":
            info.resumed = True
        self._protect(d)

    # -- keys ----------------------------------------------------------------------------------

    def _find_keys(self) -> None:
        if self.keys is None:
            self._give_up(NO_KEYLOG)
            return
        secrets = self.keys.lookup(self.client_hello.random)
        if secrets is not None and self._usable(secrets):
            self.secrets = secrets
            self._set_state(ENCRYPTED)
        elif self.key_wait_bytes > 0:
            self.secrets = secrets
            self._set_state(WAITING_FOR_KEYS)
        else:
            self._give_up(NO_KEY)

    def _usable(self, secrets: ClientSecrets) -> bool:
        if self.suite.version == TLS12:
            return CLIENT_RANDOM in secrets
        return all(label in secrets for label in (CLIENT_HANDSHAKE, SERVER_HANDSHAKE, CLIENT_TRAFFIC_0,
                                                    SERVER_TRAFFIC_0))

    def _protect(self, d: Direction, from_gap: bool = False) -> None:
        """Records of `d` are protected from the next one on."""
        d.protected = True
        if self.state is not ENCRYPTED:
            return
        from_client = d.index == self.info.client_direction
        suite = self.suite
        secrets = self.secrets
        if suite.version == TLS13:
            hs_secret = secrets.get(CLIENT_HANDSHAKE if from_client else SERVER_HANDSHAKE)
            app_secret = secrets.get(CLIENT_TRAFFIC_0 if from_client else SERVER_TRAFFIC_0)
            d.start(KeySlot.tls13(suite, hs_secret, "handshake"), KeySlot.tls13(suite, app_secret, "application"))
        else:
            block = tls12_key_block(suite, secrets.get(CLIENT_RANDOM), self.client_hello.random,
                                    self.server_hello.random)
            d.start(KeySlot.tls12(suite, block, from_client, self.info.encrypt_then_mac), None)
        if from_gap:
            d.lost(0)

    def _wait(self, direction: int, ts_ns: int, header: bytes, body) -> None:
        """WAITING_FOR_KEYS: hold the record (bounded) and ask the key source again."""
        self.waiting.append((direction, header, bytes(body), ts_ns))
        self.waiting_bytes += len(body) + 5
        secrets = self.keys.lookup(self.client_hello.random)
        if secrets is not None and self._usable(secrets):
            self.secrets = secrets
            self._set_state(ENCRYPTED)
            for d in self.directions:
                if d.protected:
                    self._protect(d)
            waiting, self.waiting, self.waiting_bytes = self.waiting, [], 0
            for index, head, data, ts in waiting:
                self.on_record(index, ts, head, memoryview(data))
        elif self.waiting_bytes > self.key_wait_bytes:
            self._give_up(NO_KEY)
