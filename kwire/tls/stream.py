"""`TlsStream`: a StreamConsumer (kwire.tcp.stream) for a TCP connection that carries TLS.

It reads both directions' TLS records (kwire.tls.records), runs the connection's TlsSession
(handshake, keys, decryption) and speaks the same contract to an inner StreamConsumer, made by the
factory it was given on the first plaintext or gap it has to pass on (a connection that never
yields plaintext never makes one):
- decrypted application data goes to inner.data(direction, ts_ns, plaintext), in order, unchanged,
  at the capture time of the segment that completed the record carrying it. When the inner
  consumer returns n > 0 (it waits for n more bytes), plaintext is held back until n are in and
  handed over at once as a tuple of pieces, as TCP does;
- bytes lost before or while decrypting (a TCP gap, a record that fails to verify, a lost record
  boundary) go to inner.gap(direction, ts_ns, size), `size` being the ciphertext bytes lost (the
  plaintext lost is at most that);
- close is passed on after what is held.
data() returns how many more ciphertext bytes must come before anything can be done with them, so
TCP holds them back and hands them over at once: the rest of the TLS record in progress or, when
the inner consumer waits for n more bytes of plaintext, n less the plaintext held here and the
ciphertext already in for the record in progress, whichever is larger (a record carries less
plaintext than ciphertext, so what the inner consumer waits for cannot be complete sooner). A 4 MB
Fetch response thus comes in one delivery, not record by record, and reaches the inner consumer at
the same capture time as record by record (that of the segment that completed its last record).
Problems found on the records of such a delivery (a record that does not verify) are timed at its
end.

At close, `info` (a kwire.tls.info.TlsInfo) is complete and is given to `report(conn, info)` when a
report callable was passed.
"""

from __future__ import annotations

from typing import Callable

from kwire.tcp.stream import Connection, StreamConsumer, StreamFactory
from kwire.tls.info import BAD_RECORD_HEADER, TlsDecodeError, TlsInfo
from kwire.tls.keylog import KeySource
from kwire.tls.records import SYNCED, RecordReader, Resync
from kwire.tls.session import ENCRYPTED, TlsSession

Report = Callable[[Connection, TlsInfo], None]


