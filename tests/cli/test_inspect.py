"""`kwire inspect`: the one-line view, -V, JSON's `errors`, and the selection options (-c, --since,
--until, --host, --partition) with the closing summary, on committed captures and their truth logs."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from kwire.cli.main import cli
from kwire.selection import When, capture_start, parse_when, resolve
from tests import truthlog

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
ZSTD = str(CAPTURES / "produce-consume-zstd.pcap")
NS = 10**9


def run(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1"}, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def json_lines(*args: str) -> list[dict]:
    return [json.loads(line) for line in run("inspect", "--json", *args).stdout.splitlines()]


def first_packet_ns(path: str) -> int:
    """The first record's time, read from the pcap header by hand (independent of kwire's readers)."""
    with open(path, "rb") as f:
        head = f.read(40)
    magic = struct.unpack("<I", head[:4])[0]
    sec, frac = struct.unpack("<II", head[24:32])
    return sec * NS + (frac if magic == 0xA1B23C4D else frac * 1000)


# ---- views ----------------------------------------------------------------------------------------


def test_default_view_is_one_line_per_exchange():
    out = run("inspect", ZSTD).stdout.splitlines()
    truth = truthlog.read(CAPTURES / "produce-consume-zstd.pcap.truth.log")
    sent = [r for r in truth if r.direction == truthlog.SENT]
    assert len(out) == len(sent) == 43  # and no wrapping: one line each
    assert max(len(line) for line in out) > 80
    fetch = [line for line in out if " Fetch v16 " in line]
    assert fetch and all("kwire-produce-consume-zstd[0-3]" in line for line in fetch)
    assert any("10 records" in line and "IsolationLevel=READ_COMMITTED" in line for line in fetch)
    assert sum(line.endswith("UNSUPPORTED_VERSION") for line in out) == 5  # the mock refuses ApiVersions v3
    produce = [line for line in out if " Produce v10 " in line]
    assert len(produce) == 8 and all("Acks=ALL" in line and "records" in line for line in produce)
    assert any("group kwire-group-produce-consume-zstd" in line for line in out)
    assert sum(" no_response" in line for line in out) == 1


def test_verbose_view_and_records():
    tree = run("inspect", "-V", "--api", "Fetch", "-c", "1", ZSTD).stdout
    assert tree.splitlines()[0].startswith("00:01:32.753065 ")
    assert "├── IsolationLevel: 1 (READ_COMMITTED)" in tree and "ErrorCode: 0 (NONE)" in tree
    records = run("inspect", "--records", "--api", "Produce", "-c", "1", ZSTD).stdout
    assert "Key: 'key-zstd-1'" in records and "Timestamp: 1795305689629 (2026-11-22 00:01:29.629)" in records


def test_json_errors_key():
    rows = json_lines(ZSTD)
    assert len(rows) == 43
    for row in rows:
        codes = []
        if row["response"]:
            text = json.dumps(row["response"])
            codes = [int(c) for c in __import__("re").findall(r'"ErrorCode": (-?\d+)', text) if int(c)]
        assert len(row["errors"]) == len(codes)
    failed = [row for row in rows if row["errors"]]
    assert {(row["api"], row["api_version"]) for row in failed} == {("ApiVersions", 3)}
    assert all(row["errors"] == ["UNSUPPORTED_VERSION"] for row in failed)


# ---- selection ------------------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["0", "2"])
def test_count_stops_after_n(jobs):
    whole = run("inspect", "--json", "-j", jobs, ZSTD).stdout.splitlines()
    result = run("inspect", "--json", "-j", jobs, "-c", "5", ZSTD)
    assert result.stdout.splitlines() == whole[:5]
    assert "5 of " in result.stderr and "stopped after -c 5" in result.stderr
    lines = run("inspect", "-c", "3", "--api", "Fetch", ZSTD).stdout.splitlines()
    assert len(lines) == 3 and all(" Fetch v16 " in line for line in lines)


def test_since_and_until_against_the_truth_log():
    start = first_packet_ns(ZSTD)
    assert capture_start([ZSTD]) == start
    truth = truthlog.read(CAPTURES / "produce-consume-zstd.pcap.truth.log")
    sent = [r.ts for r in truth if r.direction == truthlog.SENT]
    # 2 s into the capture falls in the JoinGroup's 3-second wait: far from any request.
    cut = start / NS + 2
    late = sum(ts >= cut for ts in sent)
    assert 0 < late < len(sent)
    assert len(json_lines("--since", "2s", ZSTD)) == late
    assert len(json_lines("--until", "2000ms", ZSTD)) == len(sent) - late
    assert len(json_lines("--since", "1s", "--until", "2s", ZSTD)) == 0
    assert len(json_lines("--since", "00:01:31", ZSTD)) == late  # a time of day, as the lines print it
    assert len(json_lines("--since", "2026-11-22T00:01:31", ZSTD)) == late
    assert len(json_lines("--since", "2026-11-22T01:01:31+01:00", ZSTD)) == late
    assert len(json_lines("--since", f"@{cut}", ZSTD)) == late
    rows = json_lines("--since", "2s", ZSTD)
    assert all(row["ts"] >= cut for row in rows)


def test_parse_when():
    assert parse_when("10s") == When("10s", offset_ns=10 * NS)
    assert parse_when("1.5s").offset_ns == 1_500_000_000
    assert parse_when("250ms").offset_ns == 250_000_000
    assert parse_when("2m").offset_ns == 120 * NS and parse_when("1h").offset_ns == 3600 * NS
    assert parse_when("90").offset_ns == 90 * NS
    assert parse_when("@1.000000001").epoch_ns == NS + 1
    assert parse_when("1970-01-01T00:00:01Z").epoch_ns == NS
    assert parse_when("10:00:05.5").day_ns == (36005 * NS + NS // 2)
    assert resolve(parse_when("00:00:01"), 86400 * NS + 5) == 86401 * NS
    for bad in ("soon", "25:00", "10s ago", "2026-13-01T00:00:00", "@x"):
        with pytest.raises(ValueError):
            parse_when(bad)


def test_bad_times_and_hosts_are_usage_errors():
    assert "not a duration" in run("inspect", "--since", "yesterday", ZSTD, code=2).output
    assert "--host" in run("inspect", "--host", "broker.example", ZSTD, code=2).output


def test_host_matches_client_or_broker():
    rows = json_lines(ZSTD)
    clients = sorted({row["client"] for row in rows})
    one = clients[0]
    assert {row["client"] for row in json_lines("--host", one, ZSTD)} == {one}
    assert len(json_lines("--host", "127.0.0.1", ZSTD)) == 43
    assert len(json_lines("--host", "127.0.0.0/8", ZSTD)) == 43
    broker_port = rows[0]["broker"].rsplit(":", 1)[1]
    assert len(json_lines("--host", f"127.0.0.1:{broker_port}", ZSTD)) == 43
    assert len(json_lines("--host", "[::1]:9092", ZSTD)) == 0
    assert len(json_lines("--host", f"{one},10.0.0.1", ZSTD)) == sum(row["client"] == one for row in rows)


def test_partition_with_and_without_topic():
    rows = json_lines(ZSTD)
    produced = [row for row in rows if row["api"] == "Produce"
                and row["request"]["TopicData"][0]["PartitionData"][0]["Index"] == 2]
    kept = json_lines("--api", "Produce", "--partition", "2", ZSTD)
    assert [r["correlation_id"] for r in kept] == [r["correlation_id"] for r in produced]
    topic = "kwire-produce-consume-zstd"
    assert len(json_lines("--partition", "2", "--topic", topic, ZSTD)) == len(json_lines("--partition", "2", ZSTD))
    assert json_lines("--partition", "2", "--topic", "other", ZSTD) == []
    assert json_lines("--partition", "7", ZSTD) == []


def test_summary_counts_matches_and_says_when_nothing_matched():
    result = run("inspect", "--api", "Fetch", ZSTD)
    assert "kwire: 3 of 43 exchanges matched; " in result.stderr
    result = run("inspect", "--topic", "nope", "--no-summary", ZSTD)
    assert result.stdout == ""
    assert result.stderr.strip() == "kwire: no exchange matched --topic nope (of 43)"
    assert "matched" not in run("inspect", ZSTD).stderr  # no filter: the line as before


def test_live_filters_what_the_dashboard_counts():
    result = CliRunner().invoke(cli, ["live", "--replay", ZSTD, "--speed", "0", "--exit-when-done", "--api", "Fetch"],
                                env={"NO_COLOR": "1", "COLUMNS": "120"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    table = result.stdout.split("requests by api", 1)[1].split("\n\n", 1)[0]
    assert "Fetch" in table and "Produce" not in table and "Metadata" not in table
    assert "--api Fetch" in result.stdout  # the title says what is filtered

