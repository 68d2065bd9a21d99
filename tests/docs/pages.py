"""Reading the documentation the tests check: the key lists marked in docs/*.md, links and headings.

A documented key list is marked `<!-- keys: NAME -->` and followed by either a Markdown table (the
backquoted names of its first column, header row aside) or a paragraph (the backquoted names in it).
Text in parentheses is commentary: names quoted inside it are not keys (`partitions` (`{topic: [...]}`)).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

_MARK = re.compile(r"<!-- keys: ([\w.]+) -->\n")
_QUOTED = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


def _outside_parentheses(text: str) -> str:
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _names(text: str) -> set[str]:
    return set(_QUOTED.findall(_outside_parentheses(text)))


def _block(text: str, start: int) -> list[str]:
    """The lines from `start` up to the next blank line."""
    lines = []
    for line in text[start:].split("\n"):
        if not line.strip():
            break
        lines.append(line)
    return lines


def documented_keys(page: str) -> dict[str, set[str]]:
    """NAME -> the keys a page documents under `<!-- keys: NAME -->`."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found: dict[str, set[str]] = {}
    for match in _MARK.finditer(text):
        lines = _block(text, match.end())
        if lines and lines[0].startswith("|"):
            cells = [line.split("|")[1] for line in lines[2:]]  # header and rule aside
            names = set().union(*map(_names, cells)) if cells else set()
        else:
            names = _names(" ".join(lines))
        assert match.group(1) not in found, f"{page}: keys {match.group(1)} marked twice"
        assert names, f"{page}: keys {match.group(1)}: no `name` found after the marker"
        found[match.group(1)] = names
    return found


def all_documented_keys() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(DOCS.glob("*.md")):
        for name, keys in documented_keys(path.name).items():
            assert name not in found, f"keys {name} marked on two pages"
            found[name] = keys
    return found


# -- links ---------------------------------------------------------------------------------------

_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)
_HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def without_code_blocks(text: str) -> str:
    return _FENCE.sub("", text)


def links(path: Path) -> list[str]:
    """The link targets of a Markdown file, fenced code aside."""
    return _LINK.findall(without_code_blocks(path.read_text(encoding="utf-8")))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings (repeats numbered as GitHub numbers them)."""
    seen: dict[str, int] = {}
    out = set()
    for heading in _HEADING.findall(without_code_blocks(path.read_text(encoding="utf-8"))):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out
