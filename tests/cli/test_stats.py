"""`kwire stats`: JSON document, tables, HTML report, filters and errors, through the CLI."""

import json
import re
from pathlib import Path

from click.testing import CliRunner

from kwire.analytics import Aggregator
from kwire.cli.main import cli
from kwire.pipeline import analyze_files
from kwire.render.html_report import html_report
from kwire.render.stats_view import stats_view
from kwire.render.units import human_bytes

QUICK = str(Path(__file__).parents[1] / "analytics" / "data" / "quick.pcap")


def _run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_json_is_the_aggregator_document_with_sorted_keys():
    result = _run("stats", "--json", "--no-summary", QUICK)
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    agg = Aggregator()
    for ex in analyze_files([QUICK]):
        agg.add_exchange(ex)
    assert doc == agg.document()
    assert list(doc) == sorted(doc)
    assert list(doc["totals"]) == sorted(doc["totals"])


def test_tables_name_apis_brokers_and_partitions():
    result = _run("stats", QUICK)
    assert result.exit_code == 0
    out = result.stdout
    for text in ("By api and version", "Produce v10", "JoinGroup v5", "127.0.0.1:44915", "By topic-partition",
                 "Slowest exchanges", "Unanswered requests (3"):
        assert text in out
    assert "47 exchanges" in result.stderr  # the closing summary line


def test_filters_apply_before_aggregation():
    doc = json.loads(_run("stats", "--json", "--api", "Produce", QUICK).stdout)
    assert list(doc["apis"]) == ["Produce"]
    assert doc["totals"]["exchanges"] == 4
    doc = json.loads(_run("stats", "--json", "--errors", QUICK).stdout)
    # 3 unanswered; the 7 ApiVersions refusals are version negotiation, not failures
    assert doc["totals"]["exchanges"] == doc["totals"]["failed"] == 3


def test_html_report_is_self_contained(tmp_path):
    target = tmp_path / "report.html"
    result = _run("stats", "--html", str(target), QUICK)
    assert result.exit_code == 0
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<svg") >= 5
    assert not re.search(r"(src|href)=[\"']?(https?:)?//", page)
    assert "<script" not in page
    assert "JoinGroup" in page and "Consumer lag per partition" in page


def test_the_files_written_are_named_on_stderr(tmp_path):
    """--html and --metrics say which file they wrote and what it holds (issue 48: it said nothing)."""
    page, metrics = tmp_path / "report.html", tmp_path / "kwire.prom"
    result = CliRunner().invoke(cli, ["stats", "--html", str(page), "--metrics", str(metrics), QUICK])
    assert result.exit_code == 0, result.stderr
    families = metrics.read_text().count("# TYPE ")
    assert families > 10
    lines = result.stderr.splitlines()
    assert f"kwire: wrote the HTML report to {page} ({human_bytes(page.stat().st_size)})" in lines
    assert any(line.startswith(f"kwire: wrote {families} metric families to {metrics} (") for line in lines)


def test_html_escapes_capture_strings():
    agg = Aggregator()
    for ex in analyze_files([QUICK]):
        ex.client_id = "<script>alert(1)</script>"
        agg.add_exchange(ex)
    page = html_report(agg.document())
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_empty_document_renders():
    doc = Aggregator().document()
    assert "<svg" in html_report(doc)
    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(stats_view(doc))
    assert "0 exchanges" in console.export_text()


def test_bad_capture_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a capture at all")
    result = _run("stats", str(bad))
    assert result.exit_code == 1
    assert result.stderr.startswith("kwire: error:") and "Traceback" not in result.stderr
    result = _run("stats", str(tmp_path / "missing.pcap"))
    assert result.exit_code == 1 and "Traceback" not in result.stderr


def test_html_names_the_captures_and_the_filters(tmp_path):
    target = tmp_path / "report.html"
    result = _run("stats", "--html", str(target), "--api", "Produce", "--since", "1s", QUICK)
    assert result.exit_code == 0
    page = target.read_text()
    assert QUICK in page and "--api Produce --since 1s" in page
    assert "exchanges matched" in result.stderr
    page = html_report(Aggregator().document())
    assert "none: every exchange" in page
