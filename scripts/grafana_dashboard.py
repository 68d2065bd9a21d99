#!/usr/bin/env python3
"""Writes docs/grafana/kwire.json, the Grafana dashboard of kwire's Prometheus metrics (docs/metrics.md).

    python scripts/grafana_dashboard.py            # rewrites docs/grafana/kwire.json

Every query names families kwire exports (tests/metrics/test_grafana.py checks it against what the
exporter serves). Import the file in Grafana (Dashboards, New, Import) and pick the Prometheus data
source that scrapes kwire; `instance` chooses the kwire exporter.
"""

from __future__ import annotations

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "grafana", "kwire.json")
DS = {"type": "prometheus", "uid": "${datasource}"}
SEL = 'instance=~"$instance"'
R = "$__rate_interval"

ROWS = [
    ("Requests", [
        ("Requests/s by api", "reqps", [(f"sum by (api) (rate(kwire_exchanges_total{{{SEL}}}[{R}]))", "{{api}}")]),
        ("p99 latency by api (long polls apart)", "s", [
            (f"histogram_quantile(0.99, sum by (api, le) (rate(kwire_request_latency_seconds_bucket{{{SEL}}}[{R}])))",
             "{{api}}")]),
        ("p50 latency by broker", "s", [
            (f"histogram_quantile(0.5, sum by (broker, le) (rate(kwire_request_latency_seconds_bucket{{{SEL}}}[{R}])))",
             "{{broker}}")]),
        ("Long-poll waits, p50 by api", "s", [
            (f"histogram_quantile(0.5, sum by (api, le) (rate(kwire_long_poll_wait_seconds_bucket{{{SEL}}}[{R}])))",
             "{{api}}")]),
        ("Errors/s by api and error", "reqps", [
            (f"sum by (api, error) (rate(kwire_errors_total{{{SEL}}}[{R}]))", "{{api}} {{error}}")]),
        ("Unanswered requests by api", "short", [
            (f"sum by (api) (increase(kwire_unanswered_requests_total{{{SEL}}}[{R}]))", "{{api}}")]),
        ("Top clients by requests/s", "reqps", [
            (f"topk(10, sum by (client_id) (rate(kwire_exchanges_total{{{SEL}}}[{R}])))", "{{client_id}}")]),
        ("Bytes/s to and from brokers", "Bps", [
            (f"sum by (broker) (rate(kwire_request_bytes_total{{{SEL}}}[{R}]))", "to {{broker}}"),
            (f"sum by (broker) (rate(kwire_response_bytes_total{{{SEL}}}[{R}]))", "from {{broker}}")]),
        ("Throttle time by broker (s/s)", "s", [
            (f"sum by (broker) (rate(kwire_throttle_time_seconds_total{{{SEL}}}[{R}]))", "{{broker}}")]),
    ]),
    ("Consumers and groups", [
        ("Consumer lag (records), top 20 partitions", "short", [
            (f"topk(20, kwire_consumer_lag{{{SEL}}})", "{{topic}}[{{partition}}]")]),
        ("Records/s by topic", "short", [
            (f"sum by (topic) (rate(kwire_produced_records_total{{{SEL}}}[{R}]))", "produced {{topic}}"),
            (f"sum by (topic) (rate(kwire_fetched_records_total{{{SEL}}}[{R}]))", "fetched {{topic}}")]),
        ("Group generation", "short", [(f"kwire_group_generation{{{SEL}}}", "{{group}} ({{protocol}})")]),
        ("Group members", "short", [(f"kwire_group_members{{{SEL}}}", "{{group}}"),
                                    (f"kwire_group_members_expired{{{SEL}}}", "expired {{group}}")]),
        ("Share groups: records acquired and redelivered /s", "short", [
            (f"sum by (group) (rate(kwire_share_acquired_records_total{{{SEL}}}[{R}]))", "acquired {{group}}"),
            (f"sum by (group) (rate(kwire_share_redelivered_records_total{{{SEL}}}[{R}]))", "redelivered {{group}}")]),
        ("Share groups: lock expiries", "short", [(f"kwire_share_lock_expiries{{{SEL}}}", "{{group}}")]),
    ]),
    ("Findings and capture health", [
        ("Findings by kind", "short", [(f"sum by (kind, severity) (kwire_findings{{{SEL}}})", "{{severity}} {{kind}}")]),
        ("Packets/s and drops", "short", [
            (f"rate(kwire_packets_total{{{SEL}}}[{R}])", "packets/s"),
            (f"increase(kwire_kernel_drops_total{{{SEL}}}[{R}])", "kernel drops"),
            # exchanges where a capture process hands kwire exchanges (live on Linux), packets where packets are
            # queued (a replay, live elsewhere): the one the run serves
            (f"increase(kwire_queue_dropped_exchanges_total{{{SEL}}}[{R}]) or "
             f"increase(kwire_queue_dropped_packets_total{{{SEL}}}[{R}])", "queue drops")]),
        ("TCP gaps and Kafka connections", "short", [
            (f"increase(kwire_tcp_gaps_total{{{SEL}}}[{R}])", "gaps"),
            (f"kwire_tcp_connections_open{{{SEL}}}", "TCP connections open"),
            (f"increase(kwire_kafka_connections_total{{{SEL}}}[{R}])", "new Kafka connections")]),
        ("Figures behind the capture (max, s)", "s", [(f"kwire_figures_lag_max_seconds{{{SEL}}}", "behind")]),
        ("Label values folded into 'other'", "short", [
            (f"sum by (label) (increase(kwire_label_folds_total{{{SEL}}}[{R}]))", "{{label}}"),
            (f"kwire_label_values_folded{{{SEL}}}", "{{label}} (distinct)")]),
    ]),
]


def panel(pid: int, title: str, unit: str, queries, x: int, y: int) -> dict:
    return {"id": pid, "type": "timeseries", "title": title, "datasource": DS,
            "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
            "targets": [{"refId": chr(65 + i), "datasource": DS, "expr": expr, "legendFormat": legend}
                        for i, (expr, legend) in enumerate(queries)]}


def dashboard() -> dict:
    panels, pid, y = [], 1, 0
    for title, rows in ROWS:
        panels.append({"id": pid, "type": "row", "title": title, "collapsed": False,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        pid, y = pid + 1, y + 1
        for i, (ptitle, unit, queries) in enumerate(rows):
            panels.append(panel(pid, ptitle, unit, queries, 12 * (i % 2), y + 8 * (i // 2)))
            pid += 1
        y += 8 * ((len(rows) + 1) // 2)
    return {
        "title": "kwire: Kafka on the wire", "uid": "kwire-wire", "schemaVersion": 39, "version": 1,
        "tags": ["kafka", "kwire"], "timezone": "utc", "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": [
            {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"},
            {"name": "instance", "type": "query", "datasource": DS, "label": "kwire exporter",
             "query": {"query": "label_values(kwire_packets_total, instance)", "refId": "instance"},
             "definition": "label_values(kwire_packets_total, instance)", "includeAll": True, "multi": True,
             "refresh": 2},
        ]},
        "panels": panels,
    }


if __name__ == "__main__":
    with open(OUT, "w") as f:
        json.dump(dashboard(), f, indent=2)
        f.write("\n")
    print(OUT)
