"""Findings and groups in `kwire stats` (tables, findings first) and in the HTML report (at the top,
a timeline per group, every capture string escaped)."""

from __future__ import annotations

import copy

from rich.console import Console

from kwire.render.html_report import html_report
from kwire.render.stats_view import stats_view
from tests import problems as P


def stats_text(doc: dict, width: int = 220) -> str:
    """kwire stats' terminal view of `doc`, as a terminal `width` columns wide shows it."""
    console = Console(width=width, color_system=None, force_terminal=False)
    with console.capture() as capture:
        console.print(stats_view(doc))
    return capture.get()


def test_stats_shows_findings_first_then_groups_and_members():
    doc = P.document("member-expired")
    text = stats_text(doc)
    expired = next(f for f in doc["findings"] if f["kind"] == "member_expired")
    assert text.index("Findings") < text.index("By api and version") < text.index("Consumer groups")
    assert "member_expired" in text and expired["member_id"] in text and "kwire-consumer-3" in text
    assert "Group members" in text and "expired" in text


def test_stats_says_when_there_is_nothing_to_report():
    doc = copy.deepcopy(P.document("txn-clean"))
    assert doc["findings"] == []
    assert "No findings" in stats_text(doc)


def test_html_puts_findings_on_top_and_draws_each_group():
    doc = copy.deepcopy(P.document("rebalance-storm"))
    doc["groups"]["<script>g</script>"] = doc["groups"]["kwire-app"]
    doc["findings"][0]["summary"] = "<b>x</b>"
    page = html_report(doc)
    assert page.index("<h2>Findings") < page.index("<h2>Request rate") < page.index("<h2>Consumer groups")
    assert 'aria-label="generations of the group"' in page and "rebalance_storm" in page
    assert "<script>" not in page and "&lt;script&gt;g&lt;/script&gt;" in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_stats_shows_each_generation_of_a_group_that_rebalanced():
    """The terminal lists a storm's generations with who joined and who was gone: the flapper's member id of
    each round (its own callbacks) is on the line of a generation it joined."""
    doc = P.document("rebalance-storm")
    text = stats_text(doc)
    assert "Group generations" in text
    section = text[text.index("Group generations"):text.index("Group members")]
    for e in P.of("rebalance-storm", "assigned", "kwire-flapper"):
        assert f"+kwire-flapper {e['member_id']}" in section
    group = doc["groups"]["kwire-app"]
    for g in group["generations"]:
        assert f"│ {g['generation']:>10} │" in section and (g["protocol_name"] or "-") in section


def test_generations_table_is_cut_and_says_so():
    doc = copy.deepcopy(P.document("rebalance-storm"))
    group = doc["groups"]["kwire-app"]
    last = group["generations"][-1]
    extra = [dict(last, generation=last["generation"] + i, start=last["start"] + i) for i in range(1, 41)]
    group["generations"] += extra
    doc["groups"]["kwire-b"] = copy.deepcopy(group)
    total = 2 * len(group["generations"])
    text = stats_text(doc)
    section = text[text.index("Group generations"):text.index("Group members")]
    rows = [line for line in section.splitlines() if line.startswith(("kwire-app ", "kwire-b "))]
    assert len(rows) == 2 * 12  # the newest 12 of each
    assert f"{total - 24:,} earlier generations in --json" in section
    assert f"│ {extra[-1]['generation']:>10} │" in section and f"│ {group['generations'][0]['generation']:>10} │" not in section
