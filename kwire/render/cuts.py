"""What a cut list or table says about what it left out, in every renderer (tables, HTML, dashboard).

A list the document keeps short (findings: kwire.analytics.findings.MAX_FINDINGS) comes with its
total (`findings_total`); a table keyed by names from the wire (kwire.native.caps) folds its
overflow into one row and counts it. The words here are the one way the views say so: never
"see --json" for rows --json does not hold.
"""

from __future__ import annotations

from kwire.counts import count


def more_findings(total: int, shown: int, listed: int) -> str:
    """What a cut findings table says: how many it left out, and where (if anywhere) they are."""
    return more_listed("finding", total, shown, listed,
                       "the document keeps the first {listed:,}, most severe first; findings_total counts them all")


def more_listed(what: str, total: int, shown: int, listed: int, rule: str) -> str:
    """What a cut list says: `total - shown` more `what` (a noun in the singular: kwire.counts), of which those
    --json lists (`listed` in all) and those it does not (`rule`, formatted with `listed`, says why and where
    they are counted)."""
    words = count(total - shown, f"more {what}")
    if listed > shown:
        words += f": {listed - shown:,} in --json"
    if total > listed:
        words += f"{',' if listed > shown else ':'} {total - listed:,} not listed ({rule.format(listed=listed)})"
    return words


def folded_note(doc: dict, kind: str) -> str:
    """What a table capped by kwire.native.caps says when it folded names: "" when it did not."""
    cap = (doc.get("caps") or {}).get(kind)
    if not cap or not cap.get("folded"):
        return ""
    return f"names past the first {cap['cap']:,} are folded into (others)"


def more_rows(rows: int, shown: int, what: str, doc: dict, kind: str) -> str | None:
    """A table's caption: the rows it left out (all in --json; `what` is a noun in the singular) and the names
    its cap folded."""
    words = [f"{count(rows - shown, f'more {what}')} in --json"] if rows > shown else []
    folded = folded_note(doc, kind) if kind else ""
    if folded:
        words.append(folded)
    return "; ".join(words) or None
