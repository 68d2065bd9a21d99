"""tests/truthlog.py against hand-written lines and against every committed truth log (and, with
tshark installed, against the captures themselves: tshark frames them, kwire is not involved)."""

from __future__ import annotations

import collections
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import truthlog

CAPTURES = Path(__file__).resolve().parent.parent / "captures"
TRUTH_LOGS = sorted(CAPTURES.glob("*.truth.log"))

STDERR_SENT = ("%7|1795304614.358|SEND|kwire-consumer#consumer-2| [thrd:127.0.0.1:42669/bootstrap]: "
               "127.0.0.1:42669/bootstrap: Sent FetchRequest (v16, 193 bytes @ 0, CorrId 9)")
STDERR_RECEIVED = ("%7|1795304614.512|RECV|kwire-consumer#consumer-2| [thrd:127.0.0.1:42669/bootstrap]: "
                   "127.0.0.1:42669/bootstrap: Received FetchResponse (v16, 1429 bytes, CorrId 9, rtt 0.12ms)")


def capture_of(truth_log: Path) -> Path:
    return truth_log.with_name(truth_log.name[: -len(".truth.log")])


# --- lines ----------------------------------------------------------------------------------------


def test_sent_and_received_lines():
    sent, received = truthlog.parse([STDERR_SENT, STDERR_RECEIVED])
    assert (sent.direction, sent.api, sent.api_key, sent.version, sent.size, sent.offset, sent.corr_id) == (
        "sent", "Fetch", 1, 16, 193, 0, 9)
    assert sent.rtt_ms is None and received.rtt_ms == pytest.approx(0.12)
    assert (received.direction, received.size, received.corr_id) == ("received", 1429, 9)
    assert sent.client == "kwire-consumer#consumer-2"
    assert sent.thread == sent.broker == "127.0.0.1:42669/bootstrap"
    assert sent.address == "127.0.0.1:42669" and sent.port == 42669 and sent.node_id is None
    assert sent.ts == pytest.approx(1795304614.358) and sent.line_no == 1 and received.line_no == 2
    [exchange] = truthlog.pair([sent, received])
    assert exchange.request is sent and exchange.response is received


def test_python_logger_format_has_no_timestamp():
    line = ("SEND [rdkafka#producer-1] [thrd:127.0.0.1:41507/2]: 127.0.0.1:41507/2: "
            "Sent ProduceRequest (v10, 140 bytes @ 0, CorrId 3)")
    [record] = truthlog.parse([line])
    assert (record.api, record.node_id, record.address, record.ts) == ("Produce", 2, "127.0.0.1:41507", None)


def test_librdkafka_names_map_to_kafka_names():
    assert truthlog.api_key_of("ApiVersion") == ("ApiVersions", 18)
    assert truthlog.api_key_of("ShareFetch") == ("ShareFetch", 78)
    assert truthlog.api_key_of("ElectLeadersRequest") == ("ElectLeaders", 43)  # old librdkafka table
    assert truthlog.api_key_of("AlterIsr") == ("AlterPartition", 56)
    assert truthlog.api_key_of("Unknown-93?") == ("Unknown-93?", 93)
    assert truthlog.api_key_of("NoSuchApi") == ("NoSuchApi", None)


def test_coordinator_gets_its_node_address_from_other_lines():
    lines = [
        "%7|1.000|SEND|c#consumer-1| [thrd:GroupCoordinator]: GroupCoordinator/2: "
        "Sent JoinGroupRequest (v5, 170 bytes @ 0, CorrId 4)",
        "%7|1.001|CONNECTED|c#consumer-1| [thrd:127.0.0.1:9002/2]: 127.0.0.1:9002/2: Connected (#1)",
    ]
    [record] = truthlog.parse(lines)
    assert (record.thread, record.broker, record.node_id, record.address) == (
        "GroupCoordinator", "GroupCoordinator/2", 2, "127.0.0.1:9002")
    assert truthlog.broker_addresses([record]) == {2: "127.0.0.1:9002"}


def test_renamed_bootstrap_broker_keeps_its_thread_as_connection():
    # librdkafka 2.0 (kcat) renames ".../bootstrap" to ".../1" once Metadata names the node.
    lines = [
        "%7|1.0|CONNECTED|k#consumer-1| [thrd:127.0.0.1:9001/bootstrap]: 127.0.0.1:9001/bootstrap: Connected (#1)",
        "%7|1.1|SEND|k#consumer-1| [thrd:127.0.0.1:9001/bootstrap]: 127.0.0.1:9001/bootstrap: "
        "Sent MetadataRequest (v4, 32 bytes @ 0, CorrId 3)",
        "%7|1.2|SEND|k#consumer-1| [thrd:127.0.0.1:9001/bootstrap]: 127.0.0.1:9001/1: "
        "Sent FetchRequest (v11, 100 bytes @ 0, CorrId 4)",
        "%7|1.3|CONNECTED|k#consumer-1| [thrd:127.0.0.1:9001/bootstrap]: 127.0.0.1:9001/1: Connected (#2)",
        "%7|1.4|SEND|k#consumer-1| [thrd:127.0.0.1:9001/bootstrap]: 127.0.0.1:9001/1: "
        "Sent FetchRequest (v11, 100 bytes @ 0, CorrId 5)",
    ]
    first, second, third = truthlog.parse(lines)
    assert first.connection == second.connection == third.connection
    assert (first.node_id, second.node_id) == (None, 1)
    assert (first.conn, second.conn, third.conn) == (1, 1, 2)


