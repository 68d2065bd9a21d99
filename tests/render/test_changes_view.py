"""The changes and quorum tables within their bounds, every cut said with its count (issue 49).

One CreateAcls of 60,000 bindings printed 60,029 lines; a table headed "the first 1,000 shown" showed 30
rows; 9,999 leader changes gave a table of 30 rows that did not say what it left out. Inputs:
tests/hostile3/changes.py.
"""

from __future__ import annotations

import copy

from rich.console import Console

from kwire.analytics import Aggregator
from kwire.pipeline import analyze_files
from kwire.render import changes_view
from kwire.render.changes_view import changes_section, changes_table, quorum_section, quorum_table
from tests.hostile3 import changes as gen


def _document(path) -> dict:
    agg = Aggregator()
    for ex in analyze_files([str(path)]):
        agg.add_exchange(ex)
    return agg.document()


def _text(table) -> str:
    console = Console(width=200, color_system=None, force_terminal=False)
    with console.capture() as capture:
        console.print(table)
    return capture.get()


def test_one_huge_change_is_a_few_lines_that_count_the_rest(tmp_path):
    path = tmp_path / "huge.pcap"
    gen.huge_acls(path, 1)  # 3,000 bindings
    doc = _document(path)
    text = _text(changes_table(doc))
    assert len(text.splitlines()) < 20
    listed = len(doc["changes"]["entries"][0]["resources"])
    shown = getattr(changes_view, "MAX_LINES", 5)
    assert (f"… {3_000 - shown:,} more resources: {listed - shown:,} in --json, {3_000 - listed:,} not listed "
            f"(ok {3_000 - listed:,})") in text
    html = changes_section(doc)
    assert html.count("ACL ALLOW User:bob") <= 20 and "not listed" in html


def _many_changes(doc: dict, count: int, kept: int) -> dict:
    """`doc` as if its one change had been made `count` times, the document keeping `kept` of them."""
    doc = copy.deepcopy(doc)
    changes = doc["changes"]
    entry = changes["entries"][0]
    changes.update(count=count, shown=kept, overflow=count - kept, entries=[entry] * kept)
    return doc


def test_the_changes_table_says_what_it_shows_and_what_it_leaves_out(tmp_path):
    path = tmp_path / "huge.pcap"
    gen.huge_acls(path, 1)
    doc = _many_changes(_document(path), 1_500, 1_000)
    table = changes_table(doc)
    assert "30 shown" in str(table.title) and "first 1,000" not in str(table.title)
    assert table.caption == ("1,470 more changes: 970 in --json, 500 not listed (the document keeps the first 1,000 "
                             "by time; by_operation and by_result count them all)")
    html = changes_section(doc)
    assert "1,300 more changes: 800 in --json, 500 not listed" in html
    doc = _many_changes(doc, 30, 30)
    assert changes_table(doc).caption is None and "30 shown" not in str(changes_table(doc).title)


def test_the_quorum_table_says_what_it_leaves_out(tmp_path):
    path = tmp_path / "leaders.pcap"
    gen.leader_changes(path, 100)
    doc = _document(path)
    rows = len(changes_view.quorum_rows(doc["quorum"]))
    assert rows == 101
    assert quorum_table(doc).caption == f"{rows - 30} more rows in --json"
    assert "more rows in --json" not in quorum_section(doc)  # the HTML shows 200
    doc["quorum"]["overflow"], doc["quorum"]["events"] = 5, doc["quorum"]["events"] + 5
    assert "5 controller events past the first" in quorum_table(doc).caption
