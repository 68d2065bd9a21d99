"""Pairing by (connection, correlation id), roles, confirmation, mid-stream joins and gaps."""

from kwire.native.kafka_pairing import NO_REQUEST, NO_RESPONSE, PAIRED
from kwire.tcp.recorder import StreamClosed, StreamData, StreamGap
from kwire.tcp.stream import Connection
from tests.kafka.frames import Tracker, request_frame, response_frame

CLIENT = (b"\x0a\x00\x00\x01", 50000)
BROKER = (b"\x0a\x00\x00\x02", 19093)


def conn(initiator=0, cid=1):
    return Connection(cid, CLIENT, BROKER, initiator, 0)


def feed(tracker, c, chunks):
    out = []
    for direction, ts, data in chunks:
        out += tracker.on_event(StreamData(c, direction, ts, data))
    return out


def test_pairs_by_correlation_id_not_order():
    t = Tracker()
    c = conn()
    out = feed(t, c, [
        (0, 1, request_frame(3, 1, 10) + request_frame(3, 1, 11)),
        (1, 5, response_frame(11, b"b")),
        (1, 7, response_frame(10, b"a")),
    ])
    assert [(x.status, x.correlation_id, x.response_ts_ns) for x in out] == [(PAIRED, 11, 5), (PAIRED, 10, 7)]
    assert out[0].request.header.api_key == 3


def test_unanswered_and_unrequested():
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(3, 1, 1)), (1, 2, response_frame(1)),
                      (0, 3, request_frame(3, 1, 2)), (1, 4, response_frame(99, b"xyz"))])
    assert [x.status for x in out] == [PAIRED]  # corr 99 waits a little for a late request
    closed = t.on_event(StreamClosed(c, 5, "fin"))
    assert [(x.status, x.correlation_id) for x in closed] == [(NO_RESPONSE, 2), (NO_REQUEST, 99)]
    assert closed[1].response_size == 4 + 4 + 3


def test_response_captured_before_its_request_is_paired():
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(3, 1, 1)), (1, 2, response_frame(1)),
                      (1, 5, response_frame(2, b"r")), (0, 3, request_frame(3, 1, 2))])
    assert [(x.status, x.correlation_id, x.request.ts_ns, x.response_ts_ns) for x in out] == [
        (PAIRED, 1, 1, 2), (PAIRED, 2, 3, 5)]


def test_unclaimed_responses_become_no_request_after_a_grace():
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(3, 1, 1)), (1, 2, response_frame(1)), (1, 3, response_frame(50))])
    for i in range(2, 40):
        out += feed(t, c, [(0, 10 * i, request_frame(3, 1, i)), (1, 10 * i + 1, response_frame(i))])
    assert (NO_REQUEST, 50) in [(x.status, x.correlation_id) for x in out]


def test_not_kafka_is_never_reported():
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"), (1, 2, b"HTTP/1.1 200 OK\r\n\r\nhello")])
    out += t.on_event(StreamClosed(c, 3, "fin"))
    assert out == []


def test_mid_stream_join_finds_roles_and_resyncs():
    # Capture starts inside a response (broker direction) and inside a request (client direction).
    t = Tracker()
    c = Connection(1, BROKER, CLIENT, None, 0)  # first segment seen came from the broker: a = broker
    older_response = response_frame(7, b"z" * 100)
    r8, r9 = request_frame(1, 4, 8, "rdkafka", b"q" * 30), request_frame(1, 4, 9, "rdkafka", b"q" * 30)
    out = feed(t, c, [
        (0, 1, older_response[40:]),            # tail of a response whose request was not captured
        (1, 2, r8[10:] + r9),                   # tail of request 8, then request 9 whole
        (0, 3, response_frame(9, b"ok")),
    ])
    assert [(x.status, x.correlation_id) for x in out] == [(PAIRED, 9)]
    assert out[0].client_direction == 1


