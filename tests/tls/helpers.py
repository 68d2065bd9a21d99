"""Test helpers: a recording inner consumer, connections, and feeding a TLS stream in pieces."""

from __future__ import annotations

from kwire.tcp.stream import Connection


def connection(conn_id: int = 1, initiator: int | None = 0) -> Connection:
    return Connection(conn_id, (b"\x7f\x00\x00\x01", 40000 + conn_id), (b"\x7f\x00\x00\x01", 9093), initiator, 0)


class Recorder:
    """An inner StreamConsumer that keeps what it was given; returns `need` from data()."""

    def __init__(self, conn: Connection | None = None, need: int = 0):
        self.conn = conn
        self.need = need
        self.calls: list[tuple] = []
        self.stream = [bytearray(), bytearray()]
        self.gaps = [0, 0]
        self.closed: tuple | None = None

    def data(self, direction: int, ts_ns: int, data) -> int:
        assert self.closed is None
        if type(data) is tuple:
            assert self.need > 0, "pieces handed to a consumer that never asked for a hold"
            data = b"".join(bytes(p) for p in data)
        self.calls.append(("data", direction, ts_ns, bytes(data)))
        self.stream[direction] += data
        return self.need

    def gap(self, direction: int, ts_ns: int, size: int) -> None:
        self.calls.append(("gap", direction, ts_ns, size))
        self.gaps[direction] += 1

    def close(self, ts_ns: int, reason: str) -> None:
        self.calls.append(("close", ts_ns, reason))
        self.closed = (ts_ns, reason)


class Factory:
    """open_inner for a TlsStream: makes (and remembers) Recorders."""

    def __init__(self, need: int = 0):
        self.need = need
        self.made: list[Recorder] = []

    def __call__(self, conn: Connection) -> Recorder:
        rec = Recorder(conn, self.need)
        self.made.append(rec)
        return rec

    @property
    def one(self) -> Recorder:
        assert len(self.made) == 1
        return self.made[0]


def feed_split(stream, direction: int, ts_ns: int, data: bytes, cuts) -> int:
    """Feed `data` to stream.data in pieces cut at the sorted offsets `cuts`; honour the need by
    sometimes delivering tuples. Returns the last need."""
    need = 0
    last = 0
    for cut in list(cuts) + [len(data)]:
        if cut <= last:
            continue
        need = stream.data(direction, ts_ns, data[last:cut])
        last = cut
    return need
