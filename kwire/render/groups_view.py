"""Findings and consumer groups on the terminal: for `kwire stats` (and the severity styles the `kwire live`
findings band uses, kwire.render.dashboard_panels).

Pure functions of the stats document (kwire.analytics: its `findings` and `groups` keys), to rich
renderables; nothing is computed here that the
document does not hold. Every string from the wire reaches rich as an escaped Text
(kwire.render.safe). `stats` shows the findings first (what went wrong, when, who: the summary
line of each names the group, member, client, broker, topic and partition), then, after the api
tables, one table of groups, the history of each group that went through more than one generation
(when each formed, its leader, members, assignor, how long the group was rebalancing, who joined and
who was gone), and one table of their members.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from kwire.counts import count
from kwire.render.cuts import more_findings
from kwire.render.safe import wire_text
from kwire.render.stats_view import utc
from kwire.render.times import in_seconds

SEVERITY_STYLE = {"critical": "bold red", "warning": "yellow", "info": "dim"}
MAX_FINDINGS = 30
MAX_GROUP_ROWS = 30
MAX_MEMBERS = 30
MAX_GENERATION_ROWS = 30  # rows of the generations table
MAX_GROUP_GENERATIONS = 12  # the newest generations of one group in it


def _when(finding: dict) -> str:
    start, end = finding.get("start_ts_ns"), finding.get("end_ts_ns")
    if start is None:
        return "-"
    text = utc(in_seconds(start))[11:-4]
    if end is not None and end > start:
        text += f" +{(end - start) / 1e9:,.1f} s"
    return text


def _evidence(finding: dict) -> Text:
    items = finding.get("evidence") or []
    if not items:
        return Text("-")
    first = items[0]
    more = f" +{len(items) - 1}" if len(items) > 1 else ""
    return wire_text(f"{first['api']} corr {first['correlation_id']} {first['client']}→{first['broker']}{more}")


def findings_view(doc: dict) -> list:
    """The findings table (or one line saying there are none), then a blank line."""
    findings = doc.get("findings")
    if findings is None:
        return []
    if not findings:
        return [Text("No findings: none of the problems kwire diagnoses shows in this traffic.", style="green"),
                Text("")]
    total = max(doc.get("findings_total") or 0, len(findings))
    table = Table(title=f"Findings ({total:,}, most severe first)", title_justify="left", title_style="bold",
                  header_style="bold cyan", show_edge=False, pad_edge=False)
    table.add_column("severity", no_wrap=True)
    table.add_column("finding", no_wrap=True)
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("what", overflow="fold", ratio=3, min_width=30)
    table.add_column("evidence (kwire inspect)", overflow="fold", ratio=1, min_width=20)
    for f in findings[:MAX_FINDINGS]:
        style = SEVERITY_STYLE.get(f["severity"], "")
        table.add_row(Text(f["severity"], style=style), Text(f["kind"], style="bold"), _when(f),
                      wire_text(f["summary"], style="dim" if f["severity"] == "info" else ""), _evidence(f))
    shown = min(len(findings), MAX_FINDINGS)
    if total > shown:
        table.caption = more_findings(total, shown, len(findings))
    return [table, Text("")]


def groups_table(doc: dict) -> Table | None:
    groups = doc.get("groups") or {}
    if not groups:
        return None
    table = Table(title="Consumer groups", title_justify="left", title_style="bold", header_style="bold cyan",
                  show_edge=False, pad_edge=False)
    for name, right in (("group", False), ("protocol", False), ("coordinator", False), ("generations", True),
                        ("latest", True), ("since", False), ("members", True), ("left", True), ("expired", True),
                        ("rebalancing answers", True), ("committed partitions", True)):
        table.add_column(name, justify="right" if right else "left", no_wrap=True)
    ordered = sorted(groups.items())
    for group_id, g in ordered[:MAX_GROUP_ROWS]:
        gens = g["generations"]
        latest = gens[-1] if gens else None
        left = sum(1 for m in g["members"].values() if m["left"] == "leave")
        expired = sum(1 for m in g["members"].values() if m["left"] == "expired")
        formed = utc(in_seconds(latest["start_ts_ns"]))[11:-4] if latest else "-"
        table.add_row(wire_text(group_id), g["protocol"] or "-", g["coordinator"] or "-", f"{len(gens):,}",
                      str(latest["generation"]) if latest else "-", formed,
                      str(len(latest["members"])) if latest else "0", str(left),
                      Text(str(expired), style="bold red" if expired else ""), str(g["rebalance_in_progress"]),
                      str(sum(len(parts) for parts in g["commits"].values())))
    if len(ordered) > MAX_GROUP_ROWS:
        table.caption = f"{count(len(ordered) - MAX_GROUP_ROWS, 'more group')} in --json"
    return table


def _member_label(group: dict, member_id: str) -> str:
    member = group["members"].get(member_id) or {}
    return f"{member.get('client_id') or '?'} {member_id}"


def _gone_label(group: dict, member_id: str, formed: int | None) -> str:
    """A member missing from a generation (formed at `formed`, epoch ns), and why when the wire says so: it had
    left or expired before."""
    member = group["members"].get(member_id) or {}
    last = member.get("last_seen_ts_ns")
    before = formed is not None and last is not None and last <= formed
    why = f" ({'left' if member.get('left') == 'leave' else member['left']})" if before and member.get("left") else ""
    return _member_label(group, member_id) + why


def _change(group: dict, generation: dict) -> Text:
    """What changed since the generation before: members that joined (+) and that were gone (-)."""
    if generation["joined"] is None:
        return Text("first seen", style="dim")
    parts = [f"+{_member_label(group, m)}" for m in generation["joined"]]
    parts += [f"-{_gone_label(group, m, generation['start_ts_ns'])}" for m in generation["gone"]]
    return wire_text("; ".join(parts) or "same members")


def generations_table(doc: dict) -> Table | None:
    """The history of every group with more than one generation: the newest MAX_GROUP_GENERATIONS of each,
    at most MAX_GENERATION_ROWS rows; the caption says what it left out (all of it is in --json)."""
    groups = [(gid, g) for gid, g in sorted((doc.get("groups") or {}).items()) if len(g["generations"]) > 1]
    if not groups:
        return None
    table = Table(title="Group generations (groups with more than one)", title_justify="left", title_style="bold",
                  header_style="bold cyan", show_edge=False, pad_edge=False)
    for name, right in (("group", False), ("generation", True), ("formed", False), ("leader", False),
                        ("members", True), ("assignor", False), ("rebalancing s", True),
                        ("change (+joined, -gone)", False)):
        table.add_column(name, justify="right" if right else "left", no_wrap=not name.startswith("change"),
                         overflow="fold")
    rows, left_out = 0, 0
    for group_id, g in groups:
        shown = g["generations"][-MAX_GROUP_GENERATIONS:]
        shown = shown[:max(0, MAX_GENERATION_ROWS - rows)]
        left_out += len(g["generations"]) - len(shown)
        for gen in shown:
            table.add_row(wire_text(group_id), str(gen["generation"]), utc(in_seconds(gen["start_ts_ns"]))[11:-4],
                          wire_text(gen["leader"] or "-"), str(len(gen["members"])), wire_text(gen["protocol_name"] or "-"),
                          f"{gen['rebalance_ms'] / 1000:.1f}", _change(g, gen))
        rows += len(shown)
    if left_out:
        table.caption = f"{left_out:,} earlier generations in --json"
    return table


def _assignment(assignment: dict) -> Text:
    return wire_text(" ".join(f"{topic}[{','.join(map(str, parts))}]" for topic, parts in assignment.items()) or "-")


def members_table(doc: dict) -> Table | None:
    groups = doc.get("groups") or {}
    rows = []
    for group_id, g in sorted(groups.items()):
        latest = {m["member_id"]: m["assignment"] for m in (g["generations"][-1]["members"] if g["generations"] else [])}
        for member_id, m in sorted(g["members"].items(), key=lambda kv: (kv[1]["first_seen_ts_ns"] or 0, kv[0])):
            rows.append((group_id, member_id, m, latest.get(member_id)))
    if not rows:
        return None
    table = Table(title="Group members", title_justify="left", title_style="bold", header_style="bold cyan",
                  show_edge=False, pad_edge=False)
    for name in ("group", "member id", "client id", "client", "first seen", "last seen", "left", "assignment (latest)"):
        table.add_column(name, no_wrap=name != "assignment (latest)", max_width=40, overflow="ellipsis")
    for group_id, member_id, m, assignment in rows[:MAX_MEMBERS]:
        left = m["left"] or ""
        table.add_row(wire_text(group_id), wire_text(member_id), wire_text(m["client_id"] or "-"), m["client"] or "-",
                      utc(in_seconds(m["first_seen_ts_ns"]))[11:-4],
                      utc(in_seconds(m["last_seen_ts_ns"]))[11:-4],
                      Text(left, style="bold red" if left == "expired" else ""),
                      _assignment(assignment) if assignment is not None else Text("-"))
    if len(rows) > MAX_MEMBERS:
        table.caption = f"{count(len(rows) - MAX_MEMBERS, 'more member')} in --json"
    return table
