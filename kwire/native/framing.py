"""Cut one direction of a TCP stream into Kafka frames (4-byte big-endian length, then the body).

Native code (compiled: an extension type, framing.pxd beside this file) that the kafka layer's connection
(kwire.native.kafka_connection) and pairing (kwire.native.kafka_pairing) use: it knows of Kafka only that its frames are
length-prefixed, and imports nothing of kwire outside kwire.native.

A Framer is sans-IO: `feed(data)` returns the frame bodies that data completed. It starts synced
(the handshake was seen, the stream starts on a frame boundary) or unsynced (the capture began
mid-stream, or after a gap). Unsynced, it asks its `find_start(direction, buf, scan)` callback where
the next frame starts: the callback answers (start, drop): start >= 0 to sync there, else the number of
leading bytes that can go (the callback keeps what a candidate header still waiting for its frame
to complete needs, and its own notes in `scan`, a dict the framer drops whenever its buffer
changes under the callback). One callback serves both framers of a connection, told apart by
`direction`, and `scan` is made when first asked for: a connection read in step from its handshake
holds neither a callback of its own nor a dict per direction (100,000 connections may be open). A
length larger than `max_frame` (an absurd length, or a false resync) makes it unsynced again.

Gaps (`gap(size)`: bytes never captured, their number known from TCP's sequence numbers): when the
frame in progress has its length read, the framer follows it through the gap by that length, as
tshark follows a PDU by the length of the next one: the bytes after the gap that still belong to the
frame are passed over, and the frame comes out as a `CutFrame` (the body bytes captured before the
first gap, and the frame's whole `size` from its prefix) once its end is reached, in a gap or in the
bytes after one. The next frame is then read in step, unless its own length prefix was lost too
(the gap ran past the frame's end): then the framer resynchronises. Unsynced, a gap also syncs it
when the length prefixes read from the start of what it holds lead exactly to the gap's end (the
frames are in step with the sequence numbers: a snap-length capture begun mid-stream). A snap-length capture is a gap
after every segment: its frames come out cut, each with its header, api and correlation id.

Memory: one frame at most is buffered, bounded by `max_frame`; unsynced, what the callback keeps.
"""

from __future__ import annotations

from typing import Callable

from kwire.native import c_reads  # compiled: kwire/native/c_reads.pxd's C reads (framing.pxd)

SMALL_COPY = 4096  # a whole frame up to this size is handed on as bytes of its own


class CutFrame(bytes):
    """The captured start of a frame body whose end a gap took: `size` is the whole frame's size on
    the wire (length prefix included), from its length prefix."""

    size: int


def _cut_frame(body, size: int) -> CutFrame:
    frame = CutFrame(body)
    frame.size = size
    return frame

