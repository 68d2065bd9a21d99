"""Text from the wire made safe for every output: the one definition of what kwire never writes raw.

A client id, topic, group id, member id, config value, record key or header is whatever a client or a
broker sent. Written raw it can drive a terminal or a log viewer: `ESC ] 0 ; title BEL` retitles the
window, `ESC [ 2 J` clears it, C1 controls (U+0080-U+009F: U+009B is CSI) act as escape sequences on
some terminals, and bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069, U+061C,
U+200E-U+200F: Trojan Source) reorder what a reader sees. What is unsafe is every character Python
does not call printable (`str.isprintable`): C0 and C1 controls, DEL, format characters (bidi
controls, zero-width ones, the BOM, soft hyphens, tags), line and paragraph separators, spaces other
than U+0020, surrogates, private-use and unassigned code points. Four forms, one per kind of output:

- `term_safe(value)`: text for a terminal, a table, an HTML page or an error line; every unsafe
  character escaped as Python spells it in a repr (`\\x1b`, `\\x9b`, `\\u202e`, `\\U000e0001`);
  newlines and tabs too (a field stays on one line). None -> "null".
- `json_safe(line)`: JSON as UTF-8 bytes (orjson's, which writes everything but C0 raw) with every
  unsafe character written as a \\uXXXX escape (a surrogate pair past U+FFFF): valid JSON, the data
  intact. A line that is ASCII without DEL, the common case, is returned as it is after one C-level
  scan; `json_safe_text(text)` is the same for JSON as text (the standard library's, with
  ensure_ascii=False), its layout's newlines kept.
- `label_safe(value)`: a Prometheus label value, escaped as term_safe does, and a value that holds a
  backslash or anything escaped has its backslashes doubled, so that two different values never
  become one label value (a scrape with two series of one label set is refused).

Used by: the line view, trees, stats tables and the dashboard (kwire.render.safe, rich Text around
term_safe), the HTML report (kwire.render.html_charts.esc), JSON Lines (kwire.render.jsonl), the stats
document (kwire.analytics.summary_json: stats, spark), the findings log (kwire.live.findings_log), metric
label values (kwire.live.metric_families), and the error lines of the CLI.
"""

from __future__ import annotations

_ESCAPES: dict[str, str] = {}
_MAX_CACHED = 4096


def _escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def term_safe(value) -> str:
    """`value` as text with every unsafe character escaped; None -> "null"."""
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
                if len(_ESCAPES) < _MAX_CACHED:
                    _ESCAPES[ch] = esc
            out.append(esc)
    return "".join(out)


def label_safe(value) -> str:
    """A metric label value: itself when it is printable and holds no backslash; else term_safe's,
    its backslashes doubled first (so it holds a backslash, which no value left as it is does, and
    reads back one way: distinct values stay distinct)."""
    text = value if type(value) is str else str(value)
    if text.isprintable() and "\\" not in text:
        return text
    return term_safe(text.replace("\\", "\\\\"))


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _json_line(text: str) -> str:
    """One line of JSON text with its unsafe characters escaped (they can only be inside strings:
    JSON's own syntax is printable ASCII)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _json_escape(ch) for ch in text)


def json_safe(data: bytes) -> bytes:
    """JSON as UTF-8 bytes (lines of it) with every unsafe character escaped."""
    if data.isascii() and 127 not in data:  # (an int: memchr)
        return data
    text = data.decode("utf-8", "surrogatepass")
    safe = json_safe_text(text)
    return data if safe is text else safe.encode("utf-8")


def json_safe_text(text: str) -> str:
    """JSON text with every unsafe character escaped; its layout's newlines (never inside a string:
    JSON escapes those) kept. `text` itself when nothing needs it."""
    if text.isascii() and "\x7f" not in text:
        return text
    lines = text.split("\n")
    if all(line.isprintable() for line in lines):
        return text
    return "\n".join(_json_line(line) for line in lines)
