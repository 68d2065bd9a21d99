"""The findings and consumer-group sections of the HTML report (`kwire stats --html`).

`findings_section(doc)` (put at the top of the page) and `groups_section(doc)` are pure functions
of the stats document (its `findings` and `groups` keys) to HTML strings: a findings table (what,
when, who, and the exchanges that prove it), and per group a timeline chart (one row per member, a
bar per generation it was in, a red mark where a member vanished without leaving, a dashed line at
each generation's start) followed by its members. Inline SVG only, no scripts; every string from the
capture is escaped (kwire.render.html_charts.esc); tables sit in the page's `.tw` boxes, names in
`td.n` cells, as kwire.render.html_tables lays them out. Styles come from the page (kwire.render.html_report's CSS) plus the few
classes defined here.
"""

from __future__ import annotations

from kwire.render.cuts import more_findings
from kwire.render.html_charts import esc as escape
from kwire.render.times import utc_datetime, utc_text

CSS = """
.sev { font-weight:650; text-transform:uppercase; font-size:11.5px; letter-spacing:.4px; }
.sev.critical { color:var(--bad); } .sev.warning { color:var(--warn); } .sev.info { color:var(--muted); }
td.w { white-space:normal; text-align:left; max-width:640px; }
td.ev { white-space:normal; text-align:left; font-size:12px; color:#334155; }
"""
COLORS = ("#2563eb", "#10b981", "#8b5cf6", "#f59e0b", "#06b6d4", "#ec4899")
MAX_ROWS = 40
MAX_GROUPS = 8


def _utc(ts: float | None, fmt: str = "%H:%M:%S") -> str:
    """Through kwire.render.times: a time no calendar holds (past year 9999) is its epoch form."""
    if ts is None:
        return "-"
    return utc_text(ts, fmt)


def _milliseconds(ts: float | None) -> str:
    if ts is None or utc_datetime(ts) is None:
        return _utc(ts)
    return _utc(ts, "%H:%M:%S.%f")[:-3]


def _evidence(items: list[dict]) -> str:
    return "<br>".join(escape(f"{_milliseconds(e['ts'])} {e['api']} corr {e['correlation_id']} "
                              f"{e['client']} → {e['broker']}") for e in items[:4]) + \
        (f"<br>… {len(items) - 4} more" if len(items) > 4 else "")


def findings_section(doc: dict) -> str:
    findings = doc.get("findings")
    if findings is None:
        return ""
    if not findings:
        return ('<section><h2>Findings</h2><p class="note">None of the problems kwire diagnoses shows in this '
                'traffic.</p></section>')
    rows = []
    for f in findings[:MAX_ROWS]:
        when = _utc(f["start"]) + (f" +{f['end'] - f['start']:,.1f} s" if f["end"] and f["start"] and
                                   f["end"] > f["start"] else "")
        rows.append(f'<tr><td class="l"><span class="sev {escape(f["severity"])}">{escape(f["severity"])}</span></td>'
                    f'<td class="l"><b>{escape(f["kind"])}</b></td><td class="l">{escape(when)}</td>'
                    f'<td class="w">{escape(f["summary"])}</td><td class="ev">{_evidence(f["evidence"])}</td></tr>')
    total = max(doc.get("findings_total") or 0, len(findings))
    shown = min(len(findings), MAX_ROWS)
    more = f'<p class="note">{escape(more_findings(total, shown, len(findings)))}.</p>' if total > shown else ""
    return (f'<style>{CSS}</style><section><h2>Findings ({total:,})</h2><p class="note">Named diagnoses, '
            'most severe first, each with the exchanges that prove it (find them with <code>kwire inspect</code> by '
            'client, broker and correlation id).</p><div class="tw"><table><tr><th class="l">severity</th>'
            '<th class="l">finding</th><th class="l">when (UTC)</th><th class="l">what</th><th class="l">evidence</th>'
            '</tr>' + "".join(rows) + "</table></div>" + more + "</section>")


def _members_rows(group: dict) -> list[tuple[str, str, list]]:
    """(member id, label, [(start, end, generation)]) per member, by first appearance."""
    spans: dict[str, list] = {}
    for g in group["generations"]:
        for m in g["members"]:
            spans.setdefault(m["member_id"], []).append((g["start"], g["end"], g["generation"]))
    members = group["members"]
    order = sorted(spans, key=lambda m: (spans[m][0][0], m))
    return [(m, f"{(members.get(m) or {}).get('client_id') or '?'} {m[:10]}", spans[m]) for m in order]


