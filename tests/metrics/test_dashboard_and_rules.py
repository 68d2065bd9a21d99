"""docs/grafana/kwire.json and docs/prometheus/: every query of the dashboard and every alerting rule
names families kwire's exporter serves (read from what the exporter writes for a real capture, with
the capture health a live ring capture reports), and names at least one; promtool accepts the rules
and the scrape config; the rules' finding kinds are kinds kwire's finders make."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kwire.live.labels import LabelCaps
from kwire.live.metric_families import families
from kwire.live.metrics_state import MetricsState
from kwire.live.state import DashboardState
from kwire.pipeline import analyze_files

from tests.metrics.prometheus import MISSING

ROOT = Path(__file__).resolve().parents[2]
needs_promtool = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
DASHBOARD = ROOT / "docs" / "grafana" / "kwire.json"
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
LIVE_ONLY = {"kwire_kernel_drops_total", "kwire_figures_lag_max_seconds"}  # a replay has no kernel, no ring


def _served_names(queue_holds: str = "exchanges") -> set[str]:
    """What the exporter serves for a real capture with the health a live ring capture reports (its queue holds
    exchanges), or, `queue_holds` "packets", a replay's (its queue holds packets)."""
    state = DashboardState("live", "test", metrics=MetricsState(LabelCaps()))
    state.add_exchanges(list(analyze_files([str(ROOT / "captures" / "share-consumer.pcap")])))
    health = {"packets": 10, "bytes": 1000, "kernel_drops": 0, "queue_drops": 0, "queue_holds": queue_holds,
              "truncated": 0, "figures_lag_max_s": 0.1}
    if queue_holds == "packets":  # a replay (kwire.live.sources): no kernel to drop packets, no ring's lag
        health.update(kernel_drops=None, figures_lag_max_s=None)
    report = {"gaps": 0, "gap_bytes": 0, "connections": 1, "kafka_connections": 1, "in_flight": 0}

    class Fixed:
        def collect(self):
            return families(state.metrics_view(health, report))

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Fixed())
    names = set()
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


def _queries(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "definition") and isinstance(value, str):
                yield value
            elif key == "query" and isinstance(value, str) and "(" in value:
                yield value
            else:
                yield from _queries(value)
    elif isinstance(node, list):
        for item in node:
            yield from _queries(item)


def test_every_query_names_served_families():
    ring, replay = _served_names(), _served_names("packets")
    assert "kwire_request_latency_seconds_bucket" in ring and "kwire_kernel_drops_total" in ring
    assert "kwire_queue_dropped_packets_total" in replay - ring
    queries = list(_queries(json.loads(DASHBOARD.read_text())))
    assert len(queries) >= 20
    for query in queries:
        named = set(re.findall(r"\bkwire_[a-z0-9_]+", query))
        assert named, query
        assert named <= ring | replay, (query, named - ring - replay)
        # data on a live capture and on a replay alike, but where it shows what only a live capture has
        assert named & ring and (named & replay or named <= LIVE_ONLY), query


def test_dashboard_is_the_generated_one():
    import importlib.util

    spec = importlib.util.spec_from_file_location("grafana_dashboard", ROOT / "scripts" / "grafana_dashboard.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert json.loads(DASHBOARD.read_text()) == module.dashboard()


RULES = ROOT / "docs" / "prometheus" / "kwire-rules.yml"
CONFIG = ROOT / "docs" / "prometheus" / "prometheus.yml"


@needs_promtool
def test_alerting_rules_and_scrape_config_pass_promtool():
    rules = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True)
    assert rules.returncode == 0, rules.stdout + rules.stderr
    config = subprocess.run(["promtool", "check", "config", str(CONFIG)], capture_output=True, text=True)
    assert config.returncode == 0, config.stdout + config.stderr


def test_alerting_rules_name_served_families_and_finding_kinds():
    ring, replay = _served_names(), _served_names("packets")
    text = RULES.read_text()
    named = set(re.findall(r"\bkwire_[a-z0-9_]+", text))
    assert len(named) >= 6 and named <= ring | replay, named - ring - replay
    for rule in re.findall(r"expr: (?:>-\n)?((?:.+\n)+?)\s+(?:for|labels):", text):
        used = set(re.findall(r"\bkwire_[a-z0-9_]+", rule))
        assert not used or (used & ring and (used & replay or used <= LIVE_ONLY)), rule  # fires on either
    kinds = set(re.findall(r'kind="([a-z_]+)"', text))
    made = set()  # the kinds kwire's finders make (kwire.analytics.findings_*)
    for source in (ROOT / "kwire" / "analytics").glob("findings_*.py"):
        made.update(re.findall(r'finding\(\s*"([a-z_]+)"', source.read_text()))
    assert len(made) >= 10 and len(kinds) >= 5 and kinds <= made, kinds - made
