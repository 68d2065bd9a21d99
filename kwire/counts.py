"""Counts in words: how every text kwire writes for people says how many of what.

One definition for every layer that writes such text (the closing summary line, the terminal tables and
trees, a finding's summary, a decode error, the live notes): the thousands separated by commas (`11,236
packets`, as Python's `{:,}` writes them), and the noun in the singular for exactly one (`1 record`,
`0 records`, `2 records`). Outside the layers (it imports nothing of kwire), as kwire/safe_text.py is, so
that the codec and the analysis use it as the renderers do. Ids, ports, offsets and epochs are not counts:
they keep their digits as the wire has them.
"""

from __future__ import annotations

_SIBILANT = ("s", "x", "z", "ch", "sh")


def plural(noun: str) -> str:
    """English's regular plural of `noun` (of its last word): "batch" -> "batches", "entry" -> "entries",
    "Kafka connection" -> "Kafka connections"."""
    if noun.endswith(_SIBILANT):
        return noun + "es"
    if len(noun) > 1 and noun[-1] == "y" and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def noun(n: int, singular: str, many: str | None = None) -> str:
    """The noun that goes after the count `n`: `singular` for exactly 1, else `many` (by default its regular
    plural)."""
    if n == 1:
        return singular
    return many if many is not None else plural(singular)


def count(n: int, singular: str, many: str | None = None) -> str:
    """`n` things in words: count(1, "record") -> "1 record"; count(11236, "packet") -> "11,236 packets";
    count(0, "entry") -> "0 entries"; count(2, "datum", "data") -> "2 data"."""
    return f"{n:,} {noun(n, singular, many)}"
