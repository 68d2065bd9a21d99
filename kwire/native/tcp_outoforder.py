"""One direction's bytes that wait for a hole to fill, and holes declared lost.

`OutOfOrder` is the part of kwire.native.tcp_reassembly.HalfStream (a mixin: the state is HalfStream's own)
that keeps out-of-order runs in a bounded buffer (`starts`/`chunks`, offsets from `base`, sorted and
non-overlapping; bytes already buffered win over a later copy, whose differing bytes are counted as
conflicting), hands them over once the hole before them fills (`_drain`), and declares a hole lost
(`_gap`: a StreamConsumer.gap with its exact size, never zero-filled) when the peer acknowledges past
it after a grace (`ack_passed`, `check_ack`), when the buffer goes over its limit, or at the end.
Sequence numbers are compared modulo 2^32 (`signed_delta`).
"""

from __future__ import annotations

from bisect import bisect_right

MASK = 0xFFFFFFFF
HALF = 0x80000000
WRAP = 0x100000000
ACK_GRACE_SEGMENTS = 32  # segments an acknowledged-but-unseen hole waits before it is declared lost


def signed_delta(a: int, b: int) -> int:
    """a - b on the 32-bit sequence circle, in [-2^31, 2^31)."""
    d = (a - b) & MASK
    return d - WRAP if d >= HALF else d


def count_differences(first, later) -> int:
    """Bytes that differ between two equal-length byte strings (C speed, no per-byte loop)."""
    if first == later:
        return 0
    n = len(first)
    x = int.from_bytes(first, "big") ^ int.from_bytes(later, "big")
    return n - x.to_bytes(n, "big").count(0)


class OutOfOrder:
    """HalfStream's out-of-order buffer and hole handling (see the module docstring)."""

    __slots__ = ()

    def _insert(self, rel: int, data) -> None:
        """Buffer `data` at `rel` bytes past nxt (rel >= 0); bytes already buffered win."""
        starts = self.starts
        chunks = self.chunks
        if not starts:
            self.base = self.nxt
        s = ((self.nxt - self.base) & MASK) + rel
        e = s + len(data)
        i = bisect_right(starts, s) - 1
        cur = s
        if i >= 0:  # the run starting at or before s may cover its beginning
            ps = starts[i]
            pe = ps + len(chunks[i])
            if pe > s:
                hi = pe if pe < e else e
                self._dup(chunks[i][s - ps:hi - ps], data[:hi - s])
                cur = hi
        i += 1
        j = i
        n_runs = len(starts)
        run_starts: list[int] = []  # new pieces interleaved with the runs i..j-1 they surround
        run_chunks: list = []
        added = 0
        while cur < e and j < n_runs and starts[j] < e:
            ps = starts[j]
            chunk = chunks[j]
            if ps > cur:
                run_starts.append(cur)
                run_chunks.append(data[cur - s:ps - s])
                added += ps - cur
            run_starts.append(ps)
            run_chunks.append(chunk)
            pe = ps + len(chunk)
            hi = pe if pe < e else e
            self._dup(chunk[:hi - ps], data[ps - s:hi - s])
            cur = hi
            j += 1
        if cur < e:
            run_starts.append(cur)
            run_chunks.append(data[cur - s:] if cur > s else data)
            added += e - cur
        if added:
            starts[i:j] = run_starts
            chunks[i:j] = run_chunks
            self.buffered += added

    def _dup(self, first, later) -> None:
        self.retransmitted_bytes += len(later)
        self.conflicting_bytes += count_differences(first, later)

    def _drain(self, ts: int) -> None:
        """Deliver the buffered runs that now start at nxt, as one StreamData."""
        starts = self.starts
        if not starts:
            return
        pos = (self.nxt - self.base) & MASK
        if starts[0] != pos:
            return
        chunks = self.chunks
        k = 0
        n = len(starts)
        while k < n and starts[k] == pos:
            pos += len(chunks[k])
            k += 1
        data = chunks[0] if k == 1 else b"".join(chunks[:k])
        del starts[:k]
        del chunks[:k]
        self.buffered -= len(data)
        self._deliver(data, ts)

    # -- holes ----------------------------------------------------------------------------------

    def _gap(self, size: int, ts: int) -> None:
        if self.held:
            self.flush_held()
        self.gaps += 1
        self.gap_bytes += size
        self.want = 0
        self.consumer().gap(self.direction, ts, size)
        self.nxt = (self.nxt + size) & MASK
        self.tail = b""
        self.lost_at = None
        if self.nxt == self.fin_at:
            self._consume_fin()
        else:
            self._drain(ts)

    def _skip_hole(self, ts: int) -> None:
        """Declare the hole before the first buffered run lost and deliver what follows it."""
        pos = (self.nxt - self.base) & MASK
        size = self.starts[0] - pos
        if size > 0:
            self._gap(size, ts)
            return
        # Buffered bytes at or behind nxt: a gap declared up to a FIN can move nxt like that.
        while self.starts and self.starts[0] < pos:
            chunk = self.chunks[0]
            keep = self.starts[0] + len(chunk) - pos
            if keep > 0:
                self.starts[0] = pos
                self.chunks[0] = chunk[len(chunk) - keep:]
                self.buffered -= len(chunk) - keep
            else:
                del self.starts[0]
                del self.chunks[0]
                self.buffered -= len(chunk)
        self._drain(ts)

    def ack_passed(self, ack: int) -> None:
        """The peer acknowledged up to `ack`, past nxt. The bytes before it that we lack were received
        by the peer, but a capture may still show them a little later (capture order is not wire
        order: several queues, reordering): wait ACK_GRACE_SEGMENTS more segments of the connection
        before declaring them lost (check_ack)."""
        if self.ack_hole is None:
            self.ack_hole = ack
            self.ack_due = self.segments + self.peer.segments + ACK_GRACE_SEGMENTS
        elif signed_delta(ack, self.ack_hole) > 0:
            self.ack_hole = ack

    def check_ack(self, ts: int, force: bool = False) -> None:
        """Declare the acknowledged hole lost once its grace has run out (or when forced)."""
        target = self.ack_hole
        if target is None:
            return
        if self.nxt is None or signed_delta(target, self.nxt) <= 0:
            self.ack_hole = None
            return
        if force or self.segments + self.peer.segments >= self.ack_due:
            self.ack_hole = None
            self._declare_acked(target, ts)

    def _declare_acked(self, ack: int, ts: int) -> None:
        """Every byte before `ack` that we lack is lost."""
        target = ack
        if self.fin_at is not None and signed_delta(target, self.fin_at) > 0:
            target = self.fin_at
        while True:
            d = signed_delta(target, self.nxt)
            if d <= 0:
                break
            if self.starts:
                first = self.starts[0] - ((self.nxt - self.base) & MASK)
                if first < d:
                    self._gap(first, ts)
                    continue
            self._gap(d, ts)
            break
        if self.nxt == self.fin_at:
            self._consume_fin()
        self.clean = not self.starts and self.fin_at is None
