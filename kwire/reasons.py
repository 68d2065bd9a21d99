"""Named reasons, registered: why a packet was not used, a TCP connection ended, a TLS connection was not
decrypted (issue 46 item 3, as kwire.analytics.finding_kinds registers findings and Wireshark its expert infos).

Each family is one table in the layer that names it: kwire.net.drops (why a packet did not become a TCP
segment), kwire.tcp.closes (why a connection ended) and kwire.tls.reasons (why a TLS connection, or its rest, was
not decrypted). A `Reason` is one declaration: its `name` (stable: the counter, the JSON value, what a program
matches on), what it `means`, where a user `appears` to meet it, and its `text` for people where text says it
(a format with `{detail}` where the reason takes one: the cipher suite kwire does not decrypt). Code passes the
names (module constants made from the table) and derives the text; no decision is taken on the text.
scripts/gen_docs.py writes docs/reasons.md's lists from the tables; tests/test_reasons.py holds the tables, the
doc and what the layers emit together. Outside the layers (as kwire.counts is), so each layer can use it.
"""

from __future__ import annotations

from typing import NamedTuple


class Reason(NamedTuple):
    name: str
    means: str
    appears: str
    text: str | None = None  # how text for people says it ("{detail}" where it takes one); None: by its name

    def say(self, detail=None) -> str:
        """The reason's text for people (its name when it has none)."""
        text = self.text or self.name
        return text.format(detail=detail) if "{detail}" in text else text


def registry(reasons: tuple[Reason, ...]) -> dict[str, Reason]:
    """name -> Reason; a name declared twice is a programming error."""
    table = {r.name: r for r in reasons}
    if len(table) != len(reasons):
        raise ValueError("a reason's name is declared twice")
    return table


def reasons_list(reasons: tuple[Reason, ...]) -> str:
    """docs/reasons.md's list of one family (scripts/gen_docs.py), one line each."""
    lines = []
    for r in reasons:
        said = f" Text: \"{r.text}\"." if r.text else ""
        lines.append(f"- `{r.name}`: {r.means}. Appears: {r.appears}.{said}")
    return "\n".join(lines)