def timeline_chart(group: dict, start: float, end: float) -> str:
    rows = _members_rows(group)[:MAX_ROWS]
    width, left, right, top, row_h = 860, 230, 14, 18, 18
    height = top + row_h * max(len(rows), 1) + 28
    span = max(end - start, 1e-6)

    def x(t: float) -> float:
        return left + (width - left - right) * (min(max(t, start), end) - start) / span

    parts = [f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="generations of the group">']
    for g in group["generations"]:
        gx = x(g["start"])
        parts.append(f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{top - 6}" y2="{height - 28}" stroke="#94a3b8" '
                     f'stroke-dasharray="3 3"/><text x="{gx + 2:.1f}" y="{top - 8}">{g["generation"]}</text>')
    for i, (member_id, label, spans) in enumerate(rows):
        y = top + i * row_h
        parts.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">{escape(label)}</text>')
        for s, e, number in spans:
            x0, x1 = x(s), x(e if e is not None else end)
            parts.append(f'<rect x="{x0:.1f}" y="{y + 3}" width="{max(x1 - x0, 1.5):.1f}" height="{row_h - 6}" '
                         f'rx="2" fill="{COLORS[number % len(COLORS)]}" opacity=".75"><title>generation {number}'
                         f'</title></rect>')
        member = group["members"].get(member_id) or {}
        if member.get("left") == "expired" and member.get("last_seen") is not None:
            mx = x(member["last_seen"])
            parts.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{y + 1}" y2="{y + row_h - 1}" stroke="#dc2626" '
                         f'stroke-width="3"><title>last seen; expired</title></line>')
    for k in range(6):
        t = start + span * k / 5
        tx = x(t)
        anchor = "start" if k == 0 else "end" if k == 5 else "middle"
        parts.append(f'<text x="{tx:.1f}" y="{height - 10}" text-anchor="{anchor}">{_utc(t)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def groups_section(doc: dict) -> str:
    groups = doc.get("groups") or {}
    if not groups:
        return ""
    span = doc["span"]
    start, end = span["start"] or 0, span["end"] or 0
    panels = []
    if len(groups) > MAX_GROUPS:  # said before the panels: the busiest MAX_GROUPS are drawn
        panels.append(f'<p class="note">The {MAX_GROUPS} groups with most generations; {len(groups) - MAX_GROUPS:,} '
                      'more groups in --json.</p>')
    for group_id, g in sorted(groups.items(), key=lambda kv: (-len(kv[1]["generations"]), kv[0]))[:MAX_GROUPS]:
        members = "".join(
            f'<tr><td class="n">{escape(m)}</td><td class="n">{escape(v["client_id"] or "-")}</td>'
            f'<td class="n">{escape(v["client"] or "-")}</td><td>{_utc(v["first_seen"])}</td>'
            f'<td>{_utc(v["last_seen"])}</td><td class="l{" err" if v["left"] == "expired" else ""}">'
            f'{escape(v["left"] or "")}</td></tr>' for m, v in sorted(g["members"].items())[:MAX_ROWS])
        panels.append(
            f'<div class="panel"><h3>{escape(group_id)}</h3><div class="meta">{escape(g["protocol"] or "?")} protocol · '
            f'coordinator {escape(g["coordinator"] or "-")} · {len(g["generations"])} generations · '
            f'{g["rebalance_in_progress"]} REBALANCE_IN_PROGRESS answers</div>{timeline_chart(g, start, end)}'
            f'<div class="tw"><table><tr><th class="l">member id</th><th class="l">client id</th><th class="l">client</th>'
            f'<th>first seen</th><th>last seen</th><th class="l">left</th></tr>{members}</table></div>'
            + (f'<p class="note">{len(g["members"]) - MAX_ROWS:,} more members in --json.</p>'
               if len(g["members"]) > MAX_ROWS else "") + '</div>')
    return ('<section><h2>Consumer groups</h2><p class="note">Generations (classic generation ids, KIP-848 and '
            'share member epochs) over time: a bar per member per generation it was in; red: a member that '
            'vanished without leaving.</p>' + "".join(panels) + "</section>")
