"""Findings and groups in `kwire stats` (tables, findings first) and in the HTML report (at the top,
a timeline per group, every capture string escaped)."""

from __future__ import annotations

import copy

from rich.console import Console

from kwire.render.html_report import html_report
from kwire.render.stats_view import stats_view
from tests import problems as P


def _text(doc: dict) -> str:
    console = Console(width=220, color_system=None, force_terminal=False)
    with console.capture() as capture:
        console.print(stats_view(doc))
    return capture.get()


def test_stats_shows_findings_first_then_groups_and_members():
    doc = P.document("member-expired")
    text = _text(doc)
    expired = next(f for f in doc["findings"] if f["kind"] == "member_expired")
    assert text.index("Findings") < text.index("By api and version") < text.index("Consumer groups")
    assert "member_expired" in text and expired["member_id"] in text and "kwire-consumer-3" in text
    assert "Group members" in text and "expired" in text


def test_stats_says_when_there_is_nothing_to_report():
    doc = copy.deepcopy(P.document("txn-clean"))
    assert doc["findings"] == []
    assert "No findings" in _text(doc)


def test_html_puts_findings_on_top_and_draws_each_group():
    doc = copy.deepcopy(P.document("rebalance-storm"))
    doc["groups"]["<script>g</script>"] = doc["groups"]["kwire-app"]
    doc["findings"][0]["summary"] = "<b>x</b>"
    page = html_report(doc)
    assert page.index("<h2>Findings") < page.index("<h2>Request rate") < page.index("<h2>Consumer groups")
    assert 'aria-label="generations of the group"' in page and "rebalance_storm" in page
    assert "<script>" not in page and "&lt;script&gt;g&lt;/script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page
