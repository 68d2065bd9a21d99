"""kwire.native.kafka_roles: which side is the client when no handshake was captured.

On a real recording that begins inside a busy producer's connection (tests/kafka/data/
midstream-busy-producer.pcap.gz: packets 600,001-610,000 of the many-small benchmark recording,
librdkafka against the mock cluster on port 42271): the broker's side cannot be framed until requests
are pending (its first answers are to requests sent before the capture began), and then the client's
side comes as a burst of more than MAX_EARLY_FRAMES requests. kwire once gave up on the connection
(0 exchanges); it must read it as the `--port` hint does.
"""

from __future__ import annotations

from pathlib import Path

from kwire.native.kafka_headers import parse_request_header
from kwire.native.kafka_roles import MAX_EARLY_FRAMES, RoleDetector
from kwire.pipeline import RunSummary, analyze_files
from kwire.render.jsonl import exchange_json_line

MIDSTREAM = Path(__file__).parents[1] / "kafka" / "data" / "midstream-busy-producer.pcap.gz"


def _lines(**hints) -> tuple[list[bytes], RunSummary]:
    summary = RunSummary()
    lines = [exchange_json_line(ex) for ex in analyze_files([str(MIDSTREAM)], summary=summary, **hints)]
    return lines, summary


def test_a_capture_begun_inside_a_busy_connection_is_read_as_the_port_hint_reads_it():
    found, summary = _lines()
    hinted, _ = _lines(port_hints=[42271])
    assert len(found) > 2500 and summary.paired > 2500
    assert found == hinted


def test_a_lone_requester_is_decided_only_on_requests_of_one_client_id():
    # A Produce v10 request's body as librdkafka sends it: header v2 (client id "rdkafka", no tags),
    # then no transactional id, acks -1, timeout 30000, one topic.
    request = bytes.fromhex("0000000a0000000b0007") + b"rdkafka" + bytes.fromhex("0000ffff0000753002")
    request += bytes([6]) + b"topic" + bytes.fromhex("0200000000010000")
    header = parse_request_header(request)
    assert header.client_id == "rdkafka"
    same = RoleDetector(1 << 20)
    decided = None
    for corr in range(MAX_EARLY_FRAMES + 1):
        body = request[:4] + corr.to_bytes(4, "big") + request[8:]
        decided = same.add(1, corr, b"x" * (len(body) + 4), [body])
    assert decided == 1 and not same.gave_up

    mixed = RoleDetector(1 << 20)
    for corr in range(MAX_EARLY_FRAMES + 1):
        client = b"rdkafka" if corr % 2 else b"kafkard"
        body = request[:4] + corr.to_bytes(4, "big") + request[8:10] + client + request[17:]
        assert parse_request_header(body).client_id == client.decode()
        decided = mixed.add(1, corr, b"x" * (len(body) + 4), [body])
    assert decided is None and mixed.gave_up  # two client ids on one side: no decision on that alone