def test_gap_inside_a_frame_of_known_length_is_followed():
    """Bytes lost inside a response whose length prefix was read: the frame is followed by its length
    through the gap (it comes out cut, its size from the prefix), and the next frame is read in step."""
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(1, 4, 1) + request_frame(1, 4, 2))])
    big = response_frame(1, b"x" * 5000)
    out += feed(t, c, [(1, 2, big[:1000])])
    t.on_event(StreamGap(c, 1, 3, 2000))
    out += feed(t, c, [(1, 4, big[3000:] + response_frame(2, b"y"))])
    assert [(x.status, x.correlation_id) for x in out] == [(PAIRED, 1), (PAIRED, 2)]
    assert out[0].response_size == len(big) and len(out[0].response_body) == 1000 - 4
    assert out[0].response_ts_ns == 4  # it ended in the bytes after the gap
    assert t.finish() == []
    assert t.closed_counters == {"frames": 4, "unparsed_frames": 0, "duplicate_correlation_ids": 0,
                                 "pending_overflow": 0, "dropped_bodies": 0, "gaps": 1, "cut_frames": 1,
                                 "ignored_kafka_like": 0, "ignored_exchanges": 0}


def test_gap_past_the_end_of_a_frame_resyncs_on_pending_response():
    """A gap that swallows a frame's end and the next frame's start: the cut frame comes out at the
    gap, then the framer finds the next start by a pending correlation id; the request whose answer the
    gap took is paired without it."""
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(1, 4, 1) + request_frame(1, 4, 2) + request_frame(1, 4, 3))])
    big = response_frame(1, b"x" * 5000)
    second = response_frame(2, b"y" * 100)
    out += feed(t, c, [(1, 2, big[:1000])])
    out += t.on_event(StreamGap(c, 1, 3, len(big) - 1000 + 20))
    out += feed(t, c, [(1, 4, second[20:] + response_frame(3, b"z"))])
    # 2 was answered (brokers answer in order, and 3's answer came): paired, its answer not captured
    assert [(x.status, x.correlation_id) for x in out] == [(PAIRED, 1), (PAIRED, 2), (PAIRED, 3)]
    assert out[0].response_ts_ns == 3
    assert out[1].response_body is None and out[1].request is not None
    assert t.finish() == []


def test_a_reused_correlation_id_pairs_in_order():
    """Requests that reuse a pending correlation id wait behind it: the broker answers a connection's
    requests in order, so each answer goes to the oldest request still waiting under that id."""
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(3, 1, 5)), (1, 2, response_frame(5)),
                      (0, 3, request_frame(3, 1, 6) + request_frame(3, 1, 6)), (1, 4, response_frame(6))])
    assert [(x.status, x.correlation_id, x.request.ts_ns) for x in out] == [(PAIRED, 5, 1), (PAIRED, 6, 3)]
    rest = t.finish()
    assert [(x.status, x.correlation_id) for x in rest] == [(NO_RESPONSE, 6)]
    assert t.closed_counters["duplicate_correlation_ids"] == 1


def test_ten_thousand_pipelined_requests_on_one_correlation_id_all_pair():
    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, b"".join(request_frame(3, 1, 7, body=bytes([i % 256])) for i in range(10_000)))])
    out += feed(t, c, [(1, 2, b"".join(response_frame(7, bytes([i % 256])) for i in range(10_000)))])
    assert len(out) == 10_000 and all(x.status == PAIRED for x in out)
    # in order: the i-th answer went to the i-th request
    assert all(bytes(x.request.body)[-1] == bytes(x.response_body)[-1] for x in out)
    assert t.finish() == []


def test_acks_0_produce_is_reported_unanswered_at_once_and_not_kept():
    from tests.kafka.frames import produce_request

    t = Tracker()
    c = conn()
    out = feed(t, c, [(0, 1, request_frame(3, 1, 1)), (1, 2, response_frame(1))])
    out += feed(t, c, [(0, 3, produce_request(version, corr=10 + version, acks=0)) for version in (2, 7, 9)])
    assert [(x.status, x.correlation_id) for x in out[1:]] == [(NO_RESPONSE, 12), (NO_RESPONSE, 17), (NO_RESPONSE, 19)]
    out = feed(t, c, [(0, 4, produce_request(9, corr=30, acks=-1)), (1, 5, response_frame(30))])
    assert [(x.status, x.correlation_id) for x in out] == [(PAIRED, 30)]
    stream = t.streams[c.id]
    assert not stream.pairing.pending and stream.pairing.count == 0


