"""What one TLS connection showed and what it hid: `TlsInfo`, and its record problems as data.

A TlsStream fills one TlsInfo per connection and hands it to its owner at close (the `report`
callable, or `TlsStream.info`). It says what the handshake named (server name, ALPN, version,
cipher suite, resumption), how many bytes and records went each way, how many were decrypted or
failed, and, when something could not be decrypted, why (`reason_kind`, a name kwire.tls.reasons registers,
and `reason`, its text: "unsupported cipher suite X"). Problems on single records
(`RecordProblem`, a kind from PROBLEM_KINDS plus a detail) are kept up to MAX_PROBLEMS. Nothing
here ever holds key material.

`tls_row(conn, info)` is what summaries and statistics keep of one connection (plain values), and
`TlsNotes` keeps many: how many connections, how many decrypted, and the rows of the first
MAX_LISTED by (ts, client, server), a choice with a total tie-break, so notes taken in several
places (worker processes, Spark partitions) merge to exactly the whole, in any order.
"""

from __future__ import annotations

from kwire.errors import DecodeError
from kwire.net.segment import format_endpoint
from kwire.tcp.stream import Connection
from kwire.tls.reasons import (NO_HANDSHAKE, NO_KEY, NO_KEYLOG, NOT_DECRYPTED, NOTHING_ENCRYPTED,
                               PARTLY_DECRYPTED)

# Kinds of record problems.
AUTH_FAILED = "auth_failed"  # AEAD tag or MAC did not verify at any sequence number tried
BAD_RECORD_HEADER = "bad_record_header"  # not a plausible record header where one must start
RECORD_OVERFLOW = "record_overflow"  # a length over what TLS allows: an error, never an allocation
BAD_HANDSHAKE = "bad_handshake"  # a handshake message that does not parse
LOST_BYTES = "lost_bytes"  # a TCP gap: records lost, the stream resynchronised after it
UNDECRYPTED = "undecrypted"  # a record kwire could not even try (0-RTT data, renegotiation)
PROBLEM_KINDS = (AUTH_FAILED, BAD_RECORD_HEADER, RECORD_OVERFLOW, BAD_HANDSHAKE, LOST_BYTES, UNDECRYPTED)

# The texts of the reasons a connection (or its rest) was not decrypted (kwire.tls.reasons names them: code passes
# the names, and these are what `reason` says for them).
REASON_NO_KEYLOG = NOT_DECRYPTED[NO_KEYLOG].say()
REASON_NO_KEY = NOT_DECRYPTED[NO_KEY].say()
REASON_NO_HANDSHAKE = NOT_DECRYPTED[NO_HANDSHAKE].say()

MAX_PROBLEMS = 32


class TlsDecodeError(DecodeError):
    """A TLS record or handshake message that does not decode; `kind` is one of PROBLEM_KINDS.
    Its text names the kind and what was wrong, never a key, secret or plaintext byte."""

    def __init__(self, kind: str, message: str, offset: int | None = None):
        super().__init__(message, offset)
        self.kind = kind


class RecordProblem:
    """A problem with one record: a kind from PROBLEM_KINDS and what happened, for a person (no key
    material, no plaintext). (Plain classes, not dataclasses: these are made at every start of
    kwire, and a dataclass costs milliseconds to create.)"""

    __slots__ = ("kind", "direction", "ts_ns", "detail")

    def __init__(self, kind: str, direction: int, ts_ns: int, detail: str):
        self.kind = kind
        self.direction = direction
        self.ts_ns = ts_ns
        self.detail = detail

    def as_dict(self) -> dict:
        return {"kind": self.kind, "direction": self.direction, "ts_ns": self.ts_ns, "detail": self.detail}

    def __eq__(self, other) -> bool:
        return isinstance(other, RecordProblem) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"RecordProblem({self.kind!r}, {self.direction}, {self.ts_ns}, {self.detail!r})"


# TlsInfo's fields and their starting values (lists are per direction: [a -> b, b -> a]).
_FIELDS = {
    "state": "unknown", "client_direction": None, "version": None, "cipher_suite": None, "server_name": None,
    "alpn_offered": list, "alpn": None, "resumed": False, "resumption": None, "extended_master_secret": False,
    "encrypt_then_mac": False, "hello_retry": False, "ciphertext_bytes": lambda: [0, 0],
    "plaintext_bytes": lambda: [0, 0], "records": lambda: [0, 0], "records_decrypted": 0, "records_failed": 0,
    "records_undecrypted": 0, "key_updates": 0, "gaps": 0, "reason": None, "reason_kind": None, "problems": list,
    "problems_dropped": 0,
}


