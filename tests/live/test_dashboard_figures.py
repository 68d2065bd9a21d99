"""The dashboard's figures, made the way `kwire live` makes them, equal `kwire stats`' on every recording.

The dashboard's side is the ring capture's path: a Pipeline that offloads every exchange (as the
capture process, kwire.live.sniffer), ExchangeParts in small batches, decoded and enriched as
kwire.live.ringfeed does, into a DashboardState (its Window of per-second Aggregators, the retired
one and the one Analysis of the groups and findings). The reference is `kwire stats`: one
Aggregator fed every exchange of kwire.pipeline.analyze_files. Every committed real recording, so
the fast paths of the dashboard (the Window's one Analysis, the retired seconds, the refused
batches) are checked on real traffic; with a window holding the whole capture the whole stats
document must come out equal, with a one-second window the figures shown since the start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kwire.analytics import Aggregator
from kwire.capture.files import open_captures
from kwire.native.exchange_enrich import Enricher
from kwire.native.exchange_build import build_from_parts, exchange_parts
from kwire.live.state import DashboardState
from kwire.live.window import NS
from kwire.pipeline import Pipeline, analyze_files

ROOT = Path(__file__).resolve().parents[2]
RECORDINGS = sorted(str(p) for p in [*ROOT.glob("captures/*.pcap"), *ROOT.glob("captures/*.pcapng"),
                                     *ROOT.glob("captures/problems/*.pcap.gz"),
                                     *(Path(__file__).parent / "data").glob("*.pcap")])
BATCH = 7  # small, so batches end inside seconds and inside connections' bursts


def _stats(path: str) -> Aggregator:
    agg = Aggregator()
    for ex in analyze_files([path]):
        agg.add_exchange(ex)
    return agg


def _dashboard(path: str, window: int) -> tuple[DashboardState, int]:
    """The recording through the live path, snapshots asked each second as the screen would;
    (the finished state, the capture time of its end)."""
    pipeline = Pipeline(offload=lambda raw: True)
    parts: list = []
    for out in pipeline.feed_capture(open_captures([path])):
        parts += [tuple(exchange_parts(raw, owned=True)) for raw in out]
    parts += [tuple(exchange_parts(raw, owned=True)) for raw in pipeline.finish()]
    state = DashboardState("live", path, window=window)
    enrich = Enricher().enrich
    last = 0
    for i in range(0, len(parts), BATCH):
        exchanges = []
        for item in parts[i:i + BATCH]:
            ex = build_from_parts(item)
            enrich(ex)
            exchanges.append(ex)
            last = max(last, ex.response_ts_ns or 0, ex.ts_ns)
        state.add_exchanges(exchanges)
        if last // NS != (state._analysis_key or (None,))[0]:
            state.snapshot(last, None, {})
    state.finished = True
    return state, last


def _since_start(state: DashboardState, now_ns: int) -> Aggregator:
    """Everything the dashboard holds, as one Aggregator (its analysis the Window's)."""
    agg = Aggregator()
    for part in [state.window.retired, *state.window.parts(now_ns // NS)]:
        agg.merge(part)
    agg.analysis = state.window.analysis
    return agg


def test_the_recordings_are_there():
    assert len(RECORDINGS) >= 20


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: Path(p).name)
def test_a_window_holding_the_capture_gives_the_stats_document(path):
    state, now = _dashboard(path, window=600)
    expected = _stats(path).document()
    assert expected["totals"]["exchanges"] > 0
    assert _since_start(state, now).document() == expected
    brokers = {row.broker: row for row in state.snapshot(now, None, {}).brokers}
    assert set(brokers) == set(expected["brokers"])
    for broker, entry in expected["brokers"].items():  # the broker panel's window figures
        row = brokers[broker]
        assert (row.p50_ms, row.p99_ms, row.errors) == (entry["latency_ms"]["p50"], entry["latency_ms"]["p99"],
                                                        entry["failed"])


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: Path(p).name)
def test_a_one_second_window_shows_the_stats_figures_since_the_start(path):
    state, now = _dashboard(path, window=1)
    doc = _stats(path).document()
    snap = state.snapshot(now, None, {})
    assert {row.api: row.requests for row in snap.apis} == {api: e["exchanges"] for api, e in doc["apis"].items()}
    assert dict(snap.errors) == doc["totals"]["errors"]
    assert {row.broker for row in snap.brokers} == set(doc["brokers"])  # every broker since the start
    assert (snap.unanswered, snap.orphans) == (doc["unanswered"]["count"], doc["totals"]["no_request"])
    clients = {k: v["request_bytes"] + v["response_bytes"] for k, v in doc["client_ids"].items()}
    assert dict(snap.clients) == dict(sorted(clients.items(), key=lambda kv: (-kv[1], kv[0]))[:10])
    assert [(f.severity, f.kind, f.summary, f.start) for f in snap.findings] == [
        (f["severity"], f["kind"], f["summary"], f["start"]) for f in doc["findings"]]
    assert sorted((g.group, g.protocol, g.generations) for g in snap.groups) == sorted(
        (group, entry["protocol"] or "?", len(entry["generations"])) for group, entry in doc["groups"].items())
    since = _since_start(state, now).document()
    for key in ("partitions", "share_groups", "client_ids", "brokers", "timeline", "groups", "findings"):
        if key in ("client_ids", "brokers"):  # latencies older than the window are dropped
            for table in (since[key], doc[key]):
                for entry in table.values():
                    entry.pop("latency_ms")
        assert since[key] == doc[key], key