def test_pending_bodies_are_bounded_by_bytes():
    from kwire.native.kafka_pairing import Pairing

    pairing = Pairing(conn(), 0, max_bytes=10_000)
    out = []
    from kwire.native.kafka_headers import parse_request_header
    for corr in range(100):
        body = request_frame(3, 1, corr, body=b"x" * 1000)[4:]
        pairing.request(parse_request_header(body), body, corr, out.append)
    kept = [r for r in pairing.pending.values() if not r.dropped]
    assert sum(r.size for r in kept) <= 10_000 and len(kept) >= 8
    assert pairing.dropped_bodies == 100 - len(kept) and pairing.kept_bytes == sum(r.size for r in kept)
    dropped = pairing.pending[0]
    assert dropped.body is None and dropped.dropped
    pairing.response(response_frame(0)[4:], 200, 0, out.append)  # still paired and timed
    assert out[-1].status == PAIRED and out[-1].request is dropped
    assert len(pairing.kept) <= pairing.count + 1


def test_port_hint_without_handshake_sets_roles():
    t = Tracker(port_hints=frozenset({19093}))
    c = Connection(1, BROKER, CLIENT, None, 0)
    out = feed(t, c, [(1, 1, request_frame(18, 0, 1)), (0, 2, response_frame(1, b"\x00\x00"))])
    assert [(x.status, x.client_direction) for x in out] == [(PAIRED, 1)]


def test_byte_by_byte_delivery_pairs_the_same():
    t = Tracker()
    c = conn()
    stream0 = request_frame(3, 1, 1) + request_frame(3, 1, 2)
    stream1 = response_frame(1, b"a") + response_frame(2, b"b")
    chunks = [(0, i, stream0[i:i + 1]) for i in range(len(stream0))]
    chunks += [(1, 100 + i, stream1[i:i + 1]) for i in range(len(stream1))]
    out = feed(t, c, chunks)
    assert [(x.status, x.correlation_id) for x in out] == [(PAIRED, 1), (PAIRED, 2)]
    # latency runs to the segment that completed the response
    assert out[0].response_ts_ns == 100 + len(response_frame(1, b"a")) - 1


def test_undecided_connection_holds_bounded_bytes_on_non_kafka_traffic():
    # No handshake, bytes that never frame as Kafka: what is held stays small, whatever the volume
    # (an unsynced buffer rescanned per segment made this quadratic once).
    from kwire.native.kafka_resync import KEEP_TAIL
    from kwire.native.kafka_connection import IGNORED
    from kwire.native.kafka_roles import UNDECIDED_RAW

    t = Tracker()
    c = Connection(1, CLIENT, BROKER, None, 0)
    for i in range(2000):
        assert t.on_event(StreamData(c, i % 2, i, b"A" * 100 + bytes(i % 7))) == []
    state = t.streams[c.id]
    assert all(len(f.buf) <= KEEP_TAIL for f in state.framers)
    assert state.state == IGNORED or all(len(r) <= UNDECIDED_RAW + 200 for r in state.roles.raw)


def test_a_hinted_connection_counts_as_kafka():
    """A --port hint starts a connection confirmed; it is still counted as a Kafka connection (the
    live dashboard showed 0 Kafka connections with --port)."""
    t = Tracker(port_hints=frozenset({19093}))
    c = conn()
    feed(t, c, [(0, 1, request_frame(3, 1, 1)), (1, 2, response_frame(1))])
    assert t.layer.counters.kafka_connections == 1


def test_states_follow_the_evidence():
    from kwire.native.kafka_connection import CANDIDATE, CONFIRMED, IGNORED, ROLES_UNKNOWN

    t = Tracker()
    c = conn()
    feed(t, c, [(0, 1, request_frame(3, 1, 1))])
    assert t.streams[c.id].state == CANDIDATE  # a request, not answered yet
    feed(t, c, [(1, 2, response_frame(1))])
    assert t.streams[c.id].state == CONFIRMED
    mid = Connection(2, CLIENT, BROKER, None, 0)
    feed(t, mid, [(0, 1, request_frame(3, 1, 7, "rdkafka"))])
    assert t.streams[mid.id].state == ROLES_UNKNOWN
    feed(t, mid, [(1, 2, response_frame(7, b"ok"))])
    assert t.streams[mid.id].state == CONFIRMED and t.streams[mid.id].client_dir == 0
    http = Connection(3, CLIENT, BROKER, 0, 0)  # a handshake was seen: roles known, Kafka not yet
    for i in range(300):
        feed(t, http, [(i % 2, i, b"GET / HTTP/1.1\r\n" * 300)])
    assert t.streams[http.id].state == IGNORED  # over a MiB scanned, nothing Kafka-like
