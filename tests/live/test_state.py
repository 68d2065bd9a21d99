"""kwire.live.state and kwire.live.window: the dashboard's figures are kwire stats' figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.analytics import Aggregator, exchange_row, partition_rows, topic_names
from kwire.capture.files import read_captures
from kwire.live.report import ReportedPipeline, pipeline_report, requests_in_flight
from kwire.live.state import DashboardState
from kwire.live.window import NS, Window
from kwire.native.kafka_connection import CONFIRMED
from kwire.pipeline import Pipeline, analyze_files

MIXED = str(Path(__file__).parent / "data" / "mixed.pcap")


def _run(path: str, window: int = 10, kind: str = "replay"):
    """Every packet of `path` through a Pipeline into a DashboardState, finished."""
    state = DashboardState(kind, path, window=window)
    pipeline = Pipeline()
    packets = list(read_captures([path]))
    for packet in packets:
        state.add_packets([packet])
        exchanges = pipeline.feed(packet)
        if exchanges:
            state.add_exchanges(exchanges)
    state.add_exchanges(pipeline.finish())
    state.finished = True
    return state, pipeline, packets


@pytest.fixture(scope="module")
def stats_document():
    agg = Aggregator()
    for ex in analyze_files([MIXED]):
        agg.add_exchange(ex)
    return agg.document()


@pytest.fixture(scope="module")
def finished():
    return _run(MIXED)


def test_totals_per_api_match_kwire_stats(finished, stats_document):
    state, pipeline, packets = finished
    snap = state.snapshot(packets[-1].ts_ns, pipeline, {"packets": len(packets)})
    assert {row.api: row.requests for row in snap.apis} == {
        api: entry["exchanges"] for api, entry in stats_document["apis"].items()}
    assert {"Produce", "Fetch", "ShareFetch", "ShareAcknowledge"} <= {row.api for row in snap.apis}
    assert snap.exchanges == stats_document["totals"]["exchanges"]


def test_percentiles_over_a_window_holding_everything_match_kwire_stats(finished, stats_document):
    state, pipeline, packets = finished
    snap = state.snapshot(packets[-1].ts_ns, pipeline, {})
    for row in snap.apis:
        latency = stats_document["apis"][row.api]["latency_ms"]
        assert (row.p50_ms, row.p99_ms, row.max_ms) == (latency["p50"], latency["p99"], latency["max"]), row.api
    assert packets[-1].ts_ns - packets[0].ts_ns < 9 * NS  # the whole capture is in the 10 s window
    span = max(1.0, (packets[-1].ts_ns - state.first_ns) / 1e9)
    for row in snap.apis:
        assert row.rate == pytest.approx(stats_document["apis"][row.api]["exchanges"] / span)


def test_errors_clients_unanswered_share_and_lag_match_kwire_stats(finished, stats_document):
    state, pipeline, packets = finished
    snap = state.snapshot(packets[-1].ts_ns, pipeline, {})
    assert dict(snap.errors) == stats_document["totals"]["errors"]
    expected_clients = {k: v["request_bytes"] + v["response_bytes"] for k, v in stats_document["client_ids"].items()}
    assert dict(snap.clients) == dict(sorted(expected_clients.items(), key=lambda kv: -kv[1])[:10])
    assert snap.unanswered == stats_document["unanswered"]["count"] == 4
    assert snap.orphans == stats_document["totals"]["no_request"]
    groups = stats_document["share_groups"]
    assert {r.group: (r.fetches, r.acquired, r.redelivered) for r in snap.share} == {
        g: (v["share_fetches"], v["acquired"], v["redelivered"]) for g, v in groups.items()}
    assert sum(r.acquired for r in snap.share) > 0
    lag = {(t, int(p)): v["lag_last"] for t, parts in stats_document["partitions"].items()
           for p, v in parts.items() if v["lag_samples"]}
    assert lag and {(r.topic, r.partition): r.lag for r in snap.lag} == lag
    topics = {}
    for t, parts in stats_document["partitions"].items():
        topics[t] = sum(v["fetch_bytes"] + v["produce_bytes"] + v["share_bytes"] for v in parts.values())
    assert dict(snap.topics) == {t: n for t, n in topics.items() if n}


def test_a_short_window_keeps_totals_and_measures_only_recent_seconds(stats_document):
    state, pipeline, packets = _run(MIXED, window=1)
    now = packets[-1].ts_ns
    snap = state.snapshot(now, pipeline, {})
    assert {row.api: row.requests for row in snap.apis} == {
        api: entry["exchanges"] for api, entry in stats_document["apis"].items()}
    assert dict(snap.errors) == stats_document["totals"]["errors"]
    # The window: exchanges that completed in the last second, as one Aggregator sees them.
    recent = Aggregator()
    for ex in analyze_files([MIXED]):
        row = exchange_row(ex)
        if (row["response_ts_ns"] or row["ts_ns"]) // NS >= now // NS:
            recent.add(row, partition_rows(ex), topic_names(ex))
    expected = recent.document()["apis"]
    for row in snap.apis:
        if row.api in expected:
            assert row.p99_ms == expected[row.api]["latency_ms"]["p99"]
            assert row.rate * state._span(now) == pytest.approx(expected[row.api]["exchanges"])
        else:
            assert row.rate == 0 and row.p99_ms is None
    # Latency distributions older than the window are gone.
    assert not state.window.retired.total.latency
    assert all(not f.latency for f in state.window.retired.by_api_version.values())


def test_in_flight_counts_pending_requests_until_the_end(stats_document):
    state = DashboardState("replay", MIXED)
    pipeline = Pipeline()
    packets = list(read_captures([MIXED]))
    for packet in packets:
        exchanges = pipeline.feed(packet)
        if exchanges:
            state.add_exchanges(exchanges)
    pending = sum(len(s.pairing.pending) for s in pipeline.kafka.streams.values() if s.state == CONFIRMED)
    snap = state.snapshot(packets[-1].ts_ns, pipeline, {})
    assert snap.in_flight == pending > 0
    assert snap.oldest_in_flight_ms is not None and snap.oldest_in_flight_ms >= 0
    state.add_exchanges(pipeline.finish())
    snap = state.snapshot(packets[-1].ts_ns, pipeline, {})
    assert snap.in_flight == 0
    assert snap.unanswered == stats_document["unanswered"]["count"]


def test_sparkline_history_is_per_second_per_api(finished):
    state, pipeline, packets = finished
    now = packets[-1].ts_ns
    snap = state.snapshot(now, pipeline, {})
    produce = next(r for r in snap.apis if r.api == "Produce")
    assert len(produce.history) == state.window.history
    counted = [v for v in produce.history if v is not None]
    assert sum(counted) == produce.requests
    # Seconds before the first packet are blank, not zero.
    first_second = packets[0].ts_ns // NS
    blank = (now // NS) - first_second
    assert produce.history[: state.window.history - blank - 1] == [None] * (state.window.history - blank - 1)


def test_notes_say_what_is_going_on():
    state = DashboardState("live", "lo (tcp)")
    assert any("waiting for packets" in n for n in state.snapshot(10 * NS, None, {"packets": 0}).notes)
    assert any("no Kafka seen yet" in n for n in state.snapshot(10 * NS, None, {"packets": 12}).notes)
    notes = state.snapshot(10 * NS, None, {"packets": 12, "queue_drops": 5, "kernel_drops": 2}).notes
    assert any(n.startswith("dropping packets: 7") for n in notes)
    state.error = "capture stopped: network is down"
    assert state.snapshot(10 * NS, None, {}).notes[0] == "capture stopped: network is down"
    replay = DashboardState("replay", "x.pcap")
    replay.finished = True
    notes = replay.snapshot(10 * NS, None, {}).notes
    assert any(n.startswith("replay finished") for n in notes)
    assert any("no Kafka exchanges found" in n for n in notes)


def _row(done_s: int, api: str = "Produce", latency_ns: int = 1000) -> dict:
    ts = done_s * NS
    return {"ts_ns": ts - latency_ns, "request_ts_ns": ts - latency_ns, "response_ts_ns": ts, "client": "c:1",
            "broker": "b:2", "client_id": "cid", "api_key": 0, "api": api, "api_version": 9,
            "correlation_id": done_s, "status": "paired", "unanswered": None, "latency_ns": latency_ns,
            "latency_ms": latency_ns / 1e6, "request_bytes": 10, "response_bytes": 20, "error_codes": [],
            "failed": False, "request_outcome": "decoded", "response_outcome": "decoded", "request_error": None,
            "response_error": None, "group_id": None}


def test_window_memory_is_bounded_over_a_long_session():
    window = Window(seconds=5, history=20)
    for second in range(1000, 3000):
        window.add(_row(second, latency_ns=second))
    assert len(window.live) <= 5
    assert len(window.past) <= 20
    assert not window.retired.total.latency
    assert window.retired.total.exchanges + sum(b.agg.total.exchanges for b in window.live.values()) == 2000
    recent = window.recent(2999)
    assert recent.total.exchanges == 5


def test_window_counts_a_late_exchange_in_its_first_second():
    window = Window(seconds=3, history=10)
    window.add(_row(100))
    window.add(_row(50))  # completed long before the window: counted in its first second
    assert sorted(window.live) == [98, 100]
    assert window.recent(100).total.exchanges == 2


def test_window_series_has_exchanges_and_p99_per_second():
    window = Window(seconds=3, history=6)
    for second, latencies in ((10, [1000, 2000]), (12, [5000]), (14, [7000, 8000, 9000])):
        for latency in latencies:
            window.add(_row(second, latency_ns=latency))
    seconds, series = window.series(14, 6)
    assert seconds == [9, 10, 11, 12, 13, 14]
    assert series["Produce"] == [(0, None), (2, 2000), (0, None), (1, 5000), (0, None), (3, 9000)]


MULTI = str(Path(__file__).resolve().parents[2] / "captures" / "multi-broker-3.pcap")


def test_broker_rows_are_kwire_stats_brokers_over_the_window():
    """Three brokers: with a window holding the whole capture, each row's figures are the stats
    document's for that broker; with a one-second window every broker is still listed."""
    agg = Aggregator()
    for ex in analyze_files([MULTI]):
        agg.add_exchange(ex)
    doc = agg.document()["brokers"]
    assert len(doc) == 3
    state, pipeline, packets = _run(MULTI, window=600)
    now = packets[-1].ts_ns
    snap = state.snapshot(now, pipeline, {})
    assert {row.broker for row in snap.brokers} == set(doc)
    for row in snap.brokers:
        expected = doc[row.broker]
        assert (row.p50_ms, row.p99_ms) == (expected["latency_ms"]["p50"], expected["latency_ms"]["p99"])
        assert row.errors == expected["failed"]
        assert row.bytes == expected["request_bytes"] + expected["response_bytes"]
        assert row.rate * state._span(now) == pytest.approx(expected["exchanges"])
        assert row.in_flight == 0  # the pipeline is finished
    assert [row.rate for row in snap.brokers] == sorted((row.rate for row in snap.brokers), reverse=True)
    short, pipeline, packets = _run(MULTI, window=1)
    snap = short.snapshot(packets[-1].ts_ns + 5 * NS, pipeline, {})  # the window is past the last exchange
    assert {row.broker for row in snap.brokers} == set(doc)
    assert all(row.rate == 0 and row.p99_ms is None for row in snap.brokers)


