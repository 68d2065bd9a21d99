"""Framer fed whole, byte by byte, in random cuts, with trailing bytes, after gaps."""

import random

from kwire.native.framing import Framer
from tests.kafka.frames import find_request_start, finder, request_frame

FRAMES = [request_frame(1, 4, i, "c", bytes(range(i % 50))) for i in range(20)]
STREAM = b"".join(FRAMES)


def find_request(buf):
    return find_request_start(buf, 1 << 20)


def run(chunks, synced=True):
    framer = Framer(finder(find_request), synced=synced, max_frame=1 << 20)
    out = []
    for chunk in chunks:
        out += [bytes(f) for f in framer.feed(chunk)]
    return out, framer


def test_whole():
    frames, framer = run([STREAM])
    assert frames == [f[4:] for f in FRAMES]
    assert len(framer.buf) == 0


def test_byte_by_byte():
    frames, _ = run([STREAM[i:i + 1] for i in range(len(STREAM))])
    assert frames == [f[4:] for f in FRAMES]


def test_random_cuts():
    rng = random.Random(7)
    for _ in range(50):
        cuts = sorted(rng.sample(range(1, len(STREAM)), 15))
        chunks = [STREAM[a:b] for a, b in zip([0] + cuts, cuts + [len(STREAM)])]
        frames, _ = run(chunks)
        assert frames == [f[4:] for f in FRAMES]


def test_trailing_partial_frame_is_held_not_emitted():
    frames, framer = run([STREAM + FRAMES[0][:7]])
    assert len(frames) == len(FRAMES)
    assert len(framer.buf) == 7


def test_mid_stream_start_resyncs_on_next_request():
    start = len(FRAMES[0]) + 5  # inside the second frame
    frames, framer = run([STREAM[start:]], synced=False)
    assert frames == [f[4:] for f in FRAMES[2:]]
    assert framer.resyncs == 1


def test_gap_then_resync():
    framer = Framer(finder(find_request), synced=True, max_frame=1 << 20)
    first = [bytes(f) for f in framer.feed(STREAM[:len(FRAMES[0]) + 10])]
    framer.gap()
    rest_start = sum(len(f) for f in FRAMES[:3]) - 3
    rest = [bytes(f) for f in framer.feed(STREAM[rest_start:])]
    assert first == [FRAMES[0][4:]]
    assert rest == [f[4:] for f in FRAMES[3:]]


def test_absurd_length_desyncs_instead_of_buffering():
    garbage = b"\x7f\xff\xff\xff" + b"\x00" * 100
    frames, framer = run([garbage + STREAM])
    assert frames == [f[4:] for f in FRAMES]
    assert framer.absurd_lengths >= 1
    assert len(framer.buf) == 0


def test_unsynced_direction_keeps_only_a_short_tail():
    framer = Framer(finder(lambda buf: -1), synced=False, max_frame=1 << 20)
    for _ in range(100):
        framer.feed(b"\x01" * 10000)
    assert len(framer.buf) <= 64
