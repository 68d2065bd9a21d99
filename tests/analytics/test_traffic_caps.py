"""The brokers' latency history (what slow_broker reads) within its cap (issue 49; tests/hostile3/changes.py).

A capture naming 100,000 brokers kept a latency history for each (741 MB): now the CAPS["broker_latency"]
smallest are kept, the others folded into one history that still counts in the median of all brokers; the
document's `caps` says so, and any split of the traffic merges to the same state and findings.
"""

from __future__ import annotations

import random

import pytest

from kwire.analytics import Aggregator
from kwire.native import caps
from kwire.model import PAIRED, Exchange
from kwire.pipeline import analyze_files
from tests.hostile3 import changes as gen

NS = 1_000_000_000
CAP = 16


@pytest.fixture
def small_cap(monkeypatch):
    monkeypatch.setitem(caps.CAPS, "broker_latency", CAP)


def _metadata(broker: str, connection: int, corr: int, t: int, latency_ns: int) -> Exchange:
    return Exchange(connection_id=connection, client=f"10.0.0.1:{40000 + connection}", broker=broker, status=PAIRED,
                    correlation_id=corr, api_key=3, api="Metadata", api_version=12, client_id="c", request_ts_ns=t,
                    response_ts_ns=t + latency_ns, request_size=40, response_size=400, request={"Topics": []},
                    response={"Brokers": [], "Topics": []})


def _exchanges() -> list[Exchange]:
    """300 brokers answering in 1 ms, but the first (10.9.0.0) answering in 500 ms from 20 s to 24 s."""
    out, corr = [], 0
    for i in range(300):
        broker = f"10.9.{i // 256}.{i % 256}:9092"
        for k in range(10):
            corr += 1
            out.append(_metadata(broker, i, corr, (1 + 6 * k) * NS + i * 1000, 1_000_000))
        if i == 0:
            for k in range(10):
                corr += 1
                out.append(_metadata(broker, i, corr, 20 * NS + k * 300_000_000, 500_000_000))
    return sorted(out, key=lambda ex: ex.request_ts_ns)


def _aggregate(exchanges, split: int = 1) -> Aggregator:
    parts = [Aggregator() for _ in range(split)]
    for i, ex in enumerate(exchanges):
        parts[i % split].add_exchange(ex)
    for part in parts[1:]:
        parts[0].merge(part)
    return parts[0]


def test_the_brokers_latency_is_kept_for_the_cap_and_the_rest_folded(small_cap):
    agg = _aggregate(_exchanges())
    latency = agg.analysis.traffic.latency
    assert len(latency.rows) == CAP and latency.folded
    assert agg.document()["caps"]["broker_latency"] == {"cap": CAP, "folded": True}
    (slow,) = [f for f in agg.document()["findings"] if f["kind"] == "slow_broker"]
    assert slow["broker"] == "10.9.0.0:9092" and slow["p50_ms"] >= 400 and slow["baseline_p50_ms"] < 2


@pytest.mark.parametrize("split,seed", [(2, 1), (3, 2)])
def test_the_folded_latency_merges_exactly(small_cap, split, seed):
    exchanges = _exchanges()
    whole = _aggregate(exchanges)
    random.Random(seed).shuffle(exchanges)
    parts = _aggregate(exchanges, split)
    assert set(parts.analysis.traffic.latency.rows) == set(whole.analysis.traffic.latency.rows)
    assert parts.document()["findings"] == whole.document()["findings"]


def test_many_brokers_keep_a_bounded_state(tmp_path, small_cap):
    path = tmp_path / "brokers.pcap.gz"
    gen.many_brokers(path, 1)  # 1,000 brokers
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    assert len(agg.analysis.traffic.latency) == CAP + 1  # the kept brokers and the folded row
    doc = agg.document()
    assert doc["totals"]["exchanges"] == 1_000 and doc["caps"]["broker_latency"]["folded"]
