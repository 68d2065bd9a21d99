"""NSS key log parsing, pcapng Decryption Secrets Blocks, and following a growing file."""

from __future__ import annotations

from kwire.capture.follow import FollowedFile
from kwire.tls.keylog import CLIENT_RANDOM, SERVER_TRAFFIC_0, TLS_KEY_LOG_SECRETS, FollowedKeyLog, KeyLog

R1, R2 = "11" * 32, "22" * 32
MASTER = "ab" * 48
SECRET = "cd" * 32
TEXT = f"""# a comment
CLIENT_RANDOM {R1} {MASTER}

SERVER_TRAFFIC_SECRET_0 {R2} {SECRET}\r
EXPORTER_SECRET {R2} {SECRET}
RSA {'00' * 8} {'ef' * 48}
CLIENT_RANDOM {R1[:-2]} {MASTER}
CLIENT_RANDOM {R1} zz{MASTER[2:]}
SOMETHING_NEW {R2} {SECRET}
just garbage with the secret {MASTER}
"""


def test_parses_and_counts_every_kind_of_line() -> None:
    log = KeyLog()
    assert log.add_text(TEXT) == 3
    assert len(log) == 2 and bytes.fromhex(R1) in log
    assert log.lookup(bytes.fromhex(R1)).get(CLIENT_RANDOM) == bytes.fromhex(MASTER)
    assert log.lookup(bytes.fromhex(R2)).get(SERVER_TRAFFIC_0) == bytes.fromhex(SECRET)
    assert log.lookup(bytes(32)) is None
    assert (log.bad_lines, log.ignored_lines) == (3, 2)
    assert log.lines == 10


def test_whole_byte_by_byte_and_with_trailing_bytes() -> None:
    whole = KeyLog()
    whole.add_text(TEXT)
    lines = KeyLog()
    for line in TEXT.splitlines():
        lines.add_lines([line])
    trailing = KeyLog()
    trailing.add_text(TEXT.encode() + b"CLIENT_RANDOM 1122")  # a cut last line is one bad line
    for other in (lines, trailing):
        assert {r: other.lookup(bytes.fromhex(r)).labels() for r in (R1, R2)} == \
            {r: whole.lookup(bytes.fromhex(r)).labels() for r in (R1, R2)}
    assert trailing.bad_lines == whole.bad_lines + 1


def test_no_secret_in_any_repr_or_counter() -> None:
    log = KeyLog()
    log.add_text(TEXT)
    shown = repr(log) + repr(log.lookup(bytes.fromhex(R1))) + repr(log.counters())
    assert MASTER not in shown and SECRET not in shown and "abab" not in shown


def test_entries_are_capped() -> None:
    log = KeyLog(max_entries=2)
    log.add_lines(f"CLIENT_RANDOM {i:064x} {MASTER}" for i in range(5))
    log.add_lines([f"CLIENT_RANDOM {1:064x} {MASTER}"])  # a known random still takes more labels
    assert len(log) == 2 and log.dropped == 3 and log.secrets == 3


def test_decryption_secrets_block_secrets() -> None:
    log = KeyLog()
    assert TLS_KEY_LOG_SECRETS == 0x544C534B
    assert log.add_secrets(0x57474B53, b"abcd") == 0  # WireGuard keys: not ours
    assert log.add_secrets(TLS_KEY_LOG_SECRETS, TEXT.encode()) == 3 and len(log) == 2


def test_key_log_file_follows_appends(tmp_path) -> None:
    path = tmp_path / "keys.log"
    path.write_text(f"CLIENT_RANDOM {R1} {MASTER}\nCLIENT_RAN")
    now = [0.0]
    followed = FollowedFile(path, min_interval_s=0.1, clock=lambda: now[0])
    log = KeyLog()
    log.add_text(followed.read_new())
    keys = FollowedKeyLog(log, followed.read_new)
    assert keys.lookup(bytes.fromhex(R1)) is not None
    with path.open("a") as f:
        f.write(f"DOM {R2} {MASTER}\n")
    assert keys.lookup(bytes.fromhex(R2)) is None  # too soon to read again
    now[0] = 0.5
    assert keys.lookup(bytes.fromhex(R2)) is not None
    reads = followed.reads
    keys.lookup(bytes.fromhex(R1))
    assert followed.reads == reads  # a hit reads nothing
    path.write_text(f"CLIENT_RANDOM {'33' * 32} {MASTER}\n")  # truncated and rewritten
    now[0] = 1.0
    assert keys.lookup(bytes.fromhex("33" * 32)) is not None
    assert MASTER not in repr(keys) and MASTER not in repr(followed)