class TlsStream:
    __slots__ = ("conn", "open_inner", "inner", "report", "readers", "session", "info", "held", "held_bytes",
                 "want", "closed")

    def __init__(self, conn: Connection, open_inner: StreamFactory, keys: KeySource | None,
                 report: Report | None = None, *, key_wait_bytes: int = 0, synced: bool | None = None):
        """`keys`: where secrets come from (a KeyLog, a FollowedKeyLog; None: nothing is decrypted).
        `key_wait_bytes` > 0 holds up to that many bytes of records while a key log that clients
        still write has no entry yet (live capture). `synced`: the streams start on a record
        boundary (default: when TCP saw the connection open)."""
        self.conn = conn
        self.open_inner = open_inner
        self.inner: StreamConsumer | None = None
        self.report = report
        if synced is None:
            synced = conn.initiator is not None
        self.readers = (RecordReader(synced), RecordReader(synced))
        self.session = TlsSession(keys, self._emit, self._emit_gap, key_wait_bytes=key_wait_bytes,
                                  start_seen=synced)
        self.info = self.session.info
        self.held: tuple[list, list] = ([], [])  # plaintext waiting for the inner consumer's need
        self.held_bytes = [0, 0]
        self.want = [0, 0]  # what the inner consumer last said it needs, per direction
        self.closed = False

    @property
    def state(self) -> str:
        return self.session.state

    def __repr__(self) -> str:
        return f"<TlsStream conn={self.conn.id} {self.session.state}>"

    # -- the StreamConsumer contract -----------------------------------------------------------

    def data(self, direction: int, ts_ns: int, data) -> int:
        info = self.info
        reader = self.readers[direction]
        if type(data) is bytes and not reader.pieces:
            n = len(data)
            if n > 21 and data[0] == 23 and (data[3] << 8 | data[4]) == n - 5 and reader.state is SYNCED:
                # The steady state, inlined: one whole application-data record, keys in hand.
                d = self.session.directions[direction]
                cipher = d.cipher
                if cipher is not None and d.seq_known and not d.switch and self.session.state is ENCRYPTED:
                    try:
                        inner_type, plain = cipher.open(d.seq, data[:5], memoryview(data)[5:])
                    except TlsDecodeError:
                        pass  # the plain path below tells what it was
                    else:
                        info.ciphertext_bytes[direction] += n
                        info.records[direction] += 1
                        reader.records += 1
                        d.verified += 1
                        d.opened_bytes += n
                        info.records_decrypted += 1
                        self.session.opened(d, ts_ns, inner_type, plain)
                        return self._need(direction, reader)
        info.ciphertext_bytes[direction] += sum(map(len, data)) if type(data) is tuple else len(data)
        events = reader.feed(data)
        if events:
            on_record = self.session.on_record
            for event in events:
                if type(event) is tuple:
                    info.records[direction] += 1
                    on_record(direction, ts_ns, event[0], event[1])
                else:
                    self._resync(direction, ts_ns, event)
        return self._need(direction, reader)

    def gap(self, direction: int, ts_ns: int, size: int) -> None:
        dropped = self.readers[direction].gap()
        self._flush(direction, ts_ns)
        self.session.on_gap(direction, ts_ns, size + dropped)

    def close(self, ts_ns: int, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.session.close()
        if self.inner is not None:
            self._flush(0, ts_ns)
            self._flush(1, ts_ns)
            self.inner.close(ts_ns, reason)
        if self.report is not None:
            self.report(self.conn, self.info)
        self.session.emit = self.session.emit_gap = None  # no cycle left: freed when TCP lets go, not by the collector

    # -- inside --------------------------------------------------------------------------------

    def _need(self, direction: int, reader: RecordReader) -> int:
        """What data() returns (see the module docstring)."""
        need = reader.need
        want = self.want[direction]
        if want and reader.state is SYNCED and self.session.state is ENCRYPTED:
            more = want - self.held_bytes[direction] - reader.have
            if more > need:
                return more
        return need

    def _resync(self, direction: int, ts_ns: int, event: Resync) -> None:
        if event.kind == BAD_RECORD_HEADER or event.skipped == 0:
            # lost the record boundary: what follows cannot be read until a record starts again
            self.info.problem(event.kind, direction, ts_ns, "no TLS record header where one must start")
            self._flush(direction, ts_ns)
            self.session.on_gap(direction, ts_ns, 0)
        else:
            self.session.directions[direction].lost(event.skipped)

    def _inner(self) -> StreamConsumer:
        inner = self.inner
        if inner is None:
            inner = self.inner = self.open_inner(self.conn)
        return inner

    def _emit(self, direction: int, ts_ns: int, plain) -> None:
        """Decrypted application data: to the inner consumer, or held for its need."""
        want = self.want[direction]
        if want:
            n = len(plain)
            held = self.held[direction]
            if self.held_bytes[direction] + n < want:
                held.append(plain)
                self.held_bytes[direction] += n
                return
            if held:
                held.append(plain)
                plain = tuple(held)
                held.clear()
                self.held_bytes[direction] = 0
        inner = self.inner if self.inner is not None else self._inner()
        self.want[direction] = inner.data(direction, ts_ns, plain)

    def _flush(self, direction: int, ts_ns: int) -> None:
        held = self.held[direction]
        if held:
            pieces = tuple(held)
            held.clear()
            self.held_bytes[direction] = 0
            self.want[direction] = self._inner().data(direction, ts_ns, pieces)

    def _emit_gap(self, direction: int, ts_ns: int, size: int) -> None:
        self._flush(direction, ts_ns)
        self.want[direction] = 0
        inner = self._inner()
        at_most = getattr(inner, "gap_at_most", None)  # the plaintext lost is at most `size` (kwire.tcp.stream)
        if at_most is not None:
            at_most(direction, ts_ns, size)
        else:
            inner.gap(direction, ts_ns, size)
