"""Property tests: a random byte stream cut into random segments (several overlapping cuttings),
reordered and duplicated, comes out byte-identical; with drops and snap-length cuts, the delivered
runs plus gaps account for exactly the stream length and every run holds the original bytes at its
position."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kwire.net.segment import ACK, FIN, SYN
from kwire.tcp.recorder import StreamClosed, StreamData, StreamGap


from tests.tcp.build import EventTable, MASK, c2s, data_of, feed_all, pieces, s2c, seg

SISN = 77


def cuttings(rng, length: int, count: int) -> list[list[tuple[int, int]]]:
    """`count` independent ways to cut [0, length) into (start, end) segments."""
    result = []
    for _ in range(count):
        n_cuts = rng.randrange(0, min(length, 40))
        cuts = sorted(set(rng.randrange(1, length) for _ in range(n_cuts))) if length > 1 else []
        bounds = [0, *cuts, length]
        result.append(list(zip(bounds, bounds[1:])))
    return result


def opening(mode: str, isn: int) -> list:
    if mode == "syn":
        return [c2s(isn, flags=SYN), s2c(SISN, ack=isn + 1, flags=SYN | ACK)]
    if mode == "synack":
        return [s2c(SISN, ack=isn + 1, flags=SYN | ACK)]
    return []


isns = st.one_of(st.integers(0, MASK), st.integers(MASK - 3100, MASK))


@settings(max_examples=300, deadline=None)
@given(stream=st.binary(min_size=1, max_size=3000), isn=isns,
       mode=st.sampled_from(["syn", "synack", "none"]), rng=st.randoms(use_true_random=False))
def test_reordered_and_duplicated_stream_comes_out_identical(stream, isn, mode, rng):
    length = len(stream)
    cuts = cuttings(rng, length, rng.randrange(1, 4))
    parts = list(cuts[0]) + [p for other in cuts[1:] for p in other if rng.random() < 0.5]
    parts += [p for p in parts if rng.random() < 0.2]  # plain duplicates
    rng.shuffle(parts)
    if mode == "none":  # mid-stream start: the first segment seen must be the first of the stream
        first = cuts[0][0]
        parts.remove(first)
        parts.insert(0, first)
    base = isn + 1
    segments = opening(mode, isn)
    covered = bytearray(length + 1)
    prefix = 0
    fin_at = rng.randrange(len(parts) + 1)
    for i, (s, e) in enumerate(parts):
        if i == fin_at:
            segments.append(c2s(base + length, flags=FIN | ACK, ts=i))
        segments.append(c2s(base + s, stream[s:e], ack=SISN + 1, ts=i))
        covered[s:e] = b"\x01" * (e - s)
        while prefix < length and covered[prefix]:
            prefix += 1
        if rng.random() < 0.3:  # a legal ACK: only what the capture has already shown
            segments.append(s2c(SISN + 1, ack=base + prefix, ts=i))
    if fin_at == len(parts):
        segments.append(c2s(base + length, flags=FIN | ACK, ts=len(parts)))
    table = EventTable(max_buffer_per_direction=1 << 20)
    events = feed_all(table, segments) + table.flush(10**9)
    assert data_of(events, 0) == stream
    c = table.counters()
    assert c["gaps"] == 0 and c["conflicting_bytes"] == 0 and c["pre_start_bytes"] == 0
    assert c["connections"] == 1


@settings(max_examples=300, deadline=None)
@given(stream=st.binary(min_size=1, max_size=3000), isn=isns,
       mode=st.sampled_from(["syn", "synack"]), rng=st.randoms(use_true_random=False),
       drop=st.sampled_from([0.0, 0.1, 0.5]), limit=st.sampled_from([1, 50, 500, 1 << 20]))
def test_lossy_stream_accounts_for_every_byte(stream, isn, mode, rng, drop, limit):
    length = len(stream)
    cuts = cuttings(rng, length, rng.randrange(1, 4))
    parts = [p for cut in cuts for p in cut if rng.random() >= drop]
    parts += [p for p in parts if rng.random() < 0.2]
    rng.shuffle(parts)
    base = isn + 1
    segments = opening(mode, isn)
    fin_at = rng.randrange(len(parts) + 1)
    for i, (s, e) in enumerate(parts):
        if i == fin_at:
            segments.append(c2s(base + length, flags=FIN | ACK, ts=i))
        truncated = e - s > 1 and rng.random() < 0.1
        payload = stream[s:rng.randrange(s + 1, e)] if truncated else stream[s:e]
        segments.append(c2s(base + s, payload, ack=SISN + 1, ts=i, truncated=truncated))
        if rng.random() < 0.2:  # the server received some prefix of the stream
            segments.append(s2c(SISN + 1, ack=base + rng.randrange(length + 1), ts=i))
    if fin_at == len(parts):
        segments.append(c2s(base + length, flags=FIN | ACK, ts=len(parts)))
    table = EventTable(max_buffer_per_direction=limit)
    events = feed_all(table, segments) + table.flush(10**9)
    pos = 0
    for kind, value in pieces(events, 0):
        if kind == "data":
            assert value == stream[pos:pos + len(value)]
            pos += len(value)
        else:
            assert value > 0
            pos += value
    assert pos == length
    c = table.counters()
    assert c["conflicting_bytes"] == 0
    assert c["gap_bytes"] == length - len(data_of(events, 0))


@settings(max_examples=100, deadline=None)
@given(stream=st.binary(min_size=1, max_size=2000), rng=st.randoms(use_true_random=False))
def test_events_are_the_same_fed_whole_or_via_run(stream, rng):
    parts = cuttings(rng, len(stream), 1)[0]
    rng.shuffle(parts)
    segments = opening("syn", 5) + [c2s(6 + s, stream[s:e], ts=i) for i, (s, e) in enumerate(parts)]
    a = feed_all(EventTable(), segments)
    b = list(EventTable().run(segments))
    assert [(type(x), getattr(x, "data", None)) for x in a] == \
        [(type(x), getattr(x, "data", None)) for x in b[:len(a)]]
    assert data_of(b, 0) == stream


segment_fields = st.tuples(
    st.integers(0, 4),                                   # which endpoint pair, which way
    st.one_of(st.integers(0, 60), st.integers(MASK - 60, MASK), st.integers(0, MASK)),  # seq
    st.one_of(st.integers(0, 60), st.integers(0, MASK)),  # ack
    st.integers(0, 0x3F),                                # flags
    st.binary(max_size=40),
    st.booleans(),                                       # truncated
    st.integers(0, 50),                                  # time step
)


@settings(max_examples=400, deadline=None)
@given(fields=st.lists(segment_fields, max_size=80), limit=st.sampled_from([1, 16, 1 << 20]),
       max_conns=st.sampled_from([1, 2, 100]), idle=st.sampled_from([10, 10**9]))
def test_garbage_segments_never_raise_and_events_stay_sane(fields, limit, max_conns, idle):
    ends = [(b"\x01\x00\x00\x01", 1), (b"\x01\x00\x00\x02", 2), (b"\x01\x00\x00\x01", 3)]
    pairs = [(ends[0], ends[1]), (ends[1], ends[0]), (ends[0], ends[2]), (ends[2], ends[0]),
             (ends[1], ends[1])]  # a socket connected to itself
    table = EventTable(max_buffer_per_direction=limit, max_connections=max_conns, idle_timeout_ns=idle,
                      linger_ns=20)
    ts = 0
    events = []
    for which, seq, ack, flags, payload, truncated, step in fields:
        ts += step
        src, dst = pairs[which]
        events += table.feed(seg(src, dst, seq, ack, flags, payload, ts, truncated))
    events += table.flush(ts)
    closed, streamed = set(), set()
    for e in events:
        assert e.conn.id not in closed
        streamed.add(e.conn.id)
        if isinstance(e, StreamData):
            assert len(e.data) > 0
        elif isinstance(e, StreamGap):
            assert e.size > 0
        else:
            assert isinstance(e, StreamClosed)
            closed.add(e.conn.id)
    c = table.counters()
    assert len(table) == 0 and c["open_connections"] == 0
    assert closed == streamed  # every connection that carried a byte or a gap was closed
    assert c["connections"] >= len(closed)
    assert c["segments"] == len(fields)
    assert all(v >= 0 for v in c.values())