def _in_flight(pipeline) -> tuple[int, int | None]:
    """Requests waiting on confirmed connections and the oldest one's time, every pending request looked at."""
    waiting = [request for stream in pipeline.kafka.streams.values() if stream.state == CONFIRMED
               for request in stream.pairing.pending.values()]
    return len(waiting), min((request.ts_ns for request in waiting), default=None)


def test_requests_in_flight_per_broker_add_up_to_the_pipelines_count():
    pipeline = Pipeline()
    seen = []
    for packet in read_captures([MULTI]):
        pipeline.feed(packet)
        count, oldest, by_broker = requests_in_flight(pipeline)
        assert (count, oldest) == _in_flight(pipeline)  # an independent walk
        assert sum(by_broker.values()) == count
        reported = requests_in_flight(ReportedPipeline(pipeline_report(pipeline)))
        assert reported == (count, oldest, by_broker)  # the capture process's report says the same
        seen.append(by_broker)
    waiting = {broker for by_broker in seen for broker in by_broker}
    assert len(waiting) >= 2 and waiting <= {ex.broker for ex in analyze_files([MULTI])}


@pytest.mark.parametrize("name", ["end-to-end", "end-to-end-commits"])
def test_end_to_end_panels_say_what_kwire_stats_says(name):
    """Issue 47: the end-to-end panels' rows are the stats document's end_to_end figures of the same capture:
    p50/p99/max per topic and consumer, and per consumer (a group's commits) the largest latest and largest
    lag in time over its partitions."""
    from tests import problems as P

    path = str(P.capture(name))
    state, pipeline, packets = _run(path)
    snap = state.snapshot(packets[-1].ts_ns, pipeline, {})
    section = P.document(name)["end_to_end"]
    assert section["consumers"] and len(snap.end_to_end) == len(section["consumers"])
    shown = {(r.topic, r.consumer): (r.deliveries, r.p50_ms, r.p99_ms, r.max_ms) for r in snap.end_to_end}
    for row in section["consumers"]:
        latency = row["latency_ms"]
        assert shown[(row["topic"], row["consumer"])] == (row["deliveries"], latency["p50"], latency["p99"],
                                                         latency["max"])
    assert [r.max_ms for r in snap.end_to_end] == sorted((r.max_ms for r in snap.end_to_end), reverse=True)
    lags = {(r.kind, r.name): (r.latest_ms, r.max_ms) for r in snap.time_lag}
    for row in section["consumers"]:
        assert lags[("fetch", row["consumer"])][1] == row["time_lag_max_ms"]
    for row in section["partitions"]:
        assert lags[("fetch", row["consumer"])][0] >= row["time_lag_ms"]["last"]
    assert {name for kind, name in lags if kind == "commits"} == {row["group"] for row in section["commits"]}
    for row in section["commits"]:
        assert lags[("commits", row["group"])] == (row["time_lag_ms"]["last"], row["time_lag_ms"]["max"])