def test_partial_sends_and_old_format_without_offset():
    lines = [
        "%7|1.0|SEND|p#producer-1| [thrd:h:1/1]: h:1/1: Sent partial ProduceRequest (v7, 0+65536/90000 bytes, CorrId 7)",
        "%7|1.1|SEND|p#producer-1| [thrd:h:1/1]: h:1/1: Sent ProduceRequest (v7, 90000 bytes @ 65536, CorrId 7)",
        "%7|1.2|SEND|p#producer-1| [thrd:h:1/1]: h:1/1: Sent ProduceRequest (v3, 500 bytes, CorrId 8)",
    ]
    assert [r.direction for r in truthlog.parse(lines)] == ["sent", "sent"]
    partial, full, old = truthlog.parse(lines, partial=True)
    assert (partial.direction, partial.size, partial.offset) == ("partial", 90000, 0)
    assert (full.size, full.offset) == (90000, 65536)
    assert (old.size, old.offset, old.version) == (500, None, 3)


@pytest.mark.parametrize("line", [
    "",
    "# summary: {}",
    "% Reached end of topic t [0] at offset 10",
    "%7|1.0|APIVERSION|c#p-1| [thrd:h:1/1]: h:1/1: ApiVersionRequest v3 failed due to UNSUPPORTED_VERSION: retrying",
    "%7|1.0|SEND|c#p-1| [thrd:h:1/1]: h:1/1: Sent FetchRequest (v16, lots of bytes, CorrId 9)",
    "%7|x|SEND|c#p-1| garbage",
    "\x00\xff binary \udcff",
])
def test_other_lines_are_skipped(line):
    assert truthlog.parse([line]) == []


def test_unanswered_request_pairs_with_none_and_stray_response_is_dropped():
    lines = [STDERR_SENT, STDERR_RECEIVED.replace("CorrId 9", "CorrId 10")]
    [exchange] = truthlog.pair(truthlog.parse(lines))
    assert exchange.request.corr_id == 9 and exchange.response is None


def test_mock_bootstraps_versions_and_header():
    text = "\n".join([
        '# kwire record_capture: {"scenario": "kcat", "brokers": 1}',
        "%5|1.0|MOCK|p#producer-1| [thrd:app]: Mock cluster enabled: original bootstrap.servers and "
        "security.protocol ignored and replaced with 127.0.0.1:1,127.0.0.1:2",
        "%7|1.0|INIT|p#producer-1| [thrd:app]: librdkafka v2.16.0 (0x21000ff) p#producer-1 initialized (x)",
        '# summary: {"produced": 3}',
    ])
    assert truthlog.mock_bootstraps(text) == ["127.0.0.1:1", "127.0.0.1:2"]
    assert truthlog.librdkafka_versions(text) == {"2.16.0"}
    assert truthlog.header(text) == {"scenario": "kcat", "brokers": 1, "produced": 3}


# --- committed truth logs ---------------------------------------------------------------------------

EXPECTED_APIS = {
    "produce-consume": {"ApiVersions", "Metadata", "Produce", "FindCoordinator", "JoinGroup", "SyncGroup",
                        "Heartbeat", "OffsetFetch", "ListOffsets", "Fetch", "OffsetCommit", "LeaveGroup"},
    "multi-broker": {"Produce", "Fetch", "JoinGroup", "SyncGroup", "OffsetCommit"},
    "share": {"ShareGroupHeartbeat", "ShareFetch", "ShareAcknowledge", "Produce"},
    "kcat": {"Produce", "Fetch", "ListOffsets", "JoinGroup", "SyncGroup", "OffsetCommit"},
}


def test_every_capture_has_a_truth_log_and_is_small():
    captures = sorted(p for p in CAPTURES.iterdir() if p.suffix in (".pcap", ".pcapng"))
    assert len(captures) >= 9
    for capture in captures:
        assert Path(str(capture) + ".truth.log").is_file(), capture
        # small, but for the one bulk capture whose frames span hundreds of segments
        limit = 1_000_000 if capture.name.startswith("bulk-") else 300_000
        assert 0 < capture.stat().st_size < limit, capture


