"""The findings and consumer-group sections of the HTML report (`kwire stats --html`).

`findings_section(doc)` (put at the top of the page) and `groups_section(doc)` are pure functions
of the stats document (its `findings` and `groups` keys) to HTML strings: a findings table (what,
when, who, and the exchanges that prove it), and per group a timeline chart (one row per member, a
bar per generation it was in, a red mark where a member vanished without leaving, a dashed line at
each generation's start, numbered where the number has room: kwire.render.label_layout.spaced)
followed by its members. A member's row is labelled by kwire.render.member_labels (client id and,
in bold, the shortest piece of the member id no other member shares: distinct, bounded, escaped),
its whole id in the label's tooltip; the members table, in the terminal's order, gives that piece
(`in the timeline`) beside the whole id. Inline SVG only, no scripts; every string from the capture
is escaped (kwire.render.html_charts.esc); tables sit in the page's `.tw` boxes, names in `td.n`
cells, as kwire.render.html_tables lays them out. Styles come from the page
(kwire.render.html_report's CSS) plus the few classes defined here.
"""

from __future__ import annotations

from kwire.render.cuts import more_findings
from kwire.render.html_charts import esc as escape
from kwire.render.label_layout import spaced, text_width
from kwire.render.member_labels import member_labels
from kwire.render.times import in_seconds, utc_datetime, utc_text

