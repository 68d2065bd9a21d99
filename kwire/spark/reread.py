"""The exact way back for the flow keys pieces cannot be stitched from: their packets, read again.

A reduce task (kwire.spark.stitch) marks a flow key `Dirty` when the map side's view of a file edge
is not enough (holes open across the edge, sequence numbers that do not meet, late segments that go
on), and every flow key when the files overlap in time (`files_overlap`: captures of one traffic
from several interfaces). `reread(dirty, reports, pipeline, end_ts)` then reads the files that hold
those flow keys' packets (merged by time where they overlap, as `kwire stats` merges them), keeps
the segments of those flow keys from the first connection concerned on, and runs them through a
FlowTable into `pipeline`'s stream layers: TCP from the packets, as `kwire stats` does. Connections
a map task finished itself (their handshake and close in its file) are recognised by their opening
time and left out, so none is counted twice. It costs a read of those files per reduce task that
needs it; captures cut by tcpdump -C/-G need it only where a file edge falls into a hole.
"""

from __future__ import annotations

from dataclasses import dataclass

from kwire.capture.files import open_captures
from kwire.errors import KwireError
from kwire.native.net_decode import decode_segment
from kwire.spark.wire import flow_bytes
from kwire.native.tcp_flows import FlowTable

IDLE_NS = FlowTable().idle_timeout_ns
SWEEP_NS = FlowTable().sweep_interval_ns


@dataclass(frozen=True)
class Dirty:
    flow: bytes
    from_ts: int | None        # segments earlier than this are another connection's
    files: frozenset           # indexes of the files to read
    skip: frozenset            # opening times of connections finished in their map task

    @classmethod
    def of(cls, flow: bytes, entries: list, reports: dict, overlap: bool) -> Dirty:
        """The flow key from entries[0] (kwire.spark.pieces.Piece metas in file order) on."""
        if overlap:
            return cls(flow, None, frozenset(reports), frozenset())
        # Up to the last file that holds a piece, and on while TCP would still keep the connection:
        # segments without payload (a FIN, ACKs) leave no piece in their file.
        lo = entries[0].forder
        hi = max(entries[-1].forder, max(e.last_ts for e in entries) + IDLE_NS + SWEEP_NS)
        files = frozenset(i for i, r in reports.items() if r.first_ts_ns is not None and lo <= r.first_ts_ns <= hi)
        return cls(flow, entries[0].first_ts, files, frozenset(e.first_ts for e in entries if e.interior))


def files_overlap(reports) -> bool:
    """Whether reading the files merged by time (as `kwire stats FILES` does) interleaves them: a
    file starts before another ends, or at the same time while it comes first among the arguments
    (ties keep the arguments' order)."""
    spans = sorted((r.first_ts_ns, r.index, r.last_ts_ns) for r in reports if r.first_ts_ns is not None)
    top = top_index = None
    for first, index, last in spans:
        if top is not None and (first < top or (first == top and index < top_index)):
            return True
        if top is None or last >= top:
            top, top_index = last, index
    return False


def _groups(files: list[int], reports: dict) -> list[list[int]]:
    """The files in time order, those whose times overlap grouped (to be merged by time)."""
    groups: list[list[int]] = []
    top = None
    for i in sorted(files, key=lambda i: (reports[i].first_ts_ns, i)):
        r = reports[i]
        if groups and top is not None and r.first_ts_ns <= top:
            groups[-1].append(i)
            top = max(top, r.last_ts_ns)
        else:
            groups.append([i])
            top = r.last_ts_ns
    return groups


class _Ignored:
    """The consumer of a connection counted elsewhere."""

    def data(self, direction: int, ts_ns: int, data) -> int:
        return 0

    def gap(self, direction: int, ts_ns: int, size: int) -> None:
        pass

    def close(self, ts_ns: int, reason: str) -> None:
        pass


def reread(dirty: list[Dirty], reports: dict, pipeline, end_ts: int) -> dict:
    """Run the dirty flow keys' segments through TCP into `pipeline` (module docstring); its
    exchanges wait in the pipeline (take()). Returns TCP's counters."""
    by_flow = {d.flow: d for d in dirty}

    def open_stream(conn):
        d = by_flow[flow_bytes(conn.a[0], conn.a[1], conn.b[0], conn.b[1])]
        if conn.initiator == 0 and conn.first_ts_ns in d.skip:
            return _Ignored()
        return pipeline.tls(conn)

    table = FlowTable(open_stream)
    files = sorted({i for d in dirty for i in d.files if reports[i].first_ts_ns is not None})
    for group in _groups(files, reports):
        wanted = {d.flow: d.from_ts for d in dirty if d.files.intersection(group)}
        try:
            source = open_captures([reports[i].path for i in group])
        except KwireError:
            continue
        try:
            for packet in source:
                seg = decode_segment(packet)
                if seg is None:
                    continue
                flow = flow_bytes(seg.src_ip, seg.src_port, seg.dst_ip, seg.dst_port)
                if flow in wanted:
                    since = wanted[flow]
                    if since is None or seg.ts_ns >= since:
                        table.feed(seg)
        except KwireError:
            pass  # damage: the map task reported it; the good packets before it were used
        finally:
            source.close()
    table.flush(max(end_ts, table.latest_ts()))
    return table.counters()
