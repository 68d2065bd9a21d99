"""The readable view of `kwire inspect`: one block per exchange, bodies as trees.

Pure functions from Exchanges to rich renderables; printing is the CLI's business. A block's title
line has the time, client -> broker, api and version, correlation id, client id, latency and
status; errors (non-zero ErrorCode, decode errors, unanswered requests) are shown in red with
Kafka's error names. Long arrays are cut to their first items with a count of the rest.
"""

from __future__ import annotations

import datetime as _dt

from rich.console import Group
from rich.text import Text
from rich.tree import Tree

from kwire.kafka.apis import api_name
from kwire.kafka.error_codes import error_name
from kwire.model import PAIRED, Exchange
from kwire.render.values import plain_body

MAX_ITEMS = 20
MAX_TEXT = 200
FLAT_KEYS = 8  # a struct of at most this many scalar fields is shown on one line


def format_ts(ts_ns: int) -> str:
    dt = _dt.datetime.fromtimestamp(ts_ns / 1e9, tz=_dt.timezone.utc)
    return dt.strftime("%H:%M:%S.") + f"{(ts_ns // 1000) % 1_000_000:06d}"


def title(ex: Exchange) -> Text:
    t = Text()
    t.append(format_ts(ex.ts_ns), style="dim")
    t.append("  ")
    t.append(ex.client, style="cyan")
    t.append(" → ")
    t.append(ex.broker, style="cyan")
    t.append("  ")
    if ex.api is not None:
        t.append(f"{ex.api} v{ex.api_version}", style="bold")
    else:
        t.append("response without its request", style="bold yellow")
    t.append(f"  corr {ex.correlation_id}", style="magenta")
    if ex.client_id:
        t.append(f"  {ex.client_id}", style="green")
    latency = ex.latency_ms
    if latency is not None:
        t.append(f"  {latency:.3f} ms", style="bold yellow" if latency >= 100 else "yellow")
    if ex.status != PAIRED:
        t.append(f"  {ex.status}", style="bold red")
    sizes = []
    if ex.request_size is not None:
        sizes.append(f"{ex.request_size} B out")
    if ex.response_size is not None:
        sizes.append(f"{ex.response_size} B back")
    if sizes:
        t.append("  (" + ", ".join(sizes) + ")", style="dim")
    return t


def _scalar(key: str | None, value) -> Text:
    label = Text(f"{key}: " if key is not None else "", style="bold" if key else "")
    if key == "ErrorCode" and isinstance(value, int):
        if value:
            label.append(f"{value} {error_name(value)}", style="bold red")
        else:
            label.append("0 NONE", style="dim")
        return label
    if key == "ApiKey" and isinstance(value, int):
        label.append(f"{value} ", style="blue")
        label.append(f"({api_name(value)})", style="dim")
        return label
    if value is None:
        label.append("null", style="dim italic")
    elif isinstance(value, bool):
        label.append(str(value).lower(), style="blue")
    elif isinstance(value, (int, float)):
        label.append(str(value), style="blue")
    else:
        text = str(value)
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT] + f"… ({len(text)} chars)"
        label.append(repr(text) if isinstance(value, str) else text, style="green")
    return label


def _batch_line(batch: dict) -> Text:
    if batch.get("partial"):
        return Text(f"partial batch at offset {batch.get('BaseOffset')} "
                    f"({batch.get('available')} of {batch.get('BatchLength')} bytes captured)", style="dim")
    if batch.get("error"):
        return Text(f"batch error: {batch['error']}", style="bold red")
    attrs = batch.get("Attributes") or {}
    base = batch.get("BaseOffset", batch.get("Offset"))
    last = batch.get("LastOffset")
    count = batch.get("RecordCount")
    span = f"offsets {base}-{last}" if base is not None and base != last else f"offset {last}"
    line = Text(f"{span} ({count} records) " if count is not None else f"{span} (magic {batch.get('Magic')}) ")
    line.append(str(attrs.get("Compression", "?")), style="magenta")
    if attrs.get("IsTransactional"):
        line.append(" transactional", style="yellow")
    if attrs.get("IsControl"):
        line.append(" control", style="yellow")
    if "ProducerId" in batch:
        line.append(f"  pid {batch.get('ProducerId')}/{batch.get('ProducerEpoch')}")
    line.append(f"  {batch.get('SizeBytes')} B")
    if batch.get("CrcValid") is False:
        line.append("  CRC MISMATCH", style="bold red")
    return line


