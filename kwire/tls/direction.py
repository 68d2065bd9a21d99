"""One direction of a TLS connection: its keys, its record sequence number, its way back after a gap.

`KeySlot` is one generation of keys of one direction (a record cipher, and for TLS 1.3 the
traffic secret its successor is derived from after a KeyUpdate). `Direction` opens records with
the current slot at the expected sequence number, moves to the next slot where the protocol says
(after the TLS 1.3 Finished: handshake -> application keys; after a KeyUpdate: the next
generation), and after a gap, when the sequence number is unknown, tries a bounded window of
sequence numbers, nearest the estimate (bytes lost / mean record size) first, with the current
keys and then with the next ones (a Finished or KeyUpdate may have been lost): the AEAD tag or the
MAC says which one is right. A record that verifies under none costs that record only; the search
gives up (the session stops decrypting the connection, `hopeless`) after LOST_IN_A_ROW records in a
row verify under none, or once SEARCH_BUDGET tries were spent on the direction: a stream whose
earlier records verified is not searched for ever, so the work per record stays bounded.
"""

from __future__ import annotations

from kwire.tls.ciphers import RecordCipher, record_cipher
from kwire.tls.handshake import HandshakeReader
from kwire.tls.info import AUTH_FAILED, TlsDecodeError, TlsInfo
from kwire.tls.reasons import AUTH_FAILED_REASON, LOST_SEQUENCE
from kwire.tls.keyschedule import Tls12Keys, tls13_next_secret, tls13_traffic_keys
from kwire.tls.suites import TLS13, CipherSuite

SEARCH_WINDOW = 256  # sequence numbers tried after a gap, beyond twice the estimate of records lost
MAX_SEARCH = 4096  # never more tries than this for one record
NEXT_KEYS_WINDOW = 16  # sequence numbers tried with the next keys after a gap
HOPELESS_FAILURES = 4  # a direction whose first records all fail to verify has the wrong keys
LOST_IN_A_ROW = 8  # records in a row that no search after a gap could open: the sequence is lost
SEARCH_BUDGET = 1 << 17  # sequence numbers tried after gaps on one direction, in all


class KeySlot:
    __slots__ = ("cipher", "suite", "_secret", "phase", "generation")

    def __init__(self, cipher: RecordCipher, suite: CipherSuite, secret: bytes | None, phase: str,
                 generation: int = 0):
        self.cipher = cipher
        self.suite = suite
        self._secret = secret
        self.phase = phase  # "handshake", "application" (TLS 1.3) or "tls12"
        self.generation = generation

    def __repr__(self) -> str:
        return f"<KeySlot {self.suite.name} {self.phase} {self.generation}>"

    @classmethod
    def tls13(cls, suite: CipherSuite, secret: bytes, phase: str, generation: int = 0) -> KeySlot:
        key, iv = tls13_traffic_keys(suite, secret)
        return cls(record_cipher(suite, key, iv), suite, secret, phase, generation)

    @classmethod
    def tls12(cls, suite: CipherSuite, block: Tls12Keys, from_client: bool, encrypt_then_mac: bool) -> KeySlot:
        mac_key, key, iv = block.for_direction(from_client)
        return cls(record_cipher(suite, key, iv, mac_key, encrypt_then_mac), suite, None, "tls12")

    def updated(self) -> KeySlot | None:
        """The next generation after a KeyUpdate (TLS 1.3 application keys only)."""
        if self.suite.version != TLS13 or self.phase != "application":
            return None
        return KeySlot.tls13(self.suite, tls13_next_secret(self.suite, self._secret), "application",
                             self.generation + 1)


