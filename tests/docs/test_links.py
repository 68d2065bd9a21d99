"""README and docs/ hold together: every relative link leads to a file and, with `#anchor`, to one of
its headings; every page is reachable from docs/index.md; README stays a front page that answers the
three questions a new user asks first within one click, and keeps the Quick start .ci/run relies on."""

from __future__ import annotations

import re

import pytest

from tests.docs.pages import DOCS, ROOT, anchors, links

# Pages other branches write (docs/index.md links them already); checked once they are here.
ELSEWHERE = {"captures.md", "metrics.md", "changes.md", "vocabulary.md"}

PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def _local(target: str) -> bool:
    return not re.match(r"^[a-z]+:", target)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_lead_somewhere(page):
    broken = []
    for target in filter(_local, links(page)):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            if file.parent == DOCS and file.name in ELSEWHERE:
                continue
            broken.append(f"{target}: no file {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with anchor #{anchor} in {file.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_every_page_is_in_the_index():
    linked = {target.partition("#")[0] for target in links(DOCS / "index.md")}
    missing = [p.name for p in DOCS.glob("*.md") if p.name != "index.md" and p.name not in linked]
    assert not missing, f"docs/index.md does not link {missing}"


def test_readme_answers_the_first_questions_in_one_click():
    """From README, one link each: decrypting TLS, a rotated archive on Spark, what member_expired means."""
    targets = set(links(ROOT / "README.md"))
    for wanted in ("docs/tls.md", "docs/spark.md#reading-a-rotated-archive", "docs/findings.md#member_expired",
                   "docs/index.md"):
        assert wanted in targets, f"README.md does not link {wanted}"


def test_readme_stays_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move reference material to docs/"


def test_quick_start_keeps_its_two_commands():
    """.ci/run runs README's test command; users run the first line on a fresh machine."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "pip install . && kwire inspect captures/produce-consume-zstd.pcap\n" in quick
    assert 'pip install -e ".[test]" && python -m pytest\n' in quick
