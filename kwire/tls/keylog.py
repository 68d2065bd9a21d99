"""NSS key log: the secrets TLS clients write (SSLKEYLOGFILE), keyed by the ClientHello random.

Lines are `LABEL <client random, 64 hex> <secret, hex>`: `CLIENT_RANDOM` (the TLS 1.2 master
secret, 48 bytes) and the TLS 1.3 traffic secrets `CLIENT_HANDSHAKE_TRAFFIC_SECRET`,
`SERVER_HANDSHAKE_TRAFFIC_SECRET`, `CLIENT_TRAFFIC_SECRET_0`, `SERVER_TRAFFIC_SECRET_0`;
`EXPORTER_SECRET`, `CLIENT_EARLY_TRAFFIC_SECRET`, `EARLY_EXPORTER_SECRET` are kept too (unused),
`RSA` lines and unknown labels are counted as ignored. Comments (#), blank lines and CRLF are
fine; a line that does not parse is counted in `bad_lines`, never echoed (it may hold a secret).

`KeyLog` is sans-IO and incremental: `add_text(text)` / `add_lines(lines)` take whole lines as a
reader finds them, `lookup(client_random)` answers the `ClientSecrets` of one handshake or None.
`FollowedKeyLog(keylog, more)` is the same for a key log clients are still writing: on a miss it
asks `more()` for the text appended since (kwire.capture.follow.FollowedFile.read_new reads it). At most `max_entries` client randoms are kept (the
later ones are counted in `dropped`, never stored). `add_secrets(type, data)` takes the secrets of
a pcapng Decryption Secrets Block (type 0x544c534b "TLSK": NSS key log text).

Secrets are bytes inside ClientSecrets; no repr, message or counter ever shows one.
"""

from __future__ import annotations

from typing import Callable, Iterable, Protocol

CLIENT_RANDOM = "CLIENT_RANDOM"
CLIENT_HANDSHAKE = "CLIENT_HANDSHAKE_TRAFFIC_SECRET"
SERVER_HANDSHAKE = "SERVER_HANDSHAKE_TRAFFIC_SECRET"
CLIENT_TRAFFIC_0 = "CLIENT_TRAFFIC_SECRET_0"
SERVER_TRAFFIC_0 = "SERVER_TRAFFIC_SECRET_0"
LABELS = frozenset({CLIENT_RANDOM, CLIENT_HANDSHAKE, SERVER_HANDSHAKE, CLIENT_TRAFFIC_0, SERVER_TRAFFIC_0,
                    "EXPORTER_SECRET", "CLIENT_EARLY_TRAFFIC_SECRET", "EARLY_EXPORTER_SECRET"})
IGNORED_LABELS = frozenset({"RSA"})  # RSA <encrypted premaster prefix> <premaster>: not used here

TLS_KEY_LOG_SECRETS = 0x544C534B  # pcapng Decryption Secrets Block secrets type "TLSK"
DEFAULT_MAX_ENTRIES = 200_000  # about 100 MB of secrets; the later client randoms are counted in `dropped`
TEXT_SLICE = 1 << 20  # key log text is split into lines a slice at a time (a 32 MB block of 2-byte lines)
MAX_LINE = 1024  # longer lines are bad lines (a secret is at most 64 bytes: 128 hex digits)
_SECRET_LENGTHS = frozenset({32, 48, 64})


class ClientSecrets:
    """The secrets logged for one ClientHello random, by label. Never shown."""

    __slots__ = ("_by_label",)

    def __init__(self) -> None:
        self._by_label: dict[str, bytes] = {}

    def get(self, label: str) -> bytes | None:
        return self._by_label.get(label)

    def labels(self) -> frozenset[str]:
        return frozenset(self._by_label)

    def __contains__(self, label: str) -> bool:
        return label in self._by_label

    def __repr__(self) -> str:
        return f"<ClientSecrets {sorted(self._by_label)}>"


class KeySource(Protocol):
    """What a TlsStream asks for keys: anything with this method (KeyLog, FollowedKeyLog)."""

    def lookup(self, client_random: bytes) -> ClientSecrets | None: ...


