"""Write docs/vocabulary.md's tables of facts and metrics from kwire.vocabulary, so they cannot drift.

The page holds blocks between two markers,

    <!-- BEGIN GENERATED vocabulary: exchange facts -->
    <!-- END GENERATED vocabulary: exchange facts -->

(one each for `exchange facts`, `partition facts`, `metrics`, `stats document`, `live document` and `findings
log`), and this script replaces what lies between them with the table kwire.vocabulary declares
(kwire/vocabulary.py is the one source: change a fact there, then run this). The text outside the markers is left alone.

    python scripts/gen_vocabulary.py           # rewrite the blocks
    python scripts/gen_vocabulary.py --check   # exit 1 when a block differs

tests/test_vocabulary.py runs the check.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kwire.vocabulary import (EXCHANGE_FACTS, FINDING_ITEMS, FINDINGS_LOG, LIVE_DOCUMENT, METRIC_LIST,  # noqa: E402
                              OUTPUTS, PARTITION_TABLE, SHAPES, STATS_DOCUMENT)

PAGE = ROOT / "docs" / "vocabulary.md"
BEGIN = "<!-- BEGIN GENERATED vocabulary: {name} -->"
END = "<!-- END GENERATED vocabulary: {name} -->"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def facts_table(facts, outputs=OUTPUTS) -> list[str]:
    head = ["name", "unit", "type", "null"] + list(outputs) + ["meaning"]
    rows = [f"| {' | '.join(head)} |", f"| {' | '.join('---' for _ in head)} |"]
    for f in facts:
        cells = [f"`{f.name}`", f.unit, f.type, "yes" if f.nullable else "no"]
        cells += ["yes" if o in f.outputs else "no" for o in outputs]
        rows.append(f"| {' | '.join(map(_cell, cells + [f.meaning]))} |")
    return rows


def metrics_table() -> list[str]:
    rows = ["| name | type | unit | labels | help |", "| --- | --- | --- | --- | --- |"]
    for m in METRIC_LIST:
        cells = [f"`{m.exposed}`", m.type, m.unit or "-", ", ".join(m.labels) or "-", m.help]
        rows.append(f"| {' | '.join(map(_cell, cells))} |")
    return rows


def _note(key) -> str:
    notes = []
    if key.shape:
        notes.append(f"its keys: *{key.shape}* (below)")
    if key.deprecated:
        notes.append(f"deprecated, kept for one release: read `{key.deprecated}`")
    if key.same_as:
        notes.append(f"the same figure as `{key.same_as}`")
    if key.rare:
        notes.append(f"rare: {key.rare}")
    return "; ".join(notes) or "-"


def doc_keys_table(keys) -> list[str]:
    rows = ["| key | unit | type | null | meaning | note |", "| --- | --- | --- | --- | --- | --- |"]
    for k in keys:
        cells = [f"`{k.path}`", k.unit, k.type.replace("|", " or "), "yes" if k.nullable else "no", k.meaning,
                 _note(k)]
        rows.append(f"| {' | '.join(map(_cell, cells))} |")
    return rows


def stats_document() -> list[str]:
    """The document's keys, then each shape's (its keys relative to the object that has it)."""
    lines = doc_keys_table(STATS_DOCUMENT)
    for name, keys in SHAPES.items():
        places = ", ".join(f"`{k.path}`" for k in STATS_DOCUMENT if k.shape == name)
        lines += ["", f"*{name}*, the keys of {places}:", ""] + doc_keys_table(keys)
    return lines


def findings_log() -> list[str]:
    """The log's own keys, then where the finding's are declared."""
    return doc_keys_table(FINDINGS_LOG) + ["", f"then every key of the finding: those of `{FINDING_ITEMS}` in the "
                                               "stats document (above), without the prefix."]


BLOCKS = {
    "exchange facts": lambda: facts_table(EXCHANGE_FACTS),
    "partition facts": lambda: facts_table(PARTITION_TABLE, ("parquet",)),
    "metrics": metrics_table,
    "stats document": stats_document,
    "live document": lambda: doc_keys_table(LIVE_DOCUMENT),
    "findings log": findings_log,
}


def generated(text: str) -> str:
    """`text` with every block rewritten; a block missing from the page is an error."""
    for name, make in BLOCKS.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        if begin not in text or end not in text:
            raise SystemExit(f"gen_vocabulary: {PAGE.name} has no block {begin!r} ... {end!r}")
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + begin + "\n" + "\n".join(make()) + "\n" + end + tail
    return text


def main(argv: list[str]) -> int:
    text = PAGE.read_text()
    new = generated(text)
    if "--check" in argv:
        if new != text:
            print(f"gen_vocabulary: {PAGE.relative_to(ROOT)} is stale: run python scripts/gen_vocabulary.py")
            return 1
        return 0
    if new != text:
        PAGE.write_text(new)
        print(f"gen_vocabulary: wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
