"""The verbose view of `kwire inspect -V`: an exchange's line, then its bodies as trees.

Pure functions from Exchanges to rich renderables; printing is the CLI's business. The first line is
the one-line view (kwire.render.line_view) with the frame sizes; then the request and the response,
field by field, as Kafka's schemas name them. Error codes and the fields the schemas mark with an
`enum=` table carry their names (`ErrorCode: 27 (REBALANCE_IN_PROGRESS)`, `IsolationLevel: 1
(READ_COMMITTED)`), record timestamps their date, and every string from the wire is escaped
(kwire.render.safe).

Bounded cost: the tree is laid out here as lines of (text, style) pieces that rich prints as they
are (`Lines`), not as rich Tree nodes that it measures and wraps one by one, and a body shows at most
MAX_ITEMS elements of an array, MAX_FIELDS fields of a struct (a body of 100,000 unknown tagged
fields shows 50), MAX_TEXT characters of a value and MAX_LINES lines; what is left out is counted
on a line of its own.
"""

from __future__ import annotations

from rich.style import Style

from kwire.codec.marks import carries_records, enum_tree, walk
from kwire.counts import count as counted
from kwire.codec.schemas import schema_for
from kwire.kafka.apis import api_name
from kwire.kafka.error_codes import error_name
from kwire.model import Exchange
from kwire.outcomes import MALFORMED, NULL_IN_BODY, BodyOutcome, describe, error_text
from kwire.render.line_view import Lines, line_parts
from kwire.render.records_run import RecordsRun
from kwire.render.safe import term_safe
from kwire.render.times import ms_date
from kwire.render.values import plain_body

MAX_ITEMS = 20
MAX_FIELDS = 50
MAX_TEXT = 200
MAX_LINES = 2000
FLAT_KEYS = 8  # a struct of at most this many scalar fields is shown on one line

GUIDE, DIM, BOLD = Style(dim=True), Style(dim=True), Style(bold=True)
RED, NUMBER, STRING = Style(bold=True, color="red"), Style(color="blue"), Style(color="green")
NULL, TITLE, WARN = Style(dim=True, italic=True), Style(bold=True, underline=True), Style(color="yellow")
ACCENT = Style(color="magenta")
UNKNOWN_TAGS = "_unknown_tagged_fields"
RECORD_TIMES = frozenset({"Timestamp"})  # record fields holding ms since the epoch


def _value_parts(key: str | None, value, names=None, timestamps: bool = False) -> list[tuple[str, Style | None]]:
    """A scalar's text: numbers with their names where the field has them."""
    if value is None:
        return [("null", NULL)]
    if type(value) is bool:
        return [(str(value).lower(), NUMBER)]
    if type(value) is int:
        if key is not None and key.endswith("ErrorCode"):
            return [(f"{value} ({error_name(value)})", RED if value else DIM)]
        if key == "ApiKey":
            return [(str(value), NUMBER), (f" ({api_name(value)})", DIM)]
        if names is not None and value in names:
            return [(str(value), NUMBER), (f" ({names[value]})", DIM)]
        if timestamps and key in RECORD_TIMES:
            date = ms_date(value)
            if date is not None:
                return [(str(value), NUMBER), (f" ({date})", DIM)]
        return [(str(value), NUMBER)]
    if type(value) is float:
        return [(repr(value), NUMBER)]
    text = value if type(value) is str else str(value)
    more = f"… ({len(text):,} chars)" if len(text) > MAX_TEXT else ""
    shown = text[:MAX_TEXT]
    return [(repr(shown) if type(value) is str else term_safe(shown), STRING), (more, DIM)]


def _is_scalar(value) -> bool:
    return not isinstance(value, (dict, list))


