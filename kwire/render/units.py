"""Numbers for people: byte counts in binary units, shared by every renderer (counts of other things in
words: kwire.counts)."""

from __future__ import annotations


def human_bytes(n: int | None) -> str:
    """1536 -> "1.5 KiB"; 1008 -> "1,008 B"; None -> "-"."""
    if n is None:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{int(value):,} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"