def _add(tree: Tree, key: str | None, value) -> None:
    if isinstance(value, dict):
        if "batches" in value and "size" in value:  # a record-set summary
            node = tree.add(Text(f"{key}: {value['size']} bytes, {len(value['batches'])} batches", style="bold"))
            for batch in value["batches"][:MAX_ITEMS]:
                b = node.add(_batch_line(batch))
                for record in (batch.get("Records") or [])[:MAX_ITEMS]:
                    _add(b, None, record)
            if len(value["batches"]) > MAX_ITEMS:
                node.add(Text(f"… {len(value['batches']) - MAX_ITEMS} more batches", style="dim"))
            if value.get("error"):
                node.add(Text(f"error: {value['error']}", style="bold red"))
            return
        if key is None and 0 < len(value) <= FLAT_KEYS and all(
                not isinstance(v, (dict, list)) for v in value.values()):
            # A small flat struct in an array: one line.
            line = Text("• ", style="dim")
            for i, (k, v) in enumerate(value.items()):
                if i:
                    line.append("  ")
                line.append_text(_scalar(k, v))
            tree.add(line)
            return
        node = tree.add(Text(key, style="bold")) if key is not None else tree.add(Text("•", style="dim"))
        for k, v in value.items():
            _add(node, k, v)
        return
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            shown = ", ".join(str(v) for v in value[:MAX_ITEMS])
            more = f", … {len(value) - MAX_ITEMS} more" if len(value) > MAX_ITEMS else ""
            tree.add(Text(f"{key}: [{shown}{more}]"))
            return
        node = tree.add(Text(f"{key} ({len(value)})", style="bold"))
        for item in value[:MAX_ITEMS]:
            _add(node, None, item)
        if len(value) > MAX_ITEMS:
            node.add(Text(f"… {len(value) - MAX_ITEMS} more", style="dim"))
        return
    tree.add(_scalar(key, value))


def body_tree(label: str, body: dict | None, error: str | None) -> Tree | None:
    if body is None and error is None:
        return None
    tree = Tree(Text(label if body or error else f"{label} (empty body)", style="bold underline"))
    if error:
        tree.add(Text(f"decode error: {error}", style="bold red"))
    if body:
        for key, value in body.items():
            _add(tree, key, value)
    return tree


def exchange_view(ex: Exchange, *, records: str = "summary", show_secrets: bool = False) -> Group:
    parts = [title(ex)]
    req = body_tree("request", plain_body(ex.request, records, show_secrets), ex.request_error)
    resp = body_tree("response", plain_body(ex.response, records, show_secrets), ex.response_error)
    for tree in (req, resp):
        if tree is not None:
            parts.append(tree)
    fetch = ex.extra.get("fetch")
    if fetch:
        line = Text(f"  {fetch['isolation_level']}, {fetch['record_bytes']} record bytes", style="dim")
        if fetch["empty"]:
            line.append("  empty fetch", style="yellow")
        if fetch["aborted_transactions"]:
            line.append(f"  {fetch['aborted_transactions']} aborted transactions", style="yellow")
        parts.append(line)
    for row in ex.extra.get("share", ())[:MAX_ITEMS]:
        parts.append(Text(f"  share {row['topic']}[{row['partition']}]: acquired {row['acquired']}, "
                          f"redelivered {row['redelivered']}",
                          style="yellow" if row["redelivered"] else "dim"))
    for row in ex.extra.get("lag", ())[:MAX_ITEMS]:
        parts.append(Text(f"  lag {row['topic']}[{row['partition']}] = {row['lag']} "
                          f"(high watermark {row['high_watermark']}, fetch offset {row['fetch_offset']}"
                          + (f", last stable {row['last_stable_offset']}" if "last_stable_offset" in row
                             and row["last_stable_offset"] < row["high_watermark"] else "") + ")",
                          style="yellow" if row["lag"] else "dim"))
    parts.append(Text(""))
    return Group(*parts)
