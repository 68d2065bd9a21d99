"""kwire.live.metrics_state against kwire stats' Aggregator on real captures (the api-level sums of the
exporter's counts are the `apis` figures of the stats document), the label caps, and memory that
does not grow with a flood of client ids."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from kwire.analytics import Aggregator, exchange_row
from kwire.native.distribution import histogram
from kwire.analytics.observe import observations
from kwire.live.labels import OTHER, LabelCaps, parse_cap, ranked
from kwire.live.metrics_state import CELL, MeteredAggregator, MetricsState
from kwire.pipeline import analyze_files

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ["multi-broker-3.pcap", "share-consumer.pcap", "bulk-fetch.pcap", "problems/slow-broker.pcap.gz",
            "problems/error-burst.pcap.gz", "problems/unanswered.pcap.gz"]


def _exchanges(name):
    return list(analyze_files([str(ROOT / "captures" / name)]))


@pytest.mark.parametrize("name", CAPTURES)
def test_api_sums_are_the_stats_figures(name):
    agg, state = Aggregator(), MetricsState(LabelCaps())
    for ex in _exchanges(name):
        agg.add_exchange(ex)
        state.add(exchange_row(ex), observations(ex))
    doc = agg.document()
    per_api: dict[str, list[int]] = {}
    for (api, _, _, _), cell in state.exchanges.items():
        have = per_api.setdefault(api, [0] * len(CELL))
        for i, n in enumerate(cell):
            have[i] += n
    assert set(per_api) == set(doc["apis"])
    for api, figures in doc["apis"].items():
        got = dict(zip(CELL, per_api[api]))
        assert got == {"exchanges": figures["exchanges"], "failed": figures["failed"],
                       "no_response": figures["no_response"], "no_request": figures["no_request"],
                       "decode_errors": figures["decode_errors"], "request_bytes": figures["request_bytes"],
                       "response_bytes": figures["response_bytes"]}, api
        errors = {error: n for (a, error), n in state.errors.items() if a == api}
        assert errors == figures["errors"]
    # latency buckets: the stats histogram of each api, summed over brokers
    merged = agg.by_api_version
    for api in doc["apis"]:
        served: dict[int, int] = {}
        waits: dict[int, int] = {}
        for (a, _), cell in state.latency.items():
            if a == api:
                for k, n in cell[0].items():
                    served[k] = served.get(k, 0) + n
                for k, n in cell[2].items():
                    waits[k] = waits.get(k, 0) + n
        dist: dict[int, int] = {}
        wait_dist: dict[int, int] = {}
        for (a, _), figures in merged.items():
            if a == api:
                for v, n in figures.latency.items():
                    dist[v] = dist.get(v, 0) + n
                for v, n in figures.waits.items():
                    wait_dist[v] = wait_dist.get(v, 0) + n
        assert served == histogram(dist), api
        assert waits == histogram(wait_dist), api


def test_metered_aggregator_merges_to_the_whole():
    exchanges = _exchanges("multi-broker-3.pcap")
    whole = MeteredAggregator()
    parts = [MeteredAggregator(), MeteredAggregator(), MeteredAggregator()]
    for i, ex in enumerate(exchanges):
        whole.add_exchange(ex)
        parts[i % 3].add_exchange(ex)
    merged = parts[2].merge(parts[0]).merge(parts[1])
    assert merged.metrics.exchanges == whole.metrics.exchanges
    assert merged.metrics.latency == whole.metrics.latency
    assert merged.metrics.errors == whole.metrics.errors
    assert merged.document() == whole.document()


def _row(client_id: str, broker: str = "10.0.0.1:9092") -> dict:
    return {"api": "Metadata", "api_version": 12, "client_id": client_id, "broker": broker, "failed": False,
            "status": "paired", "request_error": None, "response_error": None, "request_bytes": 40,
            "response_bytes": 80, "error_codes": [], "latency_ns": 250_000, "wait": False}


def test_caps_fold_into_other_and_count():
    state = MetricsState(LabelCaps({"client_id": 3}))
    for i in range(10):
        state.add(_row(f"c{i}"))
    state.add(_row("c1"))
    clients = {key[2]: cell[0] for key, cell in state.exchanges.items()}
    assert clients == {"c0": 1, "c1": 2, "c2": 1, OTHER: 7}
    assert state.caps.folds["client_id"] == 7


def test_stats_keep_the_busiest():
    state = MetricsState()
    for i in range(10):
        for _ in range(i + 1):
            state.add(_row(f"c{i}"))
    caps = LabelCaps({"client_id": 2}, sticky=False)
    folded = state.folded(caps)
    clients = {key[2]: cell[0] for key, cell in folded.exchanges.items()}
    assert clients == {"c9": 10, "c8": 9, OTHER: sum(range(1, 9))}
    assert caps.folds["client_id"] == sum(range(1, 9))
    assert ranked({"b": 1, "a": 1, "c": 5}, 2) == {"c", "a"}


def _retained(n: int) -> int:
    tracemalloc.start()
    state = MetricsState(LabelCaps())
    before = tracemalloc.get_traced_memory()[0]
    for i in range(n):
        state.add(_row(f"flood-{i}", broker=f"10.0.{i % 250}.{i // 250 % 250}:9092"))
    size = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return size


def test_memory_flat_under_a_flood_of_client_ids_and_brokers():
    small, large = _retained(20_000), _retained(200_000)
    assert large - small < 64 << 10, (small, large)


def test_parse_cap():
    assert parse_cap("client_id=500") == ("client_id", 500)
    for bad in ("client_id", "nope=3", "topic=x", "group=0"):
        with pytest.raises(ValueError):
            parse_cap(bad)