class _Body:
    """One body laid out as tree lines within the MAX_LINES budget."""

    def __init__(self, enums: dict):
        self.lines: list[list] = []
        self.left = MAX_LINES
        self.cut = 0
        self.enums = enums  # (id(struct), key) -> names of the values (kwire.codec.enums)

    def line(self, prefix: str, parts) -> bool:
        if self.left <= 0:
            self.cut += 1
            return False
        self.left -= 1
        self.lines.append([(prefix, GUIDE), *parts])
        return True

    def children(self, prefix: str, items: list[tuple], note: str | None = None, timestamps: bool = False) -> None:
        """items: (key, value, parent struct or None); `note` a last line saying what was left out."""
        count = len(items) + (note is not None)
        for i, (key, value, parent) in enumerate(items):
            last = i == count - 1
            self.item(prefix + ("└── " if last else "├── "), prefix + ("    " if last else "│   "),
                      key, value, parent, timestamps)
        if note is not None:
            self.line(prefix + "└── ", [(note, DIM)])

    def item(self, head: str, prefix: str, key, value, parent, timestamps: bool = False) -> None:
        label = [] if key is None else [(f"{term_safe(key)}: ", BOLD)]
        if type(value) is dict:
            self.struct(head, prefix, key, value, timestamps)
        elif type(value) is list:
            self.array(head, prefix, key, value, parent)
        else:
            names = self.enums.get((id(parent), key)) if parent is not None else None
            self.line(head, label + _value_parts(key, value, names, timestamps))

    def struct(self, head: str, prefix: str, key, value: dict, timestamps: bool) -> None:
        if "batches" in value and "size" in value:
            return self.records(head, prefix, key, value)
        if set(value) == {"hex"} and type(value["hex"]) is str:
            text, size = value["hex"], len(value["hex"]) // 2
            label = [] if key is None else [(f"{term_safe(key)}: ", BOLD)]
            shown = (term_safe(text[:MAX_TEXT]) + ("…" if len(text) > MAX_TEXT else ""), STRING)
            return self.line(head, label + [shown, (f" ({size:,} bytes)", DIM)])
        if key is None and 0 < len(value) <= FLAT_KEYS and all(_is_scalar(v) for v in value.values()):
            parts = [("• ", DIM)]
            for i, (k, v) in enumerate(value.items()):
                parts.append(("  " if i else "", None))
                parts.append((f"{term_safe(k)}: ", BOLD))
                parts += _value_parts(k, v, self.enums.get((id(value), k)), timestamps)
            self.line(head, parts)
            return
        if key == UNKNOWN_TAGS:
            title = [(f"unknown tagged fields ({len(value):,})", BOLD)]
        else:
            title = [("•", DIM)] if key is None else [(term_safe(key), BOLD)]
        if not self.line(head, title):
            return
        items = [(k, v, value) for k, v in list(value.items())[:MAX_FIELDS]] if len(value) > MAX_FIELDS \
            else [(k, v, value) for k, v in value.items()]
        more = len(value) - MAX_FIELDS
        self.children(prefix, items, f"… {more:,} more fields" if more > 0 else None, timestamps)

    def array(self, head: str, prefix: str, key, value: list, parent) -> None:
        more = len(value) - MAX_ITEMS
        if all(_is_scalar(v) for v in value):
            names = self.enums.get((id(parent), key)) if parent is not None else None
            parts = [(f"{term_safe(key)}: [", BOLD if key is not None else None)]
            for i, v in enumerate(value[:MAX_ITEMS]):
                if i:
                    parts.append((", ", None))
                parts += _value_parts(key, v, names)
            parts.append((f", … {more:,} more]" if more > 0 else "]", None))
            self.line(head, parts)
            return
        if not self.line(head, [(f"{term_safe(key)} ({len(value):,})", BOLD)]):
            return
        self.children(prefix, [(None, v, None) for v in value[:MAX_ITEMS]], f"… {more:,} more" if more > 0 else None)

    def records(self, head: str, prefix: str, key, value: dict) -> None:
        batches = value["batches"]
        unlisted = value.get("unlisted") or {}
        total = len(batches) + unlisted.get("batches", 0)
        if not self.line(head, [(f"{term_safe(key)}: {counted(value['size'], 'byte')}, {counted(total, 'batch')}",
                                 BOLD)]):
            return
        shown = batches[:MAX_ITEMS]
        notes = []
        if len(batches) > MAX_ITEMS:
            notes.append((f"… {counted(len(batches) - MAX_ITEMS, 'more batch', 'more batches')}", DIM))
        if unlisted:
            n, records, crc = unlisted["batches"], unlisted["records"], unlisted.get("crc_invalid")
            notes.append((f"… {counted(n, 'batch')} not listed: {counted(records, 'record')}, "
                          f"{counted(unlisted['bytes'], 'byte')}, "
                          f"offsets {unlisted['first_offset']}-{unlisted['last_offset']}"
                          + (f", {counted(crc, 'CRC failure')}" if crc else ""), DIM))
        if value.get("budget"):
            notes.append((f"budget: {term_safe(value['budget'])}", WARN))
        if value.get("error"):
            notes.append((f"error: {term_safe(value['error'])}", RED))
        count = len(shown) + len(notes)
        for i, batch in enumerate(shown):
            last = i == count - 1
            if not self.line(prefix + ("└── " if last else "├── "), batch_parts(batch)):
                continue
            records = batch.get("Records") or []
            more = len(records) - MAX_ITEMS
            self.children(prefix + ("    " if last else "│   "), [(None, r, None) for r in records[:MAX_ITEMS]],
                          f"… {counted(more, 'more record', 'more records')}" if more > 0 else None,
                          timestamps=True)
        for i, (text, style) in enumerate(notes):
            self.line(prefix + ("└── " if i == len(notes) - 1 else "├── "), [(text, style)])


