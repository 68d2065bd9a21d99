"""Observation tags: named once (kwire.analytics.tags), routed by one table, never guessed.

Every tag the observers produce on the committed recordings is in FEEDS and goes where FEEDS says; a
tag no table names raises instead of falling silently into the groups; and no analytics module writes
a tag as a literal (the AST is read: tuples that start with a two-letter string, comparisons with one).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kwire.analytics import tags
from kwire.analytics.analysis import Analysis
from kwire.analytics.observe import observations
from kwire.pipeline import analyze_files

ROOT = Path(__file__).resolve().parents[2]
CODES = {v for k, v in vars(tags).items() if k.isupper() and isinstance(v, str) and len(v) == 2}


def test_the_table_names_every_tag_once():
    assert set(tags.FEEDS) == CODES and len(CODES) == len([k for k, v in vars(tags).items()
                                                           if k.isupper() and isinstance(v, str) and len(v) == 2])
    assert set(tags.FEEDS.values()) == {tags.GROUPS, tags.TRAFFIC, tags.DELIVERY, tags.CHANGES, tags.QUORUM, tags.ACKS0,
                                        tags.END_TO_END, tags.RULES}


def test_an_unknown_tag_raises_instead_of_feeding_the_groups():
    with pytest.raises(ValueError, match="unknown tag 'zz'"):
        Analysis().add({}, [("zz", "group")])


def test_every_tag_observed_on_the_recordings_is_in_the_table():
    captures = sorted(str(p) for p in (ROOT / "captures").rglob("*.pcap*") if ".truth" not in p.name
                      and "tls" not in p.parts)
    seen = set()
    for ex in analyze_files(captures):
        seen |= {ob[0] for ob in observations(ex)}
    assert seen <= CODES
    assert {tags.MEMBER, tags.PRODUCE_BATCH, tags.SOFTWARE, tags.CHANGE, tags.QUORUM_EVENT} <= seen


def test_no_analytics_module_writes_a_tag_as_a_literal():
    found = []
    for path in sorted((ROOT / "kwire" / "analytics").glob("*.py")):
        if path.name == "tags.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            values = []
            if isinstance(node, ast.Tuple) and node.elts and isinstance(node.elts[0], ast.Constant):
                values.append(node.elts[0].value)
            if isinstance(node, ast.Compare):
                values += [c.value for c in [node.left, *node.comparators] if isinstance(c, ast.Constant)]
            found += [f"{path.name}:{node.lineno}: {v!r}" for v in values if v in CODES]
    assert not found, found
