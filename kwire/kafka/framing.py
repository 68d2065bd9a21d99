"""Cut one direction of a TCP stream into Kafka frames (4-byte big-endian length, then the body).

A Framer is sans-IO: `feed(data)` returns the frame bodies that data completed. It starts synced
(the handshake was seen, the stream starts on a frame boundary) or unsynced (the capture began
mid-stream, or after a gap). Unsynced, it asks its `find_start(buf)` callback for the offset of the
next plausible frame start and discards what comes before it, keeping only a short tail while it
waits; so an unsynced direction never holds more than a few bytes. A length larger than
`max_frame` (an absurd length, or a false resync) makes it unsynced again.

Memory: one frame at most is buffered, bounded by `max_frame`.
"""

from __future__ import annotations

import struct
from typing import Callable

_LEN = struct.Struct(">i")

KEEP_TAIL = 64  # bytes kept while unsynced: a header may straddle two segments


class Framer:
    __slots__ = ("buf", "synced", "max_frame", "find_start", "frames", "resyncs", "skipped_bytes",
                 "absurd_lengths", "keep_tail", "need")

    def __init__(self, find_start: Callable[[bytes | bytearray], int], *, synced: bool, max_frame: int):
        self.buf = bytearray()
        self.synced = synced
        self.max_frame = max_frame
        self.find_start = find_start
        self.frames = 0
        self.resyncs = 0
        self.skipped_bytes = 0
        self.absurd_lengths = 0
        self.keep_tail = KEEP_TAIL  # bytes kept while unsynced
        # Synced with a frame's length read: bytes still missing before that frame is complete (a
        # consumer may hold back smaller deliveries, see kwire.tcp.events.Connection.demand); else 0.
        self.need = 0

    def gap(self) -> None:
        """Bytes were lost: what is buffered can never complete; resynchronise on what follows."""
        self.skipped_bytes += len(self.buf)
        self.buf.clear()
        self.synced = False
        self.need = 0

    def restart(self, data) -> None:
        """Start over, unsynced, on `data` (bytes that an earlier guess framed wrongly or skipped)."""
        self.buf = bytearray(data)
        self.synced = False
        self.need = 0

    def resync(self) -> None:
        """Doubt the current frame boundary (it came from a guess): search again in what is held."""
        if self.synced:
            self.synced = False
            self.need = 0

    def pending_bytes(self) -> int:
        return len(self.buf)

    def feed(self, data) -> list:
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
            out = []
            pos = 0
            n = len(data)
            max_frame = self.max_frame
            unpack = _LEN.unpack_from
            while pos + 4 <= n:
                length = unpack(data, pos)[0]
                if length < 0 or length > max_frame:
                    break
                end = pos + 4 + length
                if end > n:
                    break
                out.append(memoryview(data)[pos + 4:end])
                pos = end
            else:
                if pos == n:
                    self.frames += len(out)
                    return out
            buf += memoryview(data)[pos:]
            self.frames += len(out)
            return out + self._drain()
        buf += data
        return self._drain()

    def _drain(self) -> list:
        out = []
        buf = self.buf
        while True:
            if not self.synced:
                start = self.find_start(buf)
                if start < 0:
                    drop = len(buf) - self.keep_tail
                    if drop > 0:
                        self.skipped_bytes += drop
                        del buf[:drop]
                    return out
                if start:
                    self.skipped_bytes += start
                    del buf[:start]
                self.synced = True
                self.resyncs += 1
            if len(buf) < 4:
                return out
            length = _LEN.unpack_from(buf, 0)[0]
            if length < 0 or length > self.max_frame:
                self.absurd_lengths += 1
                self.synced = False
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