def batch_parts(batch: dict) -> list[tuple[str, Style | None]]:
    if batch.get("partial"):
        return [(_partial_text(batch), DIM)]
    if batch.get("error"):
        return [(f"batch error: {term_safe(batch['error'])}", RED)]
    attrs = batch.get("Attributes") or {}
    base = batch.get("BaseOffset", batch.get("Offset"))
    last = batch.get("LastOffset")
    count = batch.get("RecordCount")
    span = f"offsets {base}-{last}" if base is not None and base != last else f"offset {last}"
    parts = [(f"{span} ({counted(count, 'record')}) " if count is not None else f"{span} (magic {batch.get('Magic')}) ",
              None),
             (term_safe(attrs.get("Compression", "?")), ACCENT)]
    if attrs.get("IsTransactional"):
        parts.append((" transactional", WARN))
    if attrs.get("IsControl"):
        parts.append((" control", WARN))
    if "ProducerId" in batch:
        parts.append((f"  pid {batch.get('ProducerId')}/{batch.get('ProducerEpoch')}", None))
    date = ms_date(batch.get("BaseTimestamp", batch.get("Timestamp")))
    if date is not None:
        parts.append((f"  {date}", DIM))
    parts.append((f"  {batch.get('SizeBytes'):,} B", None))
    if batch.get("CrcValid") is False:
        parts.append(("  CRC MISMATCH", RED))
    return parts


def _partial_text(batch: dict) -> str:
    """A batch cut by the end of its response: "partial batch at offset 7 (100 of 1,234 bytes captured)"; its
    offset and length are left out when the bytes captured do not reach them."""
    base, length, available = batch.get("BaseOffset"), batch.get("BatchLength"), batch.get("available")
    at = f" at offset {base}" if base is not None else ""
    captured = f"{available:,} of {counted(length, 'byte')}" if length is not None else counted(available, "byte")
    return f"partial batch{at} ({captured} captured)"


