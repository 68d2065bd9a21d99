"""kwire.native.kafka_resync.find_response_start with many requests pending (a connection after a gap under
overload): the windows read at once give exactly what one search per pending id gives."""

from __future__ import annotations

import random
import struct

from kwire.native.kafka_resync import FEW_PENDING, find_response_start

MAX_FRAME = 100 << 20


def one_search_per_id(buf, max_frame: int, pending) -> int:
    """The search as it was: every pending id looked for through the whole buffer."""
    best = -1
    for corr in pending:
        needle = struct.pack(">i", corr)
        idx = buf.find(needle, 4)
        while idx >= 4:
            length = struct.unpack_from(">i", buf, idx - 4)[0]
            if 4 <= length <= max_frame:
                if best < 0 or idx - 4 < best:
                    best = idx - 4
                break
            idx = buf.find(needle, idx + 1)
    return best


def test_many_pending_ids_give_what_one_search_per_id_gives():
    rng = random.Random(7)
    for round_ in range(400):
        n = rng.choice((0, 3, 7, 8, 9, 60, 1500, 9000))
        buf = bytearray(rng.randbytes(n))
        ids = [rng.randrange(-2**31, 2**31) for _ in range(rng.choice((FEW_PENDING + 1, 300, 5000)))]
        for _ in range(rng.randrange(4)):  # some responses in the buffer: length, then a pending id
            if n >= 8:
                at = rng.randrange(0, n - 7)
                corr = rng.choice(ids)
                buf[at:at + 8] = struct.pack(">ii", rng.choice((rng.randrange(4, 5000), -1, 0, 2**31 - 1)), corr)
        pending = dict.fromkeys(ids)
        data = bytes(buf) if round_ % 2 else buf  # the framer holds a bytearray
        expected = one_search_per_id(data, MAX_FRAME, pending)
        assert find_response_start(data, MAX_FRAME, pending) == expected
