"""Finding the next frame start in the middle of a stream (capture began mid-stream, or a gap).

Requests: candidates are spots where a plausible request header begins (kwire.native.kafka_headers).
Bytes inside a frame can look like a header by chance, so a candidate is checked along the chain:
"confirmed" when its frame ends exactly at the end of the bytes held or on another plausible header,
"open" when its frame runs past the bytes held, rejected otherwise. The first confirmed candidate
wins; failing that, the first open one. When the connection's client id is known (every request of
a connection carries the same one), a candidate must carry it too.

Responses carry only a length and a correlation id: a candidate is a sane length followed by the
correlation id of a request still waiting for its answer.
"""

from __future__ import annotations

import re
import struct
import sys

from kwire.native.kafka_headers import plausible_request

_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_LITTLE_ENDIAN = sys.byteorder == "little"
# A request header's api key and version are small non-negative int16s: their high bytes are zero.
# A lookahead, so that overlapping candidates are all seen.
_REQUEST_CANDIDATE = re.compile(rb"(?=\x00[\x00-\x7f]\x00[\x00-\x3f])", re.DOTALL)


def _client_id_matches(buf, start: int, client_id: bytes) -> bool:
    n = _I16.unpack_from(buf, start + 12)[0]
    if n != len(client_id):
        return False
    got = bytes(buf[start + 14:start + 14 + n])
    return client_id.startswith(got)  # the id may be cut by the end of what is held


MAX_TENTATIVE = 4 << 20  # a candidate frame longer than this is not waited for while unsynced
MAX_OPEN = 256  # candidates waiting for their frame to complete
KEEP_TAIL = 64  # bytes kept with no candidate: a header may straddle two segments
NEXT_HEADER = 14  # bytes a request header needs before it can be judged


def scan_requests(buf, scan: dict, max_frame: int, client_id: bytes | None = None,
                  trust_open: bool = True) -> tuple[int, int]:
    """Where the next request starts in an unsynced buffer: (start, 0), or (-1, bytes to drop).

    Incremental: `scan` remembers how far the buffer was searched and the candidates still waiting
    for their frame to complete, so every byte is searched about once however the data arrives.
    A candidate is confirmed when its frame ends exactly where the bytes held end, or on another
    plausible request header. `trust_open` (roles known, a gap to get over) takes the first candidate
    at once when none is confirmed; without it (roles unknown, where a false start costs a whole
    connection) only confirmed candidates are taken, and open ones are waited for, up to
    MAX_TENTATIVE bytes each.
    """
    size = len(buf)
    scanned = scan.get("scanned", 0)
    cands: list = scan.setdefault("cands", [])
    seen = {c[0] for c in cands}
    for m in _REQUEST_CANDIDATE.finditer(buf, max(0, scanned - NEXT_HEADER - 4)):
        start = m.start() - 4
        if start < 0 or start in seen or start + NEXT_HEADER > size:
            continue
        if not plausible_request(buf, start, max_frame):
            continue
        if client_id is not None and not _client_id_matches(buf, start, client_id):
            continue
        end = start + 4 + _I32.unpack_from(buf, start)[0]
        if end - start > MAX_TENTATIVE and not trust_open:
            continue
        cands.append((start, end))
        seen.add(start)
        if len(cands) > MAX_OPEN:
            del cands[0]
    # Headers cut by the end of the buffer are searched again next time.
    scan["scanned"] = max(0, size - NEXT_HEADER)
    keep = []
    for start, end in cands:
        if end == size:
            return start, 0
        if end + NEXT_HEADER <= size:
            if plausible_request(buf, end, max_frame):
                return start, 0
            continue  # the header after it is not one: a false start
        keep.append((start, end))
    if trust_open and keep:
        return keep[0][0], 0
    if keep:
        drop = keep[0][0]
    else:
        drop = max(0, min(size - KEEP_TAIL, scan["scanned"]))
    scan["cands"] = [(s - drop, e - drop) for s, e in keep]
    scan["scanned"] -= drop
    return -1, drop


FEW_PENDING = 24  # up to this many pending ids, one search per id costs less than reading every window


def _present(buf, pending) -> set:
    """The pending correlation ids that occur anywhere in buf from byte 4 on: every 4-byte window read
    at once, four alignments of arrays, instead of a search of the whole buffer per pending id (after
    a gap under overload a connection has thousands pending, and each response segment was searched
    thousands of times)."""
    from array import array  # here: a run that never resyncs does not load it

    seen: set = set()
    n = len(buf)
    for start in range(4, 8):
        count = (n - start) // 4
        if count <= 0:
            break
        window = array("i")
        window.frombytes(buf[start:start + 4 * count])
        if _LITTLE_ENDIAN:
            window.byteswap()
        seen.update(window)
    return seen & pending.keys() if hasattr(pending, "keys") else seen.intersection(pending)


def find_response_start(buf, max_frame: int, pending) -> int:
    """The earliest spot where a sane length is followed by a pending correlation id."""
    if len(pending) > FEW_PENDING:
        pending = _present(buf, pending)
    best = -1
    for corr in pending:
        needle = _I32.pack(corr)
        idx = buf.find(needle, 4)
        while idx >= 4:
            length = _I32.unpack_from(buf, idx - 4)[0]
            if 4 <= length <= max_frame:
                if best < 0 or idx - 4 < best:
                    best = idx - 4
                break
            idx = buf.find(needle, idx + 1)
    return best


def request_chain(buf, scan: dict, max_frame: int) -> tuple[bool, int]:
    """For bytes not yet known to be Kafka (kwire.tls.detect asks, through kwire.pipeline): (a request
    frame chain parses in `buf`: a plausible request header whose frame ends where the bytes end or
    on another plausible header; where the earliest frame still open starts, or -1). Incremental as
    scan_requests (`scan` keeps its state, positions stay absolute: nothing is dropped from `buf`),
    so each byte is searched about once however the bytes come."""
    start, drop = scan_requests(buf, scan, max_frame, None, trust_open=False)
    if start >= 0:
        return True, start
    if drop:
        scan["scanned"] += drop
        scan["cands"] = [(s + drop, e + drop) for s, e in scan["cands"]]
    cands = scan.get("cands")
    return False, cands[0][0] if cands else -1