class TlsInfo:
    """One TLS connection as seen; filled while the stream runs, complete at close.

    state; client_direction (None until known); version ("TLS 1.3"); cipher_suite (IANA name, or hex
    when unknown); server_name; alpn_offered, alpn (the protocol the server chose); resumed, resumption
    ("session_id", "session_ticket" or "psk"); extended_master_secret; encrypt_then_mac; hello_retry;
    ciphertext_bytes (headers included), plaintext_bytes (application data handed on) and records
    (whole records seen), per direction; records_decrypted, records_failed (authentication failures),
    records_undecrypted (not tried: no keys, unsupported, not captured); key_updates; gaps; reason_kind (why
    the connection, or its rest, was not decrypted: kwire.tls.reasons) and reason (its text); problems (at
    most MAX_PROBLEMS), problems_dropped."""

    __slots__ = tuple(_FIELDS)

    def __init__(self, **values) -> None:
        for name, start in _FIELDS.items():
            setattr(self, name, values.pop(name) if name in values else (start() if callable(start) else start))
        if values:
            raise TypeError(f"TlsInfo has no field {sorted(values)[0]!r}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in ("state", "version", "cipher_suite",
                                                                        "server_name", "reason"))
        return f"TlsInfo({shown})"

    def problem(self, kind: str, direction: int, ts_ns: int, detail: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(RecordProblem(kind, direction, ts_ns, detail))
        else:
            self.problems_dropped += 1

    def not_decrypted(self, kind: str, detail: str | None = None) -> None:
        """Say why (a kwire.tls.reasons name, and its detail where it takes one); the first reason stands (later
        ones follow from it)."""
        if self.reason_kind is None:
            self.reason_kind = kind
            self.reason = NOT_DECRYPTED[kind].say(detail)

    @property
    def decrypted(self) -> bool:
        """Every encrypted record seen was decrypted (and there was at least one)."""
        return self.records_decrypted > 0 and not self.records_failed and not self.records_undecrypted

    def as_dict(self) -> dict:
        """Plain values for JSON (lists, ints, strings)."""
        out = {name: getattr(self, name) for name in _FIELDS}
        out["problems"] = [problem.as_dict() for problem in self.problems]
        for name in ("alpn_offered", "ciphertext_bytes", "plaintext_bytes", "records"):
            out[name] = list(out[name])
        return out


def tls_row(conn: Connection, info: TlsInfo) -> dict:
    """{ts_ns, client, server, server_name, version, cipher_suite, alpn, resumed, decrypted, reason_kind, reason,
    to_server_bytes, to_client_bytes, records_decrypted, records_failed} of one TLS connection (and, deprecated for
    one release: `ts`, epoch s; `bytes_to_server`, `bytes_to_client`)."""
    client, server = (conn.b, conn.a) if info.client_direction == 1 else (conn.a, conn.b)
    to_server = 1 if info.client_direction == 1 else 0
    kind, reason = (None, None) if info.decrypted else _reason(info)
    to_server_bytes, to_client_bytes = info.ciphertext_bytes[to_server], info.ciphertext_bytes[1 - to_server]
    return {"ts_ns": conn.first_ts_ns, "client": format_endpoint(*client),
            "server": format_endpoint(*server), "server_name": info.server_name, "version": info.version,
            "cipher_suite": info.cipher_suite, "alpn": info.alpn, "resumed": info.resumed,
            "decrypted": info.decrypted, "reason_kind": kind, "reason": reason,
            "to_server_bytes": to_server_bytes, "to_client_bytes": to_client_bytes,
            "records_decrypted": info.records_decrypted, "records_failed": info.records_failed,
            "ts": round(conn.first_ts_ns / 1e9, 9), "bytes_to_server": to_server_bytes,  # deprecated
            "bytes_to_client": to_client_bytes}


MAX_LISTED = 1000


def _reason(info: TlsInfo) -> tuple[str, str]:
    """Why a connection is not (wholly) decrypted, (name, text): its stated reason, or, for one partly
    decrypted without one (a record that did not verify, after a gap), what was and was not: never
    nothing_encrypted for a connection whose records were decrypted."""
    if info.reason_kind:
        return info.reason_kind, info.reason
    if info.records_decrypted:
        return PARTLY_DECRYPTED, NOT_DECRYPTED[PARTLY_DECRYPTED].say(
            f"{info.records_decrypted:,} records decrypted, {info.records_failed:,} did not verify, "
            f"{info.records_undecrypted:,} not tried")
    return NOTHING_ENCRYPTED, NOT_DECRYPTED[NOTHING_ENCRYPTED].say()


def _order(row: dict) -> tuple:
    return (round(row["ts_ns"] / 1e9, 9), row["client"], row["server"])  # (to the ns as epoch s: the order it had)


class TlsNotes:
    """Counts of TLS connections and the rows of the first MAX_LISTED (see the module docstring)."""

    def __init__(self) -> None:
        self.connections = 0
        self.decrypted = 0
        self.partly = 0  # not wholly decrypted, but some records were
        self.rows: list[dict] = []

    def add(self, row: dict) -> None:
        self.connections += 1
        self.decrypted += 1 if row["decrypted"] else 0
        self.partly += 1 if not row["decrypted"] and row["records_decrypted"] else 0
        self.rows.append(row)
        if len(self.rows) > 2 * MAX_LISTED:
            self._trim()

    def merge(self, other: TlsNotes) -> None:
        self.connections += other.connections
        self.decrypted += other.decrypted
        self.partly += getattr(other, "partly", 0)
        self.rows += other.rows
        self._trim()

    def _trim(self) -> None:
        self.rows.sort(key=_order)
        del self.rows[MAX_LISTED:]

    def document(self) -> dict:
        self._trim()
        return {"connections": self.connections, "decrypted": self.decrypted,
                "not_decrypted": self.connections - self.decrypted, "partly_decrypted": self.partly,
                "list": list(self.rows)}