class FollowedKeyLog:
    """A KeyLog that asks `more()` for newly appended key log text when a lookup misses (a file clients
    are still writing). `more` decides how often it really looks (it may return b"")."""

    def __init__(self, keylog: "KeyLog", more: Callable[[], bytes]):
        self.keylog = keylog
        self.more = more

    def __repr__(self) -> str:
        return f"<FollowedKeyLog {self.keylog!r}>"

    def lookup(self, client_random: bytes) -> ClientSecrets | None:
        found = self.keylog.lookup(client_random)
        if found is None:
            text = self.more()
            if text:
                self.keylog.add_text(text)
                found = self.keylog.lookup(client_random)
        return found


class KeyLog:
    """NSS key log entries in memory (see the module docstring)."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES):
        self.max_entries = max_entries
        self._entries: dict[bytes, ClientSecrets] = {}
        self.lines = 0  # lines read, comments and blanks included
        self.secrets = 0  # secret lines stored
        self.bad_lines = 0  # lines that do not parse
        self.ignored_lines = 0  # well-formed lines of labels kwire does not use
        self.dropped = 0  # secret lines of new client randoms past max_entries

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, client_random: bytes) -> bool:
        return client_random in self._entries

    def __repr__(self) -> str:
        return f"<KeyLog {len(self._entries)} client randoms, {self.bad_lines} bad lines>"

    def lookup(self, client_random: bytes) -> ClientSecrets | None:
        return self._entries.get(bytes(client_random))

    def counters(self) -> dict[str, int]:
        return {"keylog_lines": self.lines, "keylog_secrets": self.secrets, "keylog_entries": len(self._entries),
                "keylog_bad_lines": self.bad_lines, "keylog_ignored_lines": self.ignored_lines,
                "keylog_dropped": self.dropped}

    def add_text(self, text: str | bytes) -> int:
        """Read whole lines of key log text (LF or CRLF; a last line without newline counts).
        Returns the number of secret lines stored."""
        if isinstance(text, str):
            text = text.encode("ascii", "replace")
        text = bytes(text)
        stored, pos, n = 0, 0, len(text)
        while pos < n:  # a slice of whole lines at a time: never a list of every line of a big text
            end = text.rfind(b"\n", pos, pos + TEXT_SLICE) + 1 if n - pos > TEXT_SLICE else n
            if end <= pos:  # no newline in a whole slice: one line longer than any key log line
                end = text.find(b"\n", pos + TEXT_SLICE) + 1 or n
                self.lines += 1
                self.bad_lines += 1
                pos = end
                continue
            stored += self.add_lines(text[pos:end].decode("ascii", "replace").splitlines())
            pos = end
        return stored

    def add_lines(self, lines: Iterable[str]) -> int:
        stored = 0
        for line in lines:
            self.lines += 1
            stored += self._add_line(line)
        return stored

    def _add_line(self, line: str) -> int:
        line = line.strip()
        if not line or line.startswith("#"):
            return 0
        parts = line.split()
        if len(line) > MAX_LINE or len(parts) != 3:
            self.bad_lines += 1
            return 0
        label, random_hex, secret_hex = parts
        if label in IGNORED_LABELS:
            self.ignored_lines += 1
            return 0
        try:
            client_random = bytes.fromhex(random_hex)
            secret = bytes.fromhex(secret_hex)
        except ValueError:
            self.bad_lines += 1
            return 0
        if len(client_random) != 32 or len(secret) not in _SECRET_LENGTHS:
            self.bad_lines += 1
            return 0
        if label not in LABELS:
            self.ignored_lines += 1
            return 0
        entry = self._entries.get(client_random)
        if entry is None:
            if len(self._entries) >= self.max_entries:
                self.dropped += 1
                return 0
            entry = self._entries[client_random] = ClientSecrets()
        entry._by_label[label] = secret
        self.secrets += 1
        return 1

    def add_secrets(self, secrets_type: int, data: bytes) -> int:
        """The secrets of a pcapng Decryption Secrets Block (kwire.capture.pcapng reads the block):
        NSS key log text when `secrets_type` is TLS_KEY_LOG_SECRETS ("TLSK"), left alone otherwise.
        Returns the secret lines stored."""
        return self.add_text(data) if secrets_type == TLS_KEY_LOG_SECRETS else 0
