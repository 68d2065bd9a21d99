"""The `changes` and `quorum` keys of the stats document as a terminal table and as HTML sections.

Pure functions of the document (kwire.analytics.changes, kwire.analytics.quorum): one row per change
(time, who: client id, principal, client address, what: operation and resources with what was set,
and each resource's result), and the quorum's leaders, elections and brokers. Names from the wire are
escaped (kwire.render.safe for rich, html_charts.esc for HTML); redacted values show as "(redacted)", a null
one as "null" (as the -V tree and the JSON write it), and a config operation that takes no value (DELETE)
without one, as kafka-configs' --delete-config names only the key.

Bounded, and every cut said with its count: the terminal shows MAX_ROWS changes (the HTML MAX_HTML_ROWS),
each with at most MAX_LINES of its resources (the HTML MAX_HTML_LINES) and a line for the rest (how many
are in --json, how many the document does not list, with their results); the caption says how many
changes are left out, in --json and not (kwire.render.cuts). The quorum's rows likewise.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from kwire.counts import count
from kwire.render.cuts import more_listed
from kwire.render.html_charts import esc
from kwire.render.safe import wire_text
from kwire.render.times import in_seconds, utc_text

MAX_ROWS = 30
MAX_LINES = 5
MAX_HTML_ROWS = 200
MAX_HTML_LINES = 20
MAX_TEXT = 300


def _value(value) -> str:
    """A value of a resource as text: "(redacted)", "null" for None, a list as [a, b], a map as k=v, k=v."""
    if type(value) is dict:
        if "redacted" in value:
            return "(redacted)"
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items())
    if type(value) is list:
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "null" if value is None else str(value)


def _config_text(config: dict) -> str:
    """One config operation: "cleanup.policy SET compact"; one without a value, "cleanup.policy DELETE"."""
    text = f"{_value(config.get('name'))} {_value(config.get('operation'))}"
    value = config.get("value")
    return text if value is None and config.get("operation") == "DELETE" else f"{text} {_value(value)}"


def _acl_text(res: dict, kind: str) -> str:
    v = {k: _value(res.get(k)) for k in ("permission", "principal", "operation", "resource_type", "resource_name",
                                          "pattern", "host")}
    text = (f"{'ACL filter' if kind == 'acl_filter' else 'ACL'} {v['permission']} {v['principal']} {v['operation']} "
            f"{v['resource_type']}:{v['resource_name']} ({v['pattern']}, host {v['host']})")
    if type(res.get("deleted")) is list:
        text += f", {len(res['deleted']):,} deleted"
    return text


def _quota_text(res: dict) -> str:
    """A quota's entity (a null name is the entity type's default, as kafka-configs' --entity-default) and
    what was set."""
    entity = ",".join(f"{k}={'<default>' if v is None else _value(v)}" for k, v in (res.get("entity") or {}).items())
    return f"quota {entity}: " + _value(res.get("quotas") or {})


def _topic_text(res: dict, kind) -> str:
    """A topic, config resource or feature: its name, then what was set."""
    text = f"{kind} {_value(res.get('name'))}"
    if res.get("partitions") is not None:
        text += f" partitions={_value(res['partitions'])}"
    if res.get("replication_factor") is not None:
        text += f" replication={_value(res['replication_factor'])}"
    configs = res.get("configs")
    if isinstance(configs, dict):
        text += " " + _value(configs)
    elif configs:
        text += " " + ", ".join(_config_text(c) for c in configs if type(c) is dict)
    return text


def _field(res: dict, key: str) -> str:
    return _value(res.get(key))


def resource_text(res: dict) -> str:
    """One resource of a change as a line: what it is, then what was set; never a Python None (_value)."""
    kind = res.get("type")
    if kind in ("acl", "acl_filter"):
        return _acl_text(res, kind)
    if kind == "group_offsets":
        offsets = res.get("offsets")
        tail = " " + ", ".join(f"{p}→{_value(o)}" for p, o in offsets.items()) if offsets else " deleted"
        return f"group {_field(res, 'group')} topic {_field(res, 'topic')}{tail}"
    if kind == "records":
        marks = res.get("low_watermarks") or res.get("before") or {}
        return f"records of {_field(res, 'topic')} before " + ", ".join(f"{p}@{_value(o)}" for p, o in marks.items())
    if kind == "user":
        return f"user {_field(res, 'name')} {_field(res, 'mechanism')} {_field(res, 'action')}"
    if kind == "quota":
        return _quota_text(res)
    if kind == "partitions":
        detail = res.get("replicas") or res.get("partitions") or ""
        election = res.get("election") or ""
        return f"partitions of {_field(res, 'topic')} {_value(election)} {_value(detail)}".replace("  ", " ").strip()
    if kind == "group_member":
        whose = f" ({_value(res.get('client_id') or '?')} at {_value(res['client'])})" if res.get("client") else ""
        return f"member {_value(res.get('instance_id') or res.get('member_id'))}{whose} of group {_field(res, 'group')}"
    if kind == "transaction":
        return f"transaction of producer {_field(res, 'producer_id')} (epoch {_field(res, 'producer_epoch')})"
    if kind == "delegation_token":
        return "delegation token " + ", ".join(f"{k}={_value(v)}" for k, v in res.items()
                                                if k != "type" and v is not None)
    if kind == "request":
        return f"request not read: {_field(res, 'not_read')}"
    return _topic_text(res, kind)


def _who(e: dict) -> str:
    who = e["client_id"] if e["client_id"] is not None else "(no client id)"
    if e["principal"]:
        who += f" as {e['principal']}"
    return f"{who} from {e['client']}"


def _what(e: dict, lines: int) -> list[tuple[str, str]]:
    """(text, result) of a change's first `lines` resources, then a line for the others: how many, how
    many of them --json lists, the results of those it does not; and what was not read inside them."""
    pairs = list(zip(e["resources"], e["result"]))
    first = e["makes_kind"]  # the resources that make the change's kind come first
    order = first + [i for i in range(len(pairs)) if i not in set(first)]
    out = [(_detailed(pairs[i][0])[:MAX_TEXT], pairs[i][1]) for i in order[:lines]]
    listed = len(e["resources"])
    total = e["resource_count"] if e["resource_count"] is not None else listed
    if total > len(out):
        words = f"… {count(total - len(out), 'more resource')}"
        unlisted = total - listed
        if listed > len(out):
            words += f": {listed - len(out):,} in --json"
        if unlisted:
            results = ", ".join(f"{r} {n:,}" for r, n in e["unlisted_results"].items())
            words += f"{',' if listed > len(out) else ':'} {unlisted:,} not listed ({results})"
        out.append((words, ""))
    if e["entries_not_read"]:
        out.append((f"… {count(e['entries_not_read'], 'entry', 'entries')} inside them past kwire's entries bound, "
                    "read but not detailed", ""))
    return out


def _detailed(res: dict) -> str:
    text = resource_text(res)
    if res.get("unlisted"):
        text += " (" + ", ".join(f"{n:,} more in {key}" for key, n in res["unlisted"].items()) + ")"
    return text


def _changes_cut(changes: dict, shown: int) -> str | None:
    """What a changes table left out: the changes --json holds and those only counted."""
    if changes["count"] <= shown:
        return None
    return more_listed("change", changes["count"], shown, changes["shown"],
                       "the document keeps the first {listed:,} by time; by_operation and by_result count them all")


def _clock(ts: float) -> str:
    text = utc_text(ts, "%H:%M:%S.%f")
    return text if text.startswith("@") else text[:-3]


def changes_table(doc: dict) -> Table | None:
    changes = doc.get("changes")
    if not changes or not changes["count"]:
        return None
    entries = changes["entries"][:MAX_ROWS]
    title = f"Changes to the cluster ({changes['count']:,}, {changes['failed']:,} failed"
    title += f"; {len(entries):,} shown)" if changes["count"] > len(entries) else ")"
    table = Table(title=title, title_justify="left", title_style="bold", header_style="bold cyan",
                  show_edge=False, pad_edge=False)
    for name in ("time", "who", "operation", "what", "result"):
        table.add_column(name, no_wrap=name in ("time", "operation"))
    for e in entries:
        style = "bold" if e["kind"] else ""
        for i, (what, result) in enumerate(_what(e, MAX_LINES) or [("-", "-")]):
            first = i == 0
            table.add_row(_clock(in_seconds(e["ts_ns"])) if first else "", wire_text(_who(e)) if first else "",
                          Text(e["operation"] if first else "", style=style), wire_text(what),
                          Text(result, style="" if result == "ok" else "red"))
    table.caption = _changes_cut(changes, len(entries))
    return table


def quorum_table(doc: dict) -> Table | None:
    quorum = doc.get("quorum")
    if not quorum:
        return None
    table = Table(title=f"KRaft quorum ({quorum['events']:,} controller exchanges' events)", title_justify="left",
                  title_style="bold", header_style="bold cyan", show_edge=False, pad_edge=False)
    table.add_column("time", no_wrap=True)
    table.add_column("event")
    rows = quorum_rows(quorum)
    for row in rows[:MAX_ROWS]:
        table.add_row(_clock(row[0]) if row[0] is not None else "-", wire_text(row[1]))
    table.caption = _quorum_cut(quorum, len(rows), MAX_ROWS)
    return table


def _quorum_cut(quorum: dict, rows: int, shown: int) -> str | None:
    """What a quorum table left out: its rows past `shown` (in --json), the events the document did not keep."""
    words = [f"{count(rows - shown, 'more row')} in --json"] if rows > shown else []
    if quorum["overflow"]:
        kept = quorum["events"] - quorum["overflow"]
        words.append(f"{quorum['overflow']:,} controller events past the first {kept:,} not kept")
    return "; ".join(words) or None


def quorum_rows(quorum: dict) -> list[tuple]:
    """(ts, text) of the quorum's leaders, elections, resignations, registrations and fencings, in time order
    (ts in epoch seconds, from the document's epoch ns)."""
    s = in_seconds
    rows = [(s(l["ts_ns"]), f"leader {l['leader_id']} epoch {l['epoch']} ({l['api']})") for l in quorum["leaders"]]
    for e in quorum["elections"]:
        kind = "pre-vote" if e["pre_vote"] else "election"
        rows.append((s(e["ts_ns"]), f"{kind}: candidate {e['candidate']} epoch {e['epoch']}, granted by "
                                    f"{e['granted']}, refused by {e['refused']}"))
    rows += [(s(r["ts_ns"]), f"leader {r['leader_id']} resigned epoch {r['epoch']}") for r in quorum["resignations"]]
    for broker_id, b in quorum["brokers"].items():
        rows += [(s(ts), f"broker {broker_id} registered") for ts in b["registered_ts_ns"]]
        rows += [(s(ts), f"broker {broker_id} unregistered") for ts in b["unregistered_ts_ns"]]
        for span in b["fenced"]:
            start, end = span["start_ts_ns"], span["end_ts_ns"]
            until = "end of capture" if end is None else f"{(end - start) / 1e9:g} s"
            rows.append((s(start), f"broker {broker_id} fenced ({until})"))
        if b["behind"]:
            rows.append((s(b["behind"]["start_ts_ns"]), f"broker {broker_id} metadata behind by up to "
                                                        f"{count(b['behind']['max_offsets'], 'offset')}"))
    return sorted(rows, key=lambda r: (r[0] if r[0] is not None else 0, r[1]))


def changes_section(doc: dict) -> str:
    changes = doc.get("changes")
    if not changes or not changes["count"]:
        return ""
    rows = []
    entries = changes["entries"][:MAX_HTML_ROWS]
    for e in entries:
        what = _what(e, MAX_HTML_LINES)
        results = "<br>".join(esc(r) if r in ("ok", "") else f'<span class="bad">{esc(r)}</span>' for _, r in what)
        rows.append(f'<tr><td>{esc(_clock(in_seconds(e["ts_ns"])))}</td><td class="n l">{esc(_who(e))}</td>'
                    f'<td class="l">{"<b>" if e["kind"] else ""}{esc(e["operation"])}{"</b>" if e["kind"] else ""}</td>'
                    f'<td class="n l">{"<br>".join(esc(w) for w, _ in what)}</td><td class="l">{results}</td></tr>')
    cut = _changes_cut(changes, len(entries))
    note = f" {esc(cut)}." if cut else ""
    return ('<section id="changes"><h2>Changes to the cluster</h2><p class="note">Every request that created, '
            'altered or deleted something, who sent it and what each resource\'s answer was; destructive ones are '
            f'in bold and are findings.{note}</p><div class="tw"><table><tr><th class="l">time (UTC)</th>'
            '<th class="l">who</th><th class="l">operation</th><th class="l">what</th><th class="l">result</th></tr>'
            + "".join(rows) + "</table></div></section>")


def quorum_section(doc: dict) -> str:
    quorum = doc.get("quorum")
    if not quorum:
        return ""
    every = quorum_rows(quorum)
    rows = "".join(f'<tr><td>{esc(_clock(ts)) if ts is not None else "-"}</td><td class="n l">{esc(text)}</td></tr>'
                   for ts, text in every[:MAX_HTML_ROWS])
    cut = _quorum_cut(quorum, len(every), MAX_HTML_ROWS)
    note = f" {esc(cut)}." if cut else ""
    return ('<section id="quorum"><h2>KRaft quorum</h2><p class="note">The controllers\' leaders and epochs, '
            f'elections, brokers registered, fenced and behind, as the controller apis show them.{note}</p>'
            '<div class="tw"><table><tr><th class="l">time (UTC)</th><th class="l">event</th></tr>' + rows
            + "</table></div></section>")
