"""kwire live --metrics scraped by a real Prometheus server (Debian's `prometheus`, started here on a
free port, stopped by PID): replays of real captures give per-api request counts equal to `kwire
stats --json` on the same files and a p99 (histogram_quantile) within one histogram bucket of stats'
exact p99; a flood of 200,000 client ids stays within its cap, the folding counted; the exporter's
text passes `promtool check metrics`, in both formats content negotiation gives."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from bisect import bisect_left

import pytest

from kwire.native.distribution import bucket_bounds
from kwire.live.metric_families import HISTOGRAM_BUCKETS
from tests.metrics.flood import client_id_flood
from tests.metrics.prometheus import MISSING, ROOT, Kwire, Prometheus, free_port, get

pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))

CAPTURES = {"multi": ROOT / "captures" / "multi-broker-3.pcap",
            "slow": ROOT / "captures" / "problems" / "slow-broker.pcap.gz",
            "bulk": ROOT / "captures" / "bulk-fetch.pcap"}
FLOOD = 200_000
FLOOD_CAP = 200  # the default client_id cap (kwire.live.labels.DEFAULT_CAPS)
EDGES = [bucket_bounds(k)[1] / 1e9 for k in HISTOGRAM_BUCKETS]


@pytest.fixture(scope="module")
def scraped(tmp_path_factory):
    """Prometheus scraping one `kwire live --replay ... --no-screen` per capture and one of the flood,
    each finished (its last figures scraped)."""
    tmp = tmp_path_factory.mktemp("prometheus")
    flood = tmp / "flood.pcap"
    client_id_flood(flood, FLOOD)
    runs = dict(CAPTURES, flood=flood)
    targets = {name: f"127.0.0.1:{free_port()}" for name in runs}
    server = Prometheus(tmp, list(targets.values()))
    kwires = {}
    try:
        for name, path in runs.items():
            kwires[name] = Kwire(["live", "--replay", str(path), "--speed", "0", "--metrics", targets[name],
                                  "--no-screen"])
        final_at = {}
        for name, kwire in kwires.items():
            kwire.wait_line("serving the final figures", timeout=300)
            final_at[name] = time.time()
        # every target scraped since its replay ended (a sample stamped after the final line was seen): the
        # latest sample, what an instant query returns, holds its final figures. (Two scrapes in the last 3 s
        # were not enough: under load one of them could predate the end, 1,857 exchanges short.)
        for name, target in targets.items():
            server.wait_for(f'timestamp(kwire_packets_total{{instance="{target}"}})',
                            lambda r, after=final_at[name]: r and r[0][1] > after)
        yield server, targets, kwires
    finally:
        for kwire in kwires.values():
            assert kwire.stop() == 0, kwire.lines[-5:]
        server.stop()


def _stats(path) -> dict:
    out = subprocess.run([sys.executable, "-m", "kwire", "stats", "--json", "--no-summary", str(path)], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_request_counts_per_api_equal_stats(scraped, name):
    server, targets, _ = scraped
    doc = _stats(CAPTURES[name])
    got = {labels["api"]: value for labels, value in
           server.query(f'sum by (api) (kwire_exchanges_total{{instance="{targets[name]}"}})')}
    assert got == {api: float(figures["exchanges"]) for api, figures in doc["apis"].items()}
    errors = {(labels["api"], labels["error"]): value for labels, value in
              server.query(f'sum by (api, error) (kwire_errors_total{{instance="{targets[name]}"}})')}
    assert errors == {(api, error): float(n) for api, figures in doc["apis"].items()
                      for error, n in figures["errors"].items()}
    unanswered = server.query(f'sum(kwire_unanswered_requests_total{{instance="{targets[name]}"}})')
    assert unanswered[0][1] == doc["unanswered"]["count"]


def _bucket(seconds: float) -> int:
    return bisect_left(EDGES, seconds - 1e-12)


@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_p99_within_one_bucket_of_stats(scraped, name):
    server, targets, _ = scraped
    doc = _stats(CAPTURES[name])
    checked = 0
    for api, figures in doc["apis"].items():
        latency = figures["latency_ms"]
        if not latency["count"]:
            continue
        result = server.query(f'histogram_quantile(0.99, sum by (le) (kwire_request_latency_seconds_bucket'
                              f'{{instance="{targets[name]}", api="{api}"}}))')
        count = server.query(f'sum(kwire_request_latency_seconds_count{{instance="{targets[name]}", api="{api}"}})')
        assert count[0][1] == latency["count"], api
        p99 = result[0][1]
        assert abs(_bucket(p99) - _bucket(latency["p99"] / 1000)) <= 1, (api, p99, latency["p99"])
        checked += 1
    assert checked >= 3


def test_flood_of_client_ids_stays_within_its_cap(scraped):
    server, targets, kwires = scraped
    target = targets["flood"]
    ids = server.query(f'count(count by (client_id) (kwire_exchanges_total{{instance="{target}"}}))')
    assert ids[0][1] == FLOOD_CAP + 1  # the kept ones and "other"
    other = server.query(f'sum(kwire_exchanges_total{{instance="{target}", client_id="other"}})')
    assert other[0][1] == FLOOD - FLOOD_CAP
    folds = server.query(f'kwire_label_folds_total{{instance="{target}", label="client_id"}}')
    assert folds[0][1] == FLOOD - FLOOD_CAP
    total = server.query(f'sum(kwire_exchanges_total{{instance="{target}"}})')
    assert total[0][1] == FLOOD
    # the scrape is as big as the multi-broker capture's, give or take: bounded by the caps, not the flood
    series = server.query(f'scrape_samples_scraped{{instance="{target}"}}')
    assert series[0][1] < 2000


def test_exporter_text_passes_promtool_in_both_formats(scraped):
    _, targets, _ = scraped
    for name in ("multi", "slow", "flood"):
        url = f"http://{targets[name]}/metrics"
        kind, text = get(url)
        assert kind.startswith("text/plain") and "version=0.0.4" in kind
        assert "# EOF" not in text and "kwire_exchanges_total{" in text
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        assert check.returncode == 0 and not check.stdout.strip() and not check.stderr.strip(), check
        kind, text = get(url, accept="application/openmetrics-text; version=1.0.0; charset=utf-8")
        assert kind.startswith("application/openmetrics-text")
        assert text.endswith("# EOF\n") and "kwire_request_latency_seconds_bucket{" in text


def test_service_stops_on_a_signal_with_its_summary(scraped):
    _, _, kwires = scraped
    kwire = kwires["multi"]
    assert any("metrics on http://127.0.0.1:" in line for line in kwire.lines)
    assert kwire.process.poll() is None  # a replay keeps serving until interrupted
    assert kwire.stop() == 0
    assert any(line.startswith("kwire: live ") and " exchanges, " in line for line in kwire.lines)