class Framer:
    __slots__ = ("buf", "synced", "max_frame", "find_start", "direction", "frames", "resyncs", "skipped_bytes",
                 "absurd_lengths", "need", "scan", "cut", "cut_frames")

    def __init__(self, find_start: Callable[[int, bytearray, dict], tuple[int, int]], *, synced: bool,
                 max_frame: int, direction: int = 0):
        self.buf = bytearray()
        self.direction = direction  # passed to find_start
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
        self.scan: dict | None = None  # the find_start callback's notes about the unsynced buffer, once asked
        self.cut: CutFrame | None = None  # the frame followed through a gap, while `need` bytes of it remain
        self.cut_frames = 0

    def gap(self, size: int | None = None) -> list:
        """`size` bytes were never captured. A frame whose length is known is followed through them
        (the CutFrame that ends in the gap is returned); otherwise what is buffered can never complete,
        and the framer resynchronises on what follows (size None: the number is not known)."""
        cut = self.cut
        buf = self.buf
        if cut is None and size is not None and self.synced and len(buf) >= 4:
            self.cut = cut = _cut_frame(memoryview(buf)[4:], 4 + c_reads._i32(buf, 0))
            self.need = cut.size - len(buf)
            buf.clear()
        if cut is not None and size is not None:
            need = self.need
            if size < need:
                self.need = need - size
                return []
            return self._cut_done(size > need)
        if size is not None and not self.synced and self._chain_ends_at(len(buf) + size):
            # Unsynced, but the lengths from the start of what is held lead exactly to the end of
            # the gap: frames in step with the sequence numbers (a snap-length capture begun
            # mid-stream). Synced there; the last frame comes out cut.
            self.synced = True
            self.resyncs += 1
            self.scan = None
            return self._drain([]) + self.gap(size)
        self.skipped_bytes += len(buf)
        buf.clear()
        self.synced = False
        self.need = 0
        self.scan = None
        self.cut = None
        return []

    def _chain_ends_at(self, target: int) -> bool:
        """Do the length prefixes read from buf[0] on chain to a frame that ends exactly at `target`,
        past the bytes held (a frame that runs into the gap and ends with it)?"""
        buf = self.buf
        n = len(buf)
        pos = 0
        while pos + 4 <= n:
            length = c_reads._i32(buf, pos)
            if length < 4 or length > self.max_frame:
                return False
            end = pos + 4 + length
            if end >= target or end > n:
                return end == target and end > n
            pos = end
        return False

    def _cut_done(self, lost_next: bool) -> list:
        """The frame followed through a gap has ended; `lost_next`: the next frame's start was lost."""
        frame = self.cut
        self.cut = None
        self.need = 0
        self.frames += 1
        self.cut_frames += 1
        if lost_next:
            self.synced = False
            self.scan = None
        return [frame]

    def _skip(self, data) -> list:
        """Bytes after a gap, the first `need` of them inside the cut frame: passed over."""
        if type(data) is tuple:
            data = b"".join(data)
        need = self.need
        n = len(data)
        if n < need:
            self.need = need - n
            return []
        out = self._cut_done(False)
        if n > need:
            out += self.feed(memoryview(data)[need:])
        return out

    def restart(self, data) -> None:
        """Start over, unsynced, on `data` (bytes that an earlier guess framed wrongly or skipped)."""
        self.buf = bytearray(data)
        self.synced = False
        self.need = 0
        self.scan = None
        self.cut = None

    def resync(self) -> None:
        """Doubt the current frame boundary (it came from a guess): search again in what is held."""
        if self.synced:
            self.synced = False
            self.need = 0
            self.scan = None

    def feed(self, data) -> list:
        """Frame bodies completed by `data`: bytes-like, or a tuple of bytes-like pieces in order (a
        frame in progress is then completed with one copy: its buffered head and the pieces joined)."""
        if type(data) is tuple:
            return self._feed_pieces(data)
        need = self.need
        if need:
            if self.cut is not None:
                return self._skip(data)
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
                length = c_reads._i32(data, 0)
                if length == n - 4 and length <= self.max_frame:
                    # The common case: the segment is exactly one frame (a small one is copied:
                    # cheaper than a view, and bytes of its own travel to a worker process as they are).
                    self.frames += 1
                    return [data[4:] if n <= SMALL_COPY and type(data) is bytes else memoryview(data)[4:]]
            out = []
            pos = 0
            max_frame = self.max_frame
            view = memoryview(data)
            while pos + 4 <= n:
                length = c_reads._i32(data, pos)
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
        if self.cut is not None:
            return self._skip(pieces)
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
                scan = self.scan
                if scan is None:
                    scan = self.scan = {}
                start, drop = self.find_start(self.direction, buf, scan)
                if start < 0:
                    if drop > 0:
                        self.skipped_bytes += drop
                        del buf[:drop]
                    return out
                if start:
                    self.skipped_bytes += start
                    del buf[:start]
                self.scan = None
                self.synced = True
                self.resyncs += 1
            if len(buf) < 4:
                return out
            length = c_reads._i32(buf, 0)
            if length < 0 or length > self.max_frame:
                self.absurd_lengths += 1
                self.synced = False
                self.scan = None
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