def _enum_marks(api_key: int | None, kind: str, version: int | None, body: dict) -> dict:
    schema = schema_for(api_key, kind) if api_key is not None and version is not None else None
    if schema is None or version not in schema.valid:
        return {}
    return {(id(struct), key): f.enum for struct, key, f in walk(body, enum_tree(schema, version))}


def body_lines(label: str, ex: Exchange, kind: str, body: dict | None, outcome: BodyOutcome | None) -> list[list]:
    """One body as tree lines under `label`, with what left it undecoded (its outcome's text), or the null
    it holds where the schema says not nullable; none when there is neither a body nor such an outcome."""
    error = error_text(outcome)
    if error is not None and outcome.kind == MALFORMED:
        error = f"decode error: {error}"
    elif outcome is not None and outcome.kind == NULL_IN_BODY:
        error = describe(outcome)
    if body is None and error is None:
        return []
    tree = _Body(_enum_marks(ex.api_key, kind, ex.api_version, body) if body else {})
    tree.lines.append([(label if body or error else f"{label} (empty body)", TITLE)])
    items = [(k, v, body) for k, v in body.items()] if body else []
    if error:
        tree.line("├── " if items else "└── ", [(term_safe(error), RED)])
    tree.children("", items)
    if tree.cut:
        tree.lines.append([(f"… {tree.cut:,} more entries not shown (this view stops at {MAX_LINES:,} lines a "
                            "body; --json shows everything)", DIM)])
    return tree.lines


def _extra_lines(ex: Exchange) -> list[list]:
    """Enrichments: the Fetch's isolation and record bytes, share acquisitions, lag per partition."""
    lines = []
    fetch = ex.extra.get("fetch")
    if fetch:
        line = [(f"  {fetch['isolation_level']}, {counted(fetch['record_bytes'], 'record byte')}", DIM)]
        if fetch["empty"]:
            line.append(("  empty fetch", WARN))
        if fetch["aborted_transactions"]:
            line.append((f"  {counted(fetch['aborted_transactions'], 'aborted transaction')}", WARN))
        lines.append(line)
    for row in ex.extra.get("share", ())[:MAX_ITEMS]:
        lines.append([(f"  share {term_safe(row['topic'])}[{row['partition']}]: acquired {row['acquired']:,}, "
                       f"redelivered {row['redelivered']:,}", WARN if row["redelivered"] else DIM)])
    for row in ex.extra.get("lag", ())[:MAX_ITEMS]:
        stable = row.get("last_stable_offset")
        lines.append([(f"  lag {term_safe(row['topic'])}[{row['partition']}] = {row['lag']:,} "
                       f"(high watermark {row['high_watermark']}, fetch offset {row['fetch_offset']}"
                       + (f", last stable {stable}" if stable is not None and stable < row["high_watermark"]
                          else "") + ")", WARN if row["lag"] else DIM)])
    return lines


def exchange_view(ex: Exchange, *, records: str = "summary", show_secrets: bool = False,
                  run: RecordsRun | None = None) -> Lines:
    """The exchange's line (with its frame sizes), its bodies as trees, its enrichments, a blank line.
    Its record sets share one budget, drawn from the run's (`run`; a fresh one when not given)."""
    head = line_parts(ex)
    sizes = [f"{ex.request_size:,} B out" if ex.request_size is not None else "",
             f"{ex.response_size:,} B back" if ex.response_size is not None else ""]
    if any(sizes):
        head.append(("  (" + ", ".join(s for s in sizes if s) + ")", DIM))
    lines = [head]
    budget = (run or RecordsRun()).budget() if carries_records(ex.api_key) else None
    for kind, body, outcome in (("request", ex.request, ex.request_outcome),
                                ("response", ex.response, ex.response_outcome)):
        lines += body_lines(kind, ex, kind, plain_body(body, records, show_secrets, ex.api_key, budget), outcome)
    if run is not None and budget is not None:
        run.charge(budget)
    lines += _extra_lines(ex)
    lines.append([])
    return Lines(lines)
