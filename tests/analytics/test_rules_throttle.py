"""throttle_not_honoured (KIP-219, kwire.analytics.rules): a client that sends on a connection inside the throttle of
an answer its broker sent before throttling.

Real traffic: captures/problems/proxy-faults, where a proxy answers a librdkafka 2.16 consumer's Fetch v16 with
ThrottleTimeMs 300 twenty times (the proxy's own truth events say which answers). librdkafka does not implement
KIP-219 (its INTRODUCTION.md lists it as not supported), and its own debug log shows each next Fetch sent right
after the throttled answer was received: the truth the finding is checked against. The negative case is
captures/problems/java-throttled: the same proxy throttles the Apache Kafka Java client's consumer (kafka-clients
3.9.1, which honours KIP-219) in front of Tansu; its own metrics say it was given the throttles. Neither
librdkafka's mock nor Tansu throttles by itself. The older-version, pipelined and bounds cases are rows made here.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from kwire.analytics import tags as T
from kwire.analytics.analysis import Analysis
from kwire.analytics.rules import MAX_WINDOWS, THROTTLED_AFTER_ANSWER, throttled_after_answer
from tests import problems as P

NAME = "proxy-faults"
MS = 1_000_000


def _rule(doc_findings) -> list[dict]:
    return [f for f in doc_findings if f.get("rule") == "throttle_not_honoured"]


def _client_log(client: str) -> dict:
    """(broker port, correlation id) -> {"sent": s, "received": s} of the client's Fetch exchanges, from its log."""
    out: dict = {}
    for ts, line in P.log_lines(NAME, client, r"(Sent FetchRequest|Received FetchResponse)"):
        m = re.search(r"\[thrd:127\.0\.0\.1:(\d+)/[^\]]*\]: .*(Sent|Received) Fetch.*CorrId (\d+)", line)
        if m:
            out.setdefault((int(m.group(1)), int(m.group(3))), {})[m.group(2).lower()] = ts
    return out


def test_librdkafka_fetching_inside_its_throttle_is_named_as_its_own_log_says():
    throttled = {(e["broker_port"], e["correlation_id"]): e["throttle_ms"] for e in P.of(NAME, "proxy_throttled")}
    assert len(throttled) == 20 and {e["client_id"] for e in P.of(NAME, "proxy_throttled")} == {"kwire-consumer-1"}
    log = _client_log("kwire-consumer-1")
    # the client's own word: after every throttled answer it sent its next Fetch on that connection at once
    for (port, corr), throttle in throttled.items():
        nxt = log[(port, corr + 1)]
        assert log[(port, corr)]["received"] <= nxt["sent"] < log[(port, corr)]["received"] + throttle / 1000
    (found,) = _rule(P.document(NAME)["findings"])
    assert found["side"] == "client" and found["severity"] == "warning"
    assert (found["api"], found["api_version"]) == ("Fetch", 16) and 1 <= found["count"] <= 20
    assert found["software"].endswith("rdkafka-2.16.0") and "kwire-consumer-1" in found["summary"]
    ports = sorted(int(b.rsplit(":", 1)[1]) for b in found["brokers"])
    assert ports == sorted({p for p, _ in throttled})  # every connection the proxy throttled
    for e in found["evidence"]:  # throttled answers and the requests sent inside them, as the client logged them
        assert (int(e["broker"].rsplit(":", 1)[1]), e["correlation_id"]) in log
    answer, early = (int(c) for c in re.findall(r"correlation id (\d+)", found["detail"]))
    # the first instance, in the client's own times (on one of the connections: correlation ids are per connection)
    assert any((p, answer) in throttled and (p, early) in log
               and log[(p, answer)]["received"] <= log[(p, early)]["sent"]
               < log[(p, answer)]["received"] + throttled[(p, answer)] / 1000 for p in ports)
    # beside the broker's side of the same answers
    assert {f["broker"] for f in P.findings(NAME, "throttled")} == set(found["brokers"])