@pytest.mark.parametrize("path", TRUTH_LOGS, ids=lambda p: p.name)
def test_committed_truth_log(path):
    text = path.read_text()
    info = truthlog.header(text)
    records = truthlog.parse(text)
    assert records and info["produced"] == info["messages"]
    assert "2.16.0" in truthlog.librdkafka_versions(text)
    # Every record is known to kwire's api table, and every one has a server address.
    assert all(r.api_key is not None for r in records)
    assert all(r.address is not None for r in records)
    bootstraps = set(truthlog.mock_bootstraps(text))
    assert {r.address for r in records} == bootstraps
    assert len(bootstraps) == info["brokers"]
    # Correlation ids: unique and increasing per connection; every response answers a request.
    by_connection = collections.defaultdict(list)
    for r in records:
        if r.direction == "sent":
            by_connection[r.connection].append(r.corr_id)
    for corr_ids in by_connection.values():
        assert corr_ids == sorted(set(corr_ids))
    exchanges = truthlog.pair(records)
    answered = [x for x in exchanges if x.response is not None]
    assert len(answered) == sum(r.direction == "received" for r in records)
    # Only requests in flight at close() go unanswered (long-poll Fetch, a Metadata refresh).
    unanswered = collections.Counter(x.request.connection for x in exchanges if x.response is None)
    assert all(count <= 2 for count in unanswered.values())
    assert {x.request.api for x in exchanges if x.response is None} <= {"Fetch", "Metadata", "ShareFetch"}
    for x in answered:
        assert (x.response.api, x.response.version) == (x.request.api, x.request.version)
        assert x.response.ts >= x.request.ts
    # The apis the scenario exists for.
    apis = {r.api for r in records}
    expected = set(EXPECTED_APIS.get(info["scenario"], set()))
    if info.get("group_protocol") == "consumer":
        expected = expected - {"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup"} | {"ConsumerGroupHeartbeat"}
    assert expected <= apis, apis


def test_kcat_speaks_older_versions_than_confluent_kafka():
    records = truthlog.read(CAPTURES / "kcat-snappy.pcap.truth.log")
    fetch = {r.version for r in records if r.api == "Fetch" and r.client.startswith("kcat")}
    produce = {r.version for r in records if r.api == "Produce" and r.client.startswith("kcat")}
    assert fetch == {11} and produce == {7}


def test_multi_broker_spreads_produce_and_fetch_over_three_brokers():
    records = truthlog.read(CAPTURES / "multi-broker-3.pcap.truth.log")
    for api in ("Produce", "Fetch"):
        assert len({r.node_id for r in records if r.api == api}) == 3


def test_consumer_protocol_capture_uses_consumer_group_heartbeat():
    apis = {r.api for r in truthlog.read(CAPTURES / "consumer-protocol-lz4.pcap.truth.log")}
    assert "ConsumerGroupHeartbeat" in apis and "JoinGroup" not in apis


# --- the captures themselves, framed by tshark ------------------------------------------------------


def tshark_frames(capture: Path, ports: set[int]) -> dict[str, dict]:
    """Per TCP stream: server port, requests (key, version, corr id, frame size incl. length) and
    responses (corr id, frame size after length and corr id), as tshark's Kafka dissector frames them."""
    argv = ["tshark", "-r", str(capture), "-Y", "kafka", "-T", "fields", "-E", "occurrence=a",
            "-E", "aggregator=;", "-e", "tcp.stream", "-e", "tcp.dstport", "-e", "kafka.len",
            "-e", "kafka.request_key", "-e", "kafka.api_version", "-e", "kafka.correlation_id"]
    for port in sorted(ports):
        argv[3:3] = ["-d", f"tcp.port=={port},kafka"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    streams: dict[str, dict] = collections.defaultdict(lambda: {"port": None, "requests": [], "responses": []})
    for line in out.splitlines():
        stream, dport, lengths, keys, versions, corrs = line.split("\t")
        lengths, corrs = [int(x) for x in lengths.split(";")], [int(x) for x in corrs.split(";")]
        entry = streams[stream]
        if int(dport) in ports:
            entry["port"] = int(dport)
            entry["requests"] += [(int(k), int(v), c, n + 4) for k, v, c, n in
                                  zip(keys.split(";"), versions.split(";"), corrs, lengths)]
        else:
            entry["responses"] += [(c, n - 4) for c, n in zip(corrs, lengths)]
    return streams


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
@pytest.mark.parametrize("path", TRUTH_LOGS, ids=lambda p: p.name)
def test_truth_log_matches_the_wire_as_tshark_frames_it(path):
    records = truthlog.read(path)
    streams = tshark_frames(capture_of(path), truthlog.broker_ports(records))
    connections = collections.defaultdict(lambda: {"requests": [], "responses": []})
    for r in records:
        entry = connections[r.connection]
        entry["port"] = r.port
        if r.direction == "sent":
            entry["requests"].append((r.api_key, r.version, r.corr_id, r.size))
        else:
            entry["responses"].append((r.corr_id, r.size))
    assert len(streams) == len(connections)
    unmatched = set(streams)
    for name, entry in connections.items():
        hits = [s for s in unmatched if streams[s]["port"] == entry["port"]
                and streams[s]["requests"] == entry["requests"]]
        assert hits, f"no TCP stream carries the requests of {name}"
        unmatched.discard(hits[0])
        assert set(entry["responses"]) <= set(streams[hits[0]]["responses"]), name
