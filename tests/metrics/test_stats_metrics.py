"""`kwire stats --metrics FILE`: kwire live's families for a capture, in the textfile format (checked by
promtool; no sample timestamps, which node_exporter's textfile collector refuses) or OpenMetrics with
the capture's end time on every sample (backfilled by promtool into a TSDB block at that time); the
same values `kwire live --metrics` serves once the replay of the same capture is over."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.metrics.prometheus import MISSING, ROOT, Kwire, free_port, get

CAPTURE = ROOT / "captures" / "problems" / "share-redelivery.pcap.gz"
needs_promtool = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def _kwire(*argv, check=True):
    return subprocess.run([sys.executable, "-m", "kwire", *argv], cwd=ROOT, capture_output=True, text=True,
                          check=check)


def _samples(text: str, skip=("process_",)) -> dict:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if not s.name.startswith(skip):
                out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@needs_promtool
def test_textfile_passes_promtool_and_has_the_capture_times(tmp_path):
    out = tmp_path / "kwire.prom"
    doc = json.loads(_kwire("stats", "--json", "--no-summary", "--metrics", str(out), str(CAPTURE)).stdout)
    text = out.read_text()
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0 and not check.stdout.strip() and not check.stderr.strip(), check
    samples = _samples(text)
    assert not re.search(r"\} \S+ \d+$", text, re.M)  # no sample carries a timestamp
    assert samples[("kwire_capture_end_timestamp_seconds", ())] == doc["span"]["end"]
    assert samples[("kwire_capture_start_timestamp_seconds", ())] == doc["span"]["start"]
    share = doc["share_groups"]
    assert share, "the capture has share groups"
    for group, figures in share.items():
        assert samples[("kwire_share_acquired_records_total", (("group", group),))] == figures["acquired"]
        assert samples[("kwire_share_redelivered_records_total", (("group", group),))] == figures["redelivered"]
    kinds = {}
    for f in doc["findings"]:
        kinds[(f["kind"], f["severity"])] = kinds.get((f["kind"], f["severity"]), 0) + 1
    assert kinds
    for (kind, severity), n in kinds.items():
        assert samples[("kwire_findings", (("kind", kind), ("severity", severity)))] == n


@needs_promtool
def test_timestamped_openmetrics_is_backfilled_at_the_capture_end(tmp_path):
    out = tmp_path / "kwire.om"
    doc = json.loads(_kwire("stats", "--json", "--no-summary", "--metrics", str(out), "--metrics-timestamps",
                            str(CAPTURE)).stdout)
    text = out.read_text()
    assert text.endswith("# EOF\n")
    end = doc["span"]["end"]
    stamps = {float(m) for m in re.findall(r"^kwire_\S+ \S+ (\S+)$", text, re.M)}
    assert stamps == {end}
    blocks = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(out), str(tmp_path / "tsdb")],
                            capture_output=True, text=True)
    assert blocks.returncode == 0, blocks.stderr
    listed = subprocess.run(["promtool", "tsdb", "list", str(tmp_path / "tsdb")], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[1:] if line.strip()]
    assert len(rows) == 1
    assert int(rows[0][1]) == int(end * 1000)  # MIN TIME: the capture's end, in ms
    assert int(rows[0][4]) == len(stamps and re.findall(r"^kwire_\S+ \S+ \S+$", text, re.M))  # NUM SAMPLES


def test_stats_and_a_finished_replay_serve_the_same_figures(tmp_path):
    out = tmp_path / "kwire.prom"
    _kwire("stats", "--no-summary", "--metrics", str(out), str(CAPTURE), "-j", "2")
    port = free_port()
    kwire = Kwire(["live", "--replay", str(CAPTURE), "--speed", "0", "--metrics", f"127.0.0.1:{port}", "--no-screen"])
    try:
        kwire.wait_line("serving the final figures")
        _, served = get(f"http://127.0.0.1:{port}/metrics")
    finally:
        assert kwire.stop() == 0
    capture_only = ("kwire_figures_lag", "kwire_requests_in_flight", "kwire_tcp_connections_open",
                    "kwire_queue_dropped", "kwire_label_values", "kwire_exporter_")  # the last: the service's own
    stats = {k: v for k, v in _samples(out.read_text()).items() if not k[0].startswith(capture_only)}
    live = {k: v for k, v in _samples(served).items() if not k[0].startswith(capture_only)}
    assert stats == live


def test_bad_options_are_one_line(tmp_path):
    bad = _kwire("stats", "--metrics-cap", "client_id=5", str(CAPTURE), check=False)
    assert bad.returncode == 2 and "--metrics-cap" in bad.stderr and "Traceback" not in bad.stderr
    bad = _kwire("stats", "--metrics", str(tmp_path), str(CAPTURE), check=False)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    bad = _kwire("stats", "--metrics", str(tmp_path / "no" / "such" / "dir.prom"), str(CAPTURE), check=False)
    assert bad.returncode == 1 and bad.stderr.strip().splitlines()[-1].startswith("kwire: error: cannot write")


def _first_packets(source, out, count: int):
    """The first `count` records of the classic pcap `source` (gzip) written to `out`."""
    import gzip
    import struct

    data = gzip.decompress(source.read_bytes())
    at = 24
    for _ in range(count):
        at += 16 + struct.unpack_from("<I", data, at + 8)[0]
    out.write_bytes(data[:at])
    return out


@pytest.mark.parametrize("name", ["end-to-end", "end-to-end-commits", "end-to-end-commits@600"])
def test_end_to_end_families_say_what_the_document_says(tmp_path, name):
    """Issue 47: the histogram's count per (topic, client id) is the consumer row's deliveries, each lag gauge the
    latest sample of its row (a partition's fetches; a group's commits of a partition). Cut after 600 packets, the
    commits recording ends while one group lags behind in time and the other has caught up from far behind (a
    latest sample that is neither 0 nor the largest)."""
    out = tmp_path / "kwire.prom"
    capture = ROOT / "captures" / "problems" / f"{name.split('@')[0]}.pcap.gz"
    if "@" in name:
        capture = _first_packets(capture, tmp_path / "cut.pcap", int(name.split("@")[1]))
    section = json.loads(_kwire("stats", "--json", "--no-summary", "--metrics", str(out), str(capture)).stdout)["end_to_end"]
    if "@" in name:
        lags = {row["group"]: row["time_lag_ms"] for row in section["commits"]}
        assert lags["kwire-e2e-py-group"]["last"] > 50 and lags["kwire-e2e-slow-group"]["max"] > 3000
        assert lags["kwire-e2e-slow-group"]["last"] < lags["kwire-e2e-slow-group"]["max"]
    samples = _samples(out.read_text())
    assert section["consumers"]
    for row in section["consumers"]:
        labels = (("client_id", row["consumer"]), ("topic", row["topic"]))
        assert samples[("kwire_end_to_end_latency_seconds_count", labels)] == row["deliveries"]
    for row in section["partitions"]:
        labels = (("client_id", row["consumer"]), ("partition", str(row["partition"])), ("topic", row["topic"]))
        assert samples[("kwire_consumer_time_lag_seconds", labels)] == pytest.approx(row["time_lag_ms"]["last"] / 1e3)
    committed = {k: v for k, v in samples.items() if k[0] == "kwire_group_committed_time_lag_seconds"}
    assert len(committed) == len(section["commits"]) == (0 if name == "end-to-end" else 2)
    for row in section["commits"]:
        labels = (("group", row["group"]), ("partition", str(row["partition"])), ("topic", row["topic"]))
        assert committed[("kwire_group_committed_time_lag_seconds", labels)] == pytest.approx(
            row["time_lag_ms"]["last"] / 1e3)
