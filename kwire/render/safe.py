"""Strings from the wire made safe for a terminal: the one helper every rich view and the dashboard use.

`term_safe(s)` (kwire.safe_text, which owns what is escaped for every output) keeps every printable
character and shows every other one escaped, as Python spells it in a repr (`\\x1b`, `\\x9b`,
`\\u202e`): C0 and C1 controls, DEL, tabs and newlines (a field stays on one line), format (bidi) and
separator characters, surrogates, unassigned code points.

`wire_text(value, style)` is the same string as a rich `Text`, which rich prints as is: rich markup in
a wire string (`[bold]`, `[link=...]`) is never interpreted. Views must hand wire strings to rich only
as Text (a plain `str` in a table cell is parsed as markup).
"""

from __future__ import annotations

from rich.text import Text

from kwire.safe_text import term_safe

__all__ = ["term_safe", "wire_text"]


def wire_text(value, style: str = "") -> Text:
    """A wire string as a rich Text: escaped, never read as markup."""
    return Text(term_safe(value), style=style)