def test_the_java_client_waits_its_throttle_and_is_not_named():
    name = "java-throttled"
    throttled = P.of(name, "proxy_throttled")
    assert len(throttled) == 20 and {e["client_id"] for e in throttled} == {"kwire-java-consumer"}
    (consumed,) = P.of(name, "consumed", "kwire-java-consumer")
    assert consumed["fetch"]["fetch-throttle-time-max"] == 300.0 and consumed["records"] > 0  # it read them
    (found,) = P.findings(name, "throttled")  # the broker's side of the same answers
    assert found["client_id"] == "kwire-java-consumer" and found["count"] == 20 and found["throttle_ms_total"] == 6000
    assert not _rule(P.document(name)["findings"])
    assert not P.findings(name, "client_silenced")  # 300 ms: nothing to be silenced by


@pytest.mark.parametrize("name", ["clean-classic", "dup-write-librdkafka", "java-silenced", "txn-abort", "slow-broker"])
def test_no_throttle_no_finding(name):
    assert not P.findings(name, "throttled") and not _rule(P.document(name)["findings"])


# ---- rows made here: the window, its tolerances, older versions, bounds and merges

CLIENT, BROKER = "10.0.0.1:5000", "10.0.0.2:9092"


def _add(analysis, corr, sent_ms, answered_ms, throttle=0, api="Produce", key=0, version=9):
    ts, answered = sent_ms * MS, answered_ms * MS
    ev = (ts, CLIENT, BROKER, corr, api)
    row = {"ts_ns": ts, "request_ts_ns": ts, "response_ts_ns": answered, "client": CLIENT, "broker": BROKER,
           "client_id": "p", "api_key": key, "api": api, "api_version": version, "correlation_id": corr,
           "status": "paired", "connection_id": 1, "error_codes": [], "latency_ns": answered - ts, "evidence": ev}
    analysis.add(row, [(T.THROTTLE_WINDOW, ts, answered, throttle, version, ev)] if throttle else [])


def _found(analysis) -> list[dict]:
    return _rule(analysis.findings({}, None, None))


def test_a_request_inside_the_throttle_breaks_it_and_one_after_does_not():
    early = Analysis()
    _add(early, 1, 0, 10, throttle=500)
    _add(early, 2, 60, 70)  # 50 ms into a 500 ms throttle
    (f,) = _found(early)
    assert [e["correlation_id"] for e in f["evidence"]] == [1, 2] and f["count"] == 1
    assert "ThrottleTimeMs 500" in f["detail"] and "50.0 ms after it" in f["detail"]
    honoured = Analysis()
    _add(honoured, 1, 0, 10, throttle=500)
    _add(honoured, 2, 511, 520)  # after the throttle
    assert _found(honoured) == []
    waited = Analysis()
    _add(waited, 1, 0, 10, throttle=500)
    _add(waited, 2, 461, 470)  # 451 ms: within the tolerance of the end (a tenth of the throttle, 50 ms)
    assert _found(waited) == []
    short = Analysis()
    _add(short, 1, 0, 10, throttle=500)
    _add(short, 2, 459, 470)  # 449 ms: inside
    assert len(_found(short)) == 1


def test_pipelined_and_older_versions_are_not_counted():
    pipelined = Analysis()
    _add(pipelined, 1, 0, 10, throttle=500)
    _add(pipelined, 2, 5, 600)  # sent before the answer
    _add(pipelined, 3, 10.5, 600)  # within THROTTLE_START_MS of it: may have been written before it was read
    assert _found(pipelined) == []
    old = Analysis()
    _add(old, 1, 0, 510, throttle=500, version=5)  # Produce v5: the broker held the answer back instead
    _add(old, 2, 520, 530)
    assert _found(old) == []
    assert not throttled_after_answer("Produce", 5) and throttled_after_answer("Produce", 6)
    assert not throttled_after_answer("ConsumerGroupHeartbeat", 1)  # the Java client never waits on it


