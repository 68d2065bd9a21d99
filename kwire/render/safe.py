"""Strings from the wire made safe for a terminal: the one helper every rich view and the dashboard use.

A client id, topic, group id or record key is whatever a client sent. Printed raw it can drive the
terminal: `ESC ] 0 ; title BEL` retitles the window, `ESC [ 2 J` clears it, C1 controls (U+0080 to
U+009F) act as escape sequences on some terminals, bidirectional overrides reorder what is shown.
`term_safe(s)` keeps every printable character and shows every other one escaped, as Python spells
it in a repr (`\\x1b`, `\\x9b`, `\\u202e`): C0 and C1 controls, DEL, tabs and newlines (a field stays on
one line), format and separator characters, surrogates, unassigned code points.

`wire_text(value, style)` is the same string as a rich `Text`, which rich prints as is: rich markup in
a wire string (`[bold]`, `[link=...]`) is never interpreted. Views must hand wire strings to rich only
as Text (a plain `str` in a table cell is parsed as markup).
"""

from __future__ import annotations

from rich.text import Text

_ESCAPES: dict[str, str] = {}


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def term_safe(value) -> str:
    """`value` as text with every non-printable character escaped; None -> "null"."""
    if value is None:
        return "null"
    text = value if type(value) is str else str(value)
    if text.isprintable():  # the common case: one C-level scan
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        else:
            esc = _ESCAPES.get(ch)
            if esc is None:
                esc = _escape(ch)
                if len(_ESCAPES) < 4096:
                    _ESCAPES[ch] = esc
            out.append(esc)
    return "".join(out)


def wire_text(value, style: str = "") -> Text:
    """A wire string as a rich Text: escaped, never read as markup."""
    return Text(term_safe(value), style=style)