CSS = """
.sev { font-weight:650; text-transform:uppercase; font-size:11.5px; letter-spacing:.4px; }
.sev.critical { color:var(--bad); } .sev.warning { color:var(--warn); } .sev.info { color:var(--muted); }
td.w { white-space:normal; text-align:left; max-width:640px; }
td.ev { white-space:normal; text-align:left; font-size:12px; color:#334155; }
td.part { font-weight:600; }
"""
COLORS = ("#2563eb", "#10b981", "#8b5cf6", "#f59e0b", "#06b6d4", "#ec4899")
MAX_ROWS = 40
MAX_GROUPS = 8
WIDTH, LEFT, RIGHT, TOP, ROW_H = 860, 230, 14, 18, 18  # the timeline's SVG units: labels left of LEFT


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
    return "<br>".join(escape(f"{_milliseconds(in_seconds(e['ts_ns']))} {e['api']} corr {e['correlation_id']} "
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
        start, end = f["start_ts_ns"], f["end_ts_ns"]
        when = _utc(in_seconds(start)) + (f" +{(end - start) / 1e9:,.1f} s" if end and start and end > start else "")
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


def _labels(group: dict) -> dict[str, tuple[str, str]]:
    """Member id -> (client id, part) of its label (kwire.render.member_labels): distinct within the
    group, short, made of term_safe text."""
    members = group["members"]
    ids = dict.fromkeys([*members, *(m["member_id"] for g in group["generations"] for m in g["members"])])
    return member_labels({m: (members.get(m) or {}).get("client_id") for m in ids})


def _members_rows(group: dict, labels: dict) -> list[tuple[str, tuple[str, str], list]]:
    """(member id, (client id, part), [(start, end, generation)]) per member, by first appearance."""
    spans: dict[str, list] = {}
    for g in group["generations"]:
        for m in g["members"]:
            spans.setdefault(m["member_id"], []).append((in_seconds(g["start_ts_ns"]), in_seconds(g["end_ts_ns"]),
                                                         g["generation"]))
    order = sorted(spans, key=lambda m: (spans[m][0][0], m))
    return [(m, labels[m], spans[m]) for m in order]


def _generation_numbers(group: dict, x, bottom: int) -> tuple[list[str], int]:
    """A dashed line at each generation's start and its number above it, the numbers that would
    overlap the one before left out (kwire.render.label_layout.spaced); (svg parts, how many left out)."""
    parts, boxes, numbers = [], [], []
    for g in group["generations"]:
        gx, number = x(in_seconds(g["start_ts_ns"])), str(g["generation"])
        parts.append(f'<line x1="{gx:.1f}" x2="{gx:.1f}" y1="{TOP - 6}" y2="{bottom}" stroke="#94a3b8" '
                     'stroke-dasharray="3 3"/>')
        w = text_width(number)
        boxes.append((gx + 2, gx + 2 + w) if gx + 2 + w <= WIDTH - 2 else (gx - 2 - w, gx - 2))
        numbers.append(number)
    kept = spaced(boxes)
    parts += [f'<text x="{boxes[i][0]:.1f}" y="{TOP - 8}">{numbers[i]}</text>' for i in kept]
    return parts, len(boxes) - len(kept)


def _member_row(y: int, label: tuple[str, str], member_id: str, member: dict, spans: list, x,
                end: float) -> list[str]:
    """A member's row: its label (client id, and in bold the piece of the member id; the whole id in
    its tooltip), a bar per generation it was in, a red mark where it was last seen when it expired."""
    client, part = label
    parts = [f'<text class="member" x="{LEFT - 6}" y="{y + 12}" text-anchor="end"><title>member '
             f'{escape(member_id)} · client id {escape(member.get("client_id") or "-")}</title>'
             f'{escape(client + " ") if client else ""}<tspan font-weight="600">{escape(part)}</tspan></text>']
    for s, e, number in spans:
        x0, x1 = x(s), x(e if e is not None else end)
        parts.append(f'<rect x="{x0:.1f}" y="{y + 3}" width="{max(x1 - x0, 1.5):.1f}" height="{ROW_H - 6}" '
                     f'rx="2" fill="{COLORS[number % len(COLORS)]}" opacity=".75"><title>generation {number}'
                     f'</title></rect>')
    if member.get("left") == "expired" and member.get("last_seen_ts_ns") is not None:
        mx = x(in_seconds(member["last_seen_ts_ns"]))
        parts.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{y + 1}" y2="{y + ROW_H - 1}" stroke="#dc2626" '
                     f'stroke-width="3"><title>last seen; expired</title></line>')
    return parts


def timeline_chart(group: dict, start: float, end: float, labels: dict | None = None) -> str:
    """The group's generations over [start, end]: a row per member (MAX_ROWS at most), then a note of
    what it left out."""
    labels = labels if labels is not None else _labels(group)
    every = _members_rows(group, labels)
    rows = every[:MAX_ROWS]
    height = TOP + ROW_H * max(len(rows), 1) + 28
    span = max(end - start, 1e-6)

    def x(t: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * (min(max(t, start), end) - start) / span

    parts = [f'<svg viewBox="0 0 {WIDTH} {height}" role="img" aria-label="generations of the group">']
    numbers, unnumbered = _generation_numbers(group, x, height - 28)
    parts += numbers
    for i, (member_id, label, spans) in enumerate(rows):
        parts += _member_row(TOP + i * ROW_H, label, member_id, group["members"].get(member_id) or {}, spans, x,
                             end)
    for k in range(6):
        t = start + span * k / 5
        tx = x(t)
        anchor = "start" if k == 0 else "end" if k == 5 else "middle"
        parts.append(f'<text x="{tx:.1f}" y="{height - 10}" text-anchor="{anchor}">{_utc(t)}</text>')
    parts.append("</svg>")
    notes = []
    if unnumbered:
        notes.append(f"{unnumbered:,} generation numbers left out where they would overlap the one before "
                     "(each bar names its generation when pointed at)")
    if len(every) > len(rows):
        notes.append(f"{len(every) - len(rows):,} more members not drawn (all in --json)")
    return "".join(parts) + "".join(f'<p class="note">{escape(n)}.</p>' for n in notes)


def _members_table(group: dict, labels: dict) -> str:
    """The group's members in the terminal's order (first seen, then member id), each with the piece
    of its id that labels it in the timeline above."""
    ordered = sorted(group["members"].items(), key=lambda kv: (kv[1]["first_seen_ts_ns"] or 0, kv[0]))
    rows = "".join(
        f'<tr><td class="l part">{escape(labels[m][1])}</td><td class="n l">{escape(m)}</td>'
        f'<td class="n l">{escape(v["client_id"] or "-")}</td><td class="n l">{escape(v["client"] or "-")}</td>'
        f'<td>{_utc(in_seconds(v["first_seen_ts_ns"]))}</td><td>{_utc(in_seconds(v["last_seen_ts_ns"]))}</td>'
        f'<td class="l{" err" if v["left"] == "expired" else ""}">{escape(v["left"] or "")}</td></tr>'
        for m, v in ordered[:MAX_ROWS])
    more = (f'<p class="note">{len(ordered) - MAX_ROWS:,} more members in --json.</p>'
            if len(ordered) > MAX_ROWS else "")
    return ('<div class="tw"><table><tr><th class="l">in the timeline</th><th class="l">member id</th>'
            '<th class="l">client id</th><th class="l">client</th><th>first seen</th><th>last seen</th>'
            f'<th class="l">left</th></tr>{rows}</table></div>{more}')


def groups_section(doc: dict) -> str:
    groups = doc.get("groups") or {}
    if not groups:
        return ""
    span = doc["span"]
    start, end = in_seconds(span["start_ts_ns"]) or 0, in_seconds(span["end_ts_ns"]) or 0
    panels = []
    if len(groups) > MAX_GROUPS:  # said before the panels: the busiest MAX_GROUPS are drawn
        panels.append(f'<p class="note">The {MAX_GROUPS} groups with most generations; {len(groups) - MAX_GROUPS:,} '
                      'more groups in --json.</p>')
    for group_id, g in sorted(groups.items(), key=lambda kv: (-len(kv[1]["generations"]), kv[0]))[:MAX_GROUPS]:
        labels = _labels(g)
        panels.append(
            f'<div class="panel"><h3>{escape(group_id)}</h3><div class="meta">{escape(g["protocol"] or "?")} protocol · '
            f'coordinator {escape(g["coordinator"] or "-")} · {len(g["generations"])} generations · '
            f'{g["rebalance_in_progress"]} REBALANCE_IN_PROGRESS answers</div>{timeline_chart(g, start, end, labels)}'
            f'{_members_table(g, labels)}</div>')
    return ('<section><h2>Consumer groups</h2><p class="note">Generations (classic generation ids, KIP-848 and '
            'share member epochs) over time: a bar per member per generation it was in; red: a member that '
            'vanished without leaving.</p>' + "".join(panels) + "</section>")