def test_found_whichever_way_the_rows_are_split():
    rows = [(1, 0, 10, 500), (2, 60, 70, 0), (3, 700, 710, 300), (4, 1200, 1210, 0)]
    whole = Analysis()
    for r in rows:
        _add(whole, *r)
    found = _found(whole)
    assert len(found) == 1 and found[0]["count"] == 1
    a, b = Analysis(), Analysis()
    for i, r in enumerate(rows):
        _add(a if i % 2 else b, *r)
    a.merge(b)
    assert _found(a) == found


def test_the_windows_kept_are_bounded_and_the_summary_says_so():
    analysis = Analysis()
    for n in range(MAX_WINDOWS + 5):
        _add(analysis, n, 1000 * n, 1000 * n + 1, throttle=100)
        _add(analysis, 10_000 + n, 1000 * n + 20, 1000 * n + 30)  # 19 ms into each throttle
    (f,) = _found(analysis)
    assert f["count"] == MAX_WINDOWS and "had more" in f["summary"]
    conn = analysis.rules.connections[(CLIENT, BROKER, 1)]
    assert len(conn.windows.items) == MAX_WINDOWS and conn.throttled == MAX_WINDOWS + 5


_SPEC = importlib.util.find_spec("kafka")  # kafka-python, found without importing it
_KAFKA_PYTHON = (Path(_SPEC.submodule_search_locations[0]) / "protocol" / "schemas" / "resources"
                 if _SPEC and _SPEC.submodule_search_locations else None)


@pytest.mark.skipif(_KAFKA_PYTHON is None or not _KAFKA_PYTHON.is_dir(), reason="kafka-python's definitions")
def test_the_versions_agree_with_kafkas_message_definitions():
    """kafka-python ships a copy of Kafka's message definitions: every "Starting in version N, on quota violation,
    brokers send out responses before throttling" comment there is THROTTLED_AFTER_ANSWER's version for the api."""
    said = {}
    for path in _KAFKA_PYTHON.glob("*Response.json"):
        text = " ".join(line.strip().lstrip("/").strip() for line in path.read_text().splitlines())
        m = re.search(r"Starting in version (\d+),? on quota violation,? brokers send out responses before throttling",
                      text)
        if m:
            said[json.loads(re.sub(r"//[^\n]*", "", path.read_text()))["name"][:-len("Response")]] = int(m.group(1))
    assert len(said) >= 30
    assert {api: THROTTLED_AFTER_ANSWER.get(api) for api in said} == said


def test_a_long_throttle_broken_is_not_also_a_silenced_client():
    """A 120 s throttle (client_silenced's range) after which the client sends an ApiVersions at once: the client
    did not wait (throttle_not_honoured), so it is not silenced; a refusal's retry is another story (its layout,
    test_client_silenced)."""
    analysis = Analysis()
    ts, answered = 0, 10 * MS
    ev = (ts, CLIENT, BROKER, 1, "Metadata")
    row = {"ts_ns": ts, "request_ts_ns": ts, "response_ts_ns": answered, "client": CLIENT, "broker": BROKER,
           "client_id": "p", "api_key": 3, "api": "Metadata", "api_version": 12, "correlation_id": 1,
           "status": "paired", "connection_id": 1, "error_codes": [], "latency_ns": answered, "evidence": ev}
    analysis.add(row, [(T.THROTTLED, "p", BROKER, 120_000, ev), (T.SILENCING, "p", 120_000, None, ev, answered, 12),
                       (T.THROTTLE_WINDOW, ts, answered, 120_000, 12, ev)])
    _add(analysis, 2, 200, 210, api="ApiVersions", key=18, version=3)
    other = ("10.0.0.3:6000", BROKER)  # the capture goes on for a minute on another client's connection
    for n in range(60):
        t = (1000 + 1000 * n) * MS
        analysis.add({**row, "client": other[0], "ts_ns": t, "request_ts_ns": t, "response_ts_ns": t + MS,
                      "correlation_id": 100 + n, "client_id": "q", "evidence": (t, other[0], BROKER, 100 + n, "Metadata")})
    found = analysis.findings({}, 0, 61_000 * MS)
    assert [f["rule"] for f in found if f.get("rule") == "throttle_not_honoured"] == ["throttle_not_honoured"]
    assert not [f for f in found if f["kind"] == "client_silenced"]
