"""Framer.need: the bytes still missing from the frame in progress, kept right however the stream is cut."""

import random

from kwire.native.framing import Framer
from tests.kafka.frames import find_request_start, finder, request_frame

FRAMES = [request_frame(1, 4, i, "c", bytes(range(256)) * (i % 7)) for i in range(30)]
STREAM = b"".join(FRAMES)


def test_need_counts_down_to_the_frame_end():
    framer = Framer(finder(lambda b: find_request_start(b, 1 << 20)), synced=True, max_frame=1 << 20)
    frame = FRAMES[5]
    assert framer.feed(frame[:3]) == [] and framer.need == 0  # length not read yet
    assert framer.feed(frame[3:10]) == [] and framer.need == len(frame) - 10
    assert framer.feed(frame[10:20]) == [] and framer.need == len(frame) - 20
    out = framer.feed(frame[20:] + FRAMES[6][:8])
    assert [bytes(f) for f in out] == [frame[4:]]
    assert framer.need == len(FRAMES[6]) - 8


def test_random_cuts_frames_and_need_agree_with_a_plain_reading():
    rng = random.Random(3)
    for _ in range(100):
        framer = Framer(finder(lambda b: find_request_start(b, 1 << 20)), synced=True, max_frame=1 << 20)
        pos = 0
        got = []
        while pos < len(STREAM):
            # cut where the framer's need says the frame ends, or anywhere
            step = framer.need if framer.need and rng.random() < 0.5 else rng.randrange(1, 3000)
            got += [bytes(f) for f in framer.feed(STREAM[pos:pos + step])]
            pos += step
            done = sum(len(f) for f in FRAMES[:len(got)])
            if framer.need:
                assert done + len(FRAMES[len(got)]) == min(pos, len(STREAM)) + framer.need
        assert got == [f[4:] for f in FRAMES]
        assert framer.need == 0 and len(framer.buf) == 0


def test_gap_resync_and_restart_clear_need():
    for reset in (Framer.gap, Framer.resync, lambda f: f.restart(b"")):
        framer = Framer(finder(lambda b: find_request_start(b, 1 << 20)), synced=True, max_frame=1 << 20)
        framer.feed(FRAMES[3][:10])
        assert framer.need
        reset(framer)
        assert framer.need == 0


def test_pieces_frame_like_their_joined_bytes():
    """A tuple of pieces (held-back bytes, kwire.tcp.events.Connection.pieces) frames exactly as the
    same bytes joined, whether the pieces end inside, at, or past the frame in progress."""
    rng = random.Random(9)
    for _ in range(200):
        a = Framer(finder(lambda b: find_request_start(b, 1 << 20)), synced=True, max_frame=1 << 20)
        b = Framer(finder(lambda b: find_request_start(b, 1 << 20)), synced=True, max_frame=1 << 20)
        pos = 0
        got_a, got_b = [], []
        while pos < len(STREAM):
            size = a.need + rng.choice((0, 0, 1, 7, 300)) if a.need and rng.random() < 0.7 else rng.randrange(1, 2000)
            chunk = STREAM[pos:pos + size]
            cuts = sorted(rng.sample(range(1, len(chunk)), min(len(chunk) - 1, rng.randrange(0, 5)))) if len(chunk) > 1 else []
            pieces = tuple(chunk[i:j] for i, j in zip([0] + cuts, cuts + [len(chunk)]))
            got_a += [bytes(f) for f in a.feed(chunk)]
            got_b += [bytes(f) for f in b.feed(pieces)]
            assert (a.need, len(a.buf)) == (b.need, len(b.buf))
            pos += size
        assert got_a == got_b == [f[4:] for f in FRAMES]