class Direction:
    __slots__ = ("index", "info", "protected", "slot", "cipher", "seq", "next_slot", "switch", "hs",
                 "seq_known", "lost_bytes", "verified", "failed", "opened_bytes", "lost_in_a_row", "tries")

    def __init__(self, index: int, info: TlsInfo):
        self.index = index
        self.info = info
        self.protected = False  # records of this direction are encrypted
        self.slot: KeySlot | None = None
        self.cipher: RecordCipher | None = None
        self.seq = 0
        self.next_slot: KeySlot | None = None  # TLS 1.3 handshake phase: the application keys
        self.switch = False  # move to the next keys after the current record
        self.hs = HandshakeReader()
        self.seq_known = True
        self.lost_bytes = 0  # ciphertext lost since the sequence number was last known
        self.verified = 0  # records that verified
        self.failed = 0  # records that did not
        self.opened_bytes = 0  # ciphertext of the records that verified, headers included
        self.lost_in_a_row = 0  # records in a row a search after a gap could not open
        self.tries = 0  # sequence numbers tried by searches after gaps

    def start(self, slot: KeySlot, next_slot: KeySlot | None) -> None:
        self.slot = slot
        self.cipher = slot.cipher
        self.next_slot = next_slot
        self.seq = 0
        self.switch = False

    def lost(self, nbytes: int) -> None:
        self.seq_known = False
        self.lost_bytes += nbytes

    def finished(self) -> None:
        """This direction's Finished: TLS 1.3 moves to the application keys after this record."""
        if self.slot is not None and self.slot.phase == "handshake" and self.next_slot is not None:
            self.switch = True

    def key_update(self) -> None:
        """This direction's KeyUpdate: the next generation after this record."""
        if self.slot is not None and self.slot.phase == "application":
            self.switch = True

    def advance(self) -> None:
        """The record just opened is done."""
        self.seq += 1
        if self.switch:
            self.switch = False
            self._move(self.next_slot if self.slot.phase == "handshake" else self.slot.updated())

    def _move(self, slot: KeySlot | None) -> None:
        if slot is not None:
            self.start(slot, None)

    def hopeless(self) -> bool:
        return (self.verified == 0 and self.failed >= HOPELESS_FAILURES) or self.lost_in_a_row >= LOST_IN_A_ROW \
            or self.tries >= SEARCH_BUDGET

    def failure_reason(self) -> str:
        """Why its records are given up on (a kwire.tls.reasons name)."""
        return AUTH_FAILED_REASON if self.verified == 0 else LOST_SEQUENCE

    def open(self, header: bytes, body, ts_ns: int) -> tuple[int, object] | None:
        """(inner content type, plaintext) of the next record, or None when it does not verify."""
        if self.seq_known:
            try:
                opened = self.cipher.open(self.seq, header, body)
            except TlsDecodeError:
                return self._failure(ts_ns, f"record {self.seq} did not verify")
        else:
            opened = self._search(header, body)
            if opened is None:
                first = self.seq
                self.lost_bytes += len(body) + 5
                self.lost_in_a_row += 1
                return self._failure(ts_ns, f"no sequence number from {first} on verifies after a gap")
            self.lost_in_a_row = 0
        self.verified += 1
        self.opened_bytes += len(body) + 5
        self.info.records_decrypted += 1
        return opened

    def _failure(self, ts_ns: int, detail: str) -> None:
        self.failed += 1
        self.info.records_failed += 1
        self.info.problem(AUTH_FAILED, self.index, ts_ns, detail)
        self.seq += 1  # the record took a sequence number
        return None

    def _candidates(self, body) -> list[int]:
        mean = self.opened_bytes // self.verified if self.verified else 4096
        estimate = self.seq + self.lost_bytes // max(mean, 1)
        span = min(MAX_SEARCH, SEARCH_WINDOW + 2 * (estimate - self.seq))
        seqs = sorted(range(self.seq, self.seq + span), key=lambda s: abs(s - estimate))
        if self.slot.phase == "tls12" and len(body) >= 8:
            explicit = int.from_bytes(body[:8], "big")  # GCM stacks mostly send the sequence number
            if self.seq <= explicit < self.seq + (1 << 24):
                seqs.insert(0, explicit)
        return seqs

    def _search(self, header: bytes, body) -> tuple[int, object] | None:
        seqs = self._candidates(body)
        self.tries += len(seqs) + NEXT_KEYS_WINDOW
        found = self.cipher.find(seqs, header, body)
        if found is not None:
            self.seq = found[0]
            self.seq_known = True
            self.lost_bytes = 0
            return found[1], found[2]
        following = self.next_slot if self.slot.phase == "handshake" else self.slot.updated()
        if following is not None:
            found = following.cipher.find(range(NEXT_KEYS_WINDOW), header, body)
            if found is not None:
                self.start(following, None)
                self.seq = found[0]
                self.seq_known = True
                self.lost_bytes = 0
                return found[1], found[2]
        return None
