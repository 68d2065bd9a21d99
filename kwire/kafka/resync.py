"""Finding the next frame start in the middle of a stream (capture began mid-stream, or a gap).

Requests: candidates are spots where a plausible request header begins (kwire.kafka.headers).
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

from kwire.kafka.headers import plausible_request

_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
# A request header's api key and version are small non-negative int16s: their high bytes are zero.
# A lookahead, so that overlapping candidates are all seen.
_REQUEST_CANDIDATE = re.compile(rb"(?=\x00[\x00-\x7f]\x00[\x00-\x3f])", re.DOTALL)
MAX_CANDIDATES = 4096


def _client_id_matches(buf, start: int, client_id: bytes) -> bool:
    n = _I16.unpack_from(buf, start + 12)[0]
    if n != len(client_id):
        return False
    got = bytes(buf[start + 14:start + 14 + n])
    return client_id.startswith(got)  # the id may be cut by the end of what is held


def find_request_start(buf, max_frame: int, client_id: bytes | None = None) -> int:
    size = len(buf)
    first_open = -1
    for i, m in enumerate(_REQUEST_CANDIDATE.finditer(buf)):
        if i >= MAX_CANDIDATES:
            break
        start = m.start() - 4
        if start < 0 or not plausible_request(buf, start, max_frame):
            continue
        if client_id is not None and not _client_id_matches(buf, start, client_id):
            continue
        end = start + 4 + _I32.unpack_from(buf, start)[0]
        if end == size:
            return start
        if end > size:
            if first_open < 0:
                first_open = start
            continue
        if size - end >= 14:
            if plausible_request(buf, end, max_frame):
                return start
            continue
        # Too few bytes after the frame to judge the next header: as good as open.
        if first_open < 0:
            first_open = start
    return first_open


def find_response_start(buf, max_frame: int, pending) -> int:
    """The earliest spot where a sane length is followed by a pending correlation id."""
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
