"""Cut one direction of a TCP stream into Kafka frames (4-byte big-endian length, then the body).

A Framer is sans-IO: `feed(data)` returns the frame bodies that data completed. It starts synced
(the handshake was seen, the stream starts on a frame boundary) or unsynced (the capture began
mid-stream, or after a gap). Unsynced, it asks its `find_start(buf, scan)` callback where the next
frame starts: the callback answers (start, drop): start >= 0 to sync there, else the number of
leading bytes that can go (the callback keeps what a candidate header still waiting for its frame
to complete needs, and its own notes in `scan`, a dict the framer empties whenever its buffer
changes under the callback). A length larger than `max_frame` (an absurd length, or a false resync)
makes it unsynced again.

Memory: one frame at most is buffered, bounded by `max_frame`; unsynced, what the callback keeps.
"""

from __future__ import annotations

import struct
from typing import Callable

SMALL_COPY = 4096  # a whole frame up to this size is handed on as bytes of its own
_LEN = struct.Struct(">i")

class Framer:
    __slots__ = ("buf", "synced", "max_frame", "find_start", "frames", "resyncs", "skipped_bytes",
                 "absurd_lengths", "need", "scan")

    def __init__(self, find_start: Callable[[bytearray, dict], tuple[int, int]], *, synced: bool, max_frame: int):
        self.buf = bytearray()
        self.synced = synced
        self.max_frame = max_frame
        self.find_start = find_start
        self.frames = 0
        self.resyncs = 0
        self.skipped_bytes = 0
        self.absurd_lengths = 0
        # Synced with a frame's length read: bytes still missing before that frame is complete (a
        # consumer may hold back smaller deliveries, see kwire.tcp.events.Connection.demand); else 0.
        self.need = 0
        self.scan: dict = {}  # the find_start callback's notes about the unsynced buffer

    def gap(self) -> None:
        """Bytes were lost: what is buffered can never complete; resynchronise on what follows."""
        self.skipped_bytes += len(self.buf)
        self.buf.clear()
        self.synced = False
        self.need = 0
        self.scan = {}

    def restart(self, data) -> None:
        """Start over, unsynced, on `data` (bytes that an earlier guess framed wrongly or skipped)."""
        self.buf = bytearray(data)
        self.synced = False
        self.need = 0
        self.scan = {}

    def resync(self) -> None:
        """Doubt the current frame boundary (it came from a guess): search again in what is held."""
        if self.synced:
            self.synced = False
            self.need = 0
            self.scan = {}

    def feed(self, data) -> list:
        """Frame bodies completed by `data`: bytes-like, or a tuple of bytes-like pieces in order (a
        frame in progress is then completed with one copy: its buffered head and the pieces joined)."""
        if type(data) is tuple:
            return self._feed_pieces(data)
        need = self.need
        if need:
            n = len(data)
            if n < need:
                # Inside a frame whose length is known: only collect.
                self.buf += data
                self.need = need - n
                return []
            # This completes the frame held in buf: one copy makes its body.
            buf = self.buf
            with memoryview(buf) as head, memoryview(data) as tail:
                body = b"".join((head[4:], tail[:need]))
            buf.clear()
            self.need = 0
            self.frames += 1
            if n == need:
                return [body]
            return [body] + self.feed(memoryview(data)[need:])
        buf = self.buf
        if self.synced and not buf:
            # Fast path: the segment starts on a frame boundary.
            n = len(data)
            if n >= 4:
                length = _LEN.unpack_from(data, 0)[0]
                if length == n - 4 and length <= self.max_frame:
                    # The common case: the segment is exactly one frame (a small one is copied:
                    # cheaper than a view, and bytes of its own travel to a worker process as they are).
                    self.frames += 1
                    return [data[4:] if n <= SMALL_COPY and type(data) is bytes else memoryview(data)[4:]]
            out = []
            pos = 0
            max_frame = self.max_frame
            unpack = _LEN.unpack_from
            view = memoryview(data)
            while pos + 4 <= n:
                length = unpack(data, pos)[0]
                if length < 0 or length > max_frame:
                    break
                end = pos + 4 + length
                if end > n:
                    break
                out.append(view[pos + 4:end])
                pos = end
            else:
                if pos == n:
                    self.frames += len(out)
                    return out
            buf += view[pos:]
            self.frames += len(out)
            return self._drain(out)
        buf += data
        return self._drain([])

    def _feed_pieces(self, pieces: tuple) -> list:
        need = self.need
        buf = self.buf
        if need and buf:
            total = sum(map(len, pieces))
            if total < need:  # the frame is still short (a consumer that ignored `need`): collect
                for piece in pieces:
                    buf += piece
                self.need = need - total
                return []
            # The frame ends in the pieces: find where, from the end (a consumer that heeds `need`
            # delivers the frame's pieces and perhaps the start of the next frame).
            rest: list = []
            parts = pieces
            excess = total - need
            if excess:
                i = len(pieces)
                while True:
                    i -= 1
                    n = len(pieces[i])
                    if n <= excess:
                        excess -= n
                        if excess == 0:
                            parts = pieces[:i]
                            rest = list(pieces[i:])
                            break
                        continue
                    piece = memoryview(pieces[i])
                    parts = (*pieces[:i], piece[:n - excess])
                    rest = [piece[n - excess:], *pieces[i + 1:]]
                    break
            with memoryview(buf) as head:
                body = b"".join((head[4:], *parts))
            buf.clear()
            self.need = 0
            self.frames += 1
            if not rest:
                return [body]
            return [body] + self.feed(rest[0] if len(rest) == 1 else b"".join(rest))
        return self.feed(b"".join(pieces))

    def _drain(self, out: list) -> list:
        """Append to `out` the frames that complete in the buffer; return it."""
        buf = self.buf
        while True:
            if not self.synced:
                start, drop = self.find_start(buf, self.scan)
                if start < 0:
                    if drop > 0:
                        self.skipped_bytes += drop
                        del buf[:drop]
                    return out
                if start:
                    self.skipped_bytes += start
                    del buf[:start]
                self.scan = {}
                self.synced = True
                self.resyncs += 1
            if len(buf) < 4:
                return out
            length = _LEN.unpack_from(buf, 0)[0]
            if length < 0 or length > self.max_frame:
                self.absurd_lengths += 1
                self.synced = False
                self.scan = {}
                # Skip the bad length so the search does not find the same spot again.
                self.skipped_bytes += 1
                del buf[:1]
                continue
            if len(buf) < 4 + length:
                self.need = 4 + length - len(buf)
                return out
            with memoryview(buf) as view:
                out.append(bytes(view[4:4 + length]))
            del buf[:4 + length]
            self.frames += 1
