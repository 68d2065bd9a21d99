"""The TLS record layer of one direction: a byte stream in, whole records out (RFC 8446 5.1).

`RecordReader.feed(data)` takes in-order bytes (bytes-like, or a tuple of pieces) and returns the
events they completed, in order: a record as a tuple `(header, body)` (the 5 header bytes as
bytes, the body as a memoryview), or a `Resync` when the reader lost the record boundary (a header
that is not plausible where one must start, or a length over what TLS allows) or found it again
(after `gap()`, or when it starts `synced=False`: the capture began mid-connection). `need` is how
many more bytes the record in progress needs (what the stream tells TCP).

Two states: SYNCED (a record starts where the last one ended) and SEARCHING (looking for a
plausible header followed, right after its record, by another plausible header with the same
version: a chain, which random ciphertext practically never shows).

Memory: a record in progress holds at most MAX_RECORD + 5 bytes (as the pieces it came in, joined
once); SEARCHING holds at most MAX_RECORD + 10 bytes from the first candidate on, plus the chunk
being read. A hostile length is an error, never an allocation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kwire.tls.info import BAD_RECORD_HEADER, LOST_BYTES, RECORD_OVERFLOW

HEADER = 5
MAX_RECORD = (1 << 14) + 2048  # TLSCiphertext.length limit (RFC 5246 6.2.3; TLS 1.3 allows less)
CHANGE_CIPHER_SPEC, ALERT, HANDSHAKE, APPLICATION_DATA, HEARTBEAT = 20, 21, 22, 23, 24
SYNCED, SEARCHING = "synced", "searching"

CANDIDATE_HEADER = re.compile(rb"[\x14-\x18]\x03[\x00-\x04]")
_EMPTY: list = []


@dataclass(slots=True)
class Resync:
    """The reader lost the record boundary (kind BAD_RECORD_HEADER or RECORD_OVERFLOW) or found it
    again after `skipped` bytes it could not read as records (kind LOST_BYTES)."""

    kind: str
    skipped: int


def header_length(buf, pos: int) -> int:
    """The record length of a plausible header at buf[pos:pos+5], -1 if not plausible, -2 if the
    length is over MAX_RECORD (the caller checks 5 bytes are there)."""
    if not 20 <= buf[pos] <= 24 or buf[pos + 1] != 3 or buf[pos + 2] > 4:
        return -1
    length = (buf[pos + 3] << 8) | buf[pos + 4]
    if length == 0:
        return -1
    return length if length <= MAX_RECORD else -2


class RecordReader:
    __slots__ = ("pieces", "have", "need", "state", "records", "skipped", "resyncs")

    def __init__(self, synced: bool = True):
        self.pieces: list = []  # the record in progress (or, SEARCHING, what is kept), as received
        self.have = 0  # bytes in pieces
        self.need = 0  # bytes the record in progress still needs (0: none in progress)
        self.state = SYNCED if synced else SEARCHING
        self.records = 0
        self.skipped = 0  # bytes dropped while SEARCHING
        self.resyncs = 0

    def gap(self) -> int:
        """Bytes were lost: drop what is held and search for the next record. Returns the bytes
        dropped."""
        dropped = self.have
        self.skipped += dropped
        self.pieces = []
        self.have = self.need = 0
        self.state = SEARCHING
        return dropped

    def feed(self, data) -> list:
        """Records (and Resync events) completed by `data`, in order."""
        if self.pieces:
            n = sum(map(len, data)) if type(data) is tuple else len(data)
            if n < self.need:
                if type(data) is tuple:
                    self.pieces.extend(data)
                else:
                    self.pieces.append(data)
                self.have += n
                self.need -= n
                return _EMPTY
            parts = self.pieces
            parts.extend(data) if type(data) is tuple else parts.append(data)
            buf = b"".join(parts)
            self.pieces = []
            self.have = self.need = 0
        elif type(data) is tuple:
            buf = b"".join(data)
        else:
            buf = data
        if self.state is SEARCHING:
            return self._search(buf, [])
        return self._parse(buf, 0, [])

    def _parse(self, buf, pos: int, out: list) -> list:
        n = len(buf)
        view = memoryview(buf)
        found = 0
        while n - pos >= HEADER:
            length = header_length(buf, pos)
            if length < 0:
                self.records += found
                out.append(Resync(RECORD_OVERFLOW if length == -2 else BAD_RECORD_HEADER, 0))
                self.state = SEARCHING
                self.resyncs += 1
                return self._search(view[pos:], out)
            end = pos + HEADER + length
            if end > n:
                break
            out.append((bytes(view[pos:pos + HEADER]), view[pos + HEADER:end]))
            found += 1
            pos = end
        self.records += found
        rest = n - pos
        if rest:
            self._keep(view[pos:], rest)
        return out

    def _keep(self, tail, rest: int) -> None:
        self.pieces = [bytes(tail)]
        self.have = rest
        if rest >= HEADER:
            self.need = HEADER + ((tail[3] << 8) | tail[4]) - rest
        else:
            self.need = HEADER - rest

    def _search(self, buf, out: list) -> list:
        """SEARCHING: find a chain of two plausible headers; drop what precedes it."""
        n = len(buf)
        for match in CANDIDATE_HEADER.finditer(buf):
            i = match.start()
            if n - i < HEADER:
                return self._hold(buf, i, n, out)
            length = header_length(buf, i)
            if length < 0:
                continue
            nxt = i + HEADER + length
            if n - nxt < HEADER:
                return self._hold(buf, i, nxt + HEADER, out)
            if header_length(buf, nxt) > 0 and buf[nxt + 1:nxt + 3] == buf[i + 1:i + 3]:
                self.skipped += i
                self.state = SYNCED
                self.resyncs += 1
                out.append(Resync(LOST_BYTES, self.skipped))
                self.skipped = 0
                return self._parse(buf, i, out)
        keep = min(n, HEADER - 1)  # a header may start in the last 4 bytes
        self.skipped += n - keep
        if keep:
            self.pieces = [bytes(buf[n - keep:])]
            self.have = keep
        return out

    def _hold(self, buf, start: int, until: int, out: list) -> list:
        """Keep buf[start:] (a candidate header whose chain is not in yet) until `until` bytes."""
        self.skipped += start
        tail = bytes(memoryview(buf)[start:])
        self.pieces = [tail]
        self.have = len(tail)
        self.need = max(0, until - len(buf))
        return out
