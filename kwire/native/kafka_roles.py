"""Which side of a connection is the client, when the TCP handshake was not captured.

`RoleDetector` keeps the frames both directions framed (at most MAX_EARLY_FRAMES) and the bytes each
side sent (at most UNDECIDED_RAW each) until one side's requests are seen answered by the other,
then says which direction carries requests. A first guess ("the first side whose bytes parse as
requests") is wrong surprisingly often: a response with a small correlation id parses as a Produce
request with an empty client id. Evidence, strongest first: the correlation ids of one direction's
request frames come back at the start of the other direction's frames (a length, then that id);
failing that, one direction framed requests while the other, which has sent bytes since, framed
nothing; and out of room (MAX_EARLY_FRAMES), one direction framed only requests of one client id
while the other framed nothing. The detector is sans-IO and bounded; it never decides on a single
coincidence.
"""

from __future__ import annotations

import struct

from kwire.errors import DecodeError
from kwire.native.kafka_headers import parse_request_header, plausible_request

MAX_EARLY_FRAMES = 64  # frames held while the roles of a connection are unknown
UNDECIDED_RAW = 64 * 1024  # bytes of each side kept while roles are unknown, to rescan the broker's side

_I32 = struct.Struct(">i")


def looks_like_request(body, max_frame: int) -> bool:
    """Does a frame body (its length prefix taken off) start like a Kafka request?"""
    return len(body) >= 10 and plausible_request(_I32.pack(len(body)) + bytes(body[:10 + 1024]), 0, max_frame)


def _answered(raw, corrs, max_frame: int) -> int:
    """How many of `corrs` start a response in `raw`: a length, the id, and a frame that ends where
    `raw` ends or where another sane length begins (a lone 4-byte match is too common to count)."""
    size = len(raw)
    count = 0
    for corr in corrs:
        needle = _I32.pack(corr)
        idx = raw.find(needle, 4)
        while idx >= 4:
            length = _I32.unpack_from(raw, idx - 4)[0]
            end = idx + length
            if 4 <= length <= max_frame and (end == size or (end + 8 <= size
                                                               and 4 <= _I32.unpack_from(raw, end)[0] <= max_frame)):
                count += 1
                break
            idx = raw.find(needle, idx + 1)
    return count


class RoleDetector:
    """Frames and bytes of a connection whose roles are unknown; `add()` says when they are known.

    After a decision, `early` holds the frames to replay in order ((direction, ts_ns, body)), and
    `rescan` tells whether the broker's whole side was kept (`raw[broker]`): it was searched for
    requests and must be framed again, for responses (its frames were dropped from `early`)."""

    __slots__ = ("max_frame", "early", "first_request_at", "bytes_after_request", "raw", "rescan", "gave_up",
                 "gapped", "sends_after_request")

    def __init__(self, max_frame: int):
        self.max_frame = max_frame
        self.early: list[tuple[int, int, object]] = []
        self.first_request_at: list[int | None] = [None, None]  # index+1 in early of a side's first request
        self.bytes_after_request = [0, 0]  # bytes a side sent after the other's first request
        self.sends_after_request = [0, 0]  # deliveries of them (one: perhaps a frame a gap will end)
        self.raw = [bytearray(), bytearray()]  # what each side sent meanwhile
        self.rescan = False
        self.gave_up = False  # too many frames without a decision: not Kafka
        self.gapped = [False, False]  # a side lost bytes: its raw bytes are not one stream to frame again

    def add(self, direction: int, ts_ns: int, data, frames) -> int | None:
        """What `direction` sent (data) and the frames its framer cut from it. Returns the client's
        direction once it can tell, else None (and sets gave_up when it never will)."""
        raw = self.raw[direction]
        if len(raw) < UNDECIDED_RAW:
            raw += data
        for body in frames:
            self.early.append((direction, ts_ns, body))
            if self.first_request_at[direction] is None and looks_like_request(body, self.max_frame):
                self.first_request_at[direction] = len(self.early)
        if self.first_request_at[1 - direction] is not None:
            self.bytes_after_request[direction] += len(data)
            self.sends_after_request[direction] += 1 if data else 0
        decided = self._decide()
        if decided is not None:
            self.rescan = self._can_rescan(1 - decided)
            if self.rescan:
                self.early = [item for item in self.early if item[0] == decided]
        elif len(self.early) > MAX_EARLY_FRAMES:
            decided = self._lone_requester()
            if decided is None:
                self.gave_up = True
                self.early.clear()
            else:
                self.rescan = self._can_rescan(1 - decided)
                if self.rescan:
                    self.early = [item for item in self.early if item[0] == decided]
        return decided

    def gap(self, direction: int) -> None:
        """Bytes of `direction` were lost (a gap): what it sent cannot be framed again as one stream."""
        self.gapped[direction] = True

    def _can_rescan(self, broker: int) -> bool:
        return len(self.raw[broker]) < UNDECIDED_RAW and not self.gapped[broker]

    def _lone_requester(self) -> int | None:
        """Out of room with no answer seen: the side whose frames, at least half the room's worth,
        all parse as requests of one client id, while the other side framed nothing at all. A capture
        that begins inside a busy connection shows this: the broker's bytes cannot be framed until
        requests are pending (its first answers are to requests sent before the capture began), and
        TCP may hand the client's side over as one burst. Roles only: the connection still has to
        be seen answered (kwire.native.kafka_connection's CANDIDATE state) before it counts as Kafka."""
        sides = {d for d, _, _ in self.early}
        if len(sides) != 1:
            return None
        (side,) = sides
        if len(self.early) < MAX_EARLY_FRAMES // 2:
            return None
        client_ids = set()
        for _, _, body in self.early:
            if not looks_like_request(body, self.max_frame):
                return None
            try:
                client_ids.add(parse_request_header(body).client_id)
            except DecodeError:
                return None
        return side if len(client_ids) == 1 else None

    def _decide(self) -> int | None:
        """Which direction carries requests, judged on what was seen so far; None: cannot tell yet."""
        asked: list[set[int]] = [set(), set()]
        framed_answers = [0, 0]
        for d, _, body in self.early:
            if len(body) >= 4 and _I32.unpack_from(body, 0)[0] in asked[1 - d]:
                framed_answers[1 - d] += 1  # a frame of d starts with an id the other side asked earlier
            if len(body) >= 8 and looks_like_request(body, self.max_frame):
                asked[d].add(_I32.unpack_from(body, 4)[0])
        score = [framed_answers[x] + _answered(self.raw[1 - x], asked[x], self.max_frame) for x in (0, 1)]
        if score[0] != score[1]:
            return 0 if score[0] > score[1] else 1
        framed = [False, False]
        for d, _, _ in self.early:
            framed[d] = True
        if any(self.gapped):  # bytes without frames may be frames whose end is still in a gap (a snap
            return None       # length's cut): only answered correlation ids decide
        for x in (0, 1):
            if (self.first_request_at[x] is not None and not framed[1 - x] and self.bytes_after_request[1 - x] > 0
                    and self.sends_after_request[1 - x] > 1):
                return x
        return None
