"""The tables of the HTML report, as HTML text: pure functions of the summary document.

Each table sits in a `.tw` box (it scrolls sideways inside its card rather than overflow it); cells
holding names from the capture are `td.n` (they wrap anywhere), numbers never wrap. Every string
from the capture is escaped (html_charts.esc).
"""

from __future__ import annotations

from kwire.render.cuts import more_rows
from kwire.render.html_charts import esc
from kwire.render.stats_view import human_bytes, ms, rate
from kwire.render.times import utc_text

MAX_TABLE_ROWS = 50


def _num(n) -> str:
    return "-" if n is None else f"{n:,}"


def _table(head: str, rows: str) -> str:
    return f'<div class="tw"><table>{head}{rows}</table></div>'


def _part_key(part: str):
    return (0, int(part)) if part.isdigit() else (1, part)


def _errors(errors: dict) -> str:
    items = sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{esc(k)} ×{n:,}" for k, n in items)


def _figure_row(label: str, fig: dict, cls: str = "") -> str:
    lat = fig["latency_ms"]
    extra = []
    if fig["no_response"]:
        extra.append(f"{fig['no_response']:,} unanswered")
    if fig["no_request"]:
        extra.append(f"{fig['no_request']:,} without request")
    if fig["decode_errors"]:
        extra.append(f"{fig['decode_errors']:,} decode errors")
    problems = "; ".join(x for x in [_errors(fig["error_codes"]), ", ".join(extra)] if x)
    return (f'<tr class="{cls}"><td class="n">{esc(label)}</td><td>{fig["exchanges"]:,}</td>'
            f'<td>{rate(fig["requests_per_s"])}</td><td>{human_bytes(fig["request_bytes"])}</td>'
            f'<td>{human_bytes(fig["response_bytes"])}</td><td>{ms(lat["p50"])}</td><td>{ms(lat["p90"])}</td>'
            f'<td>{ms(lat["p99"])}</td><td>{ms(lat["max"])}</td><td class="err">{problems}</td></tr>')


_FIG_HEAD = ('<tr><th class="l">{}</th><th>exchanges</th><th>req/s</th><th>out</th><th>in</th><th>p50 ms</th>'
             '<th>p90 ms</th><th>p99 ms</th><th>max ms</th><th class="l">errors / problems</th></tr>')


def _api_rows(apis: dict) -> list[str]:
    rows = []
    for api, fig in sorted(apis.items(), key=lambda kv: (-kv[1]["exchanges"], kv[0])):
        versions = sorted(fig["versions"].items(), key=lambda kv: _part_key(kv[0]))
        if len(versions) == 1 and versions[0][0].isdigit():
            rows.append(_figure_row(f"{api} v{versions[0][0]}", fig))
            continue
        rows.append(_figure_row(api, fig))
        rows += [_figure_row(f"v{v}" if v.isdigit() else v, vfig, "sub") for v, vfig in versions]
    return rows


def figure_table(title: str, column: str, doc: dict, key: str) -> str:
    """The figures of doc[key] (apis with their versions, client ids, brokers), most exchanges first."""
    groups = doc[key]
    if key == "apis":
        rows = _api_rows(groups)
    else:
        rows = [_figure_row(k, f) for k, f in sorted(groups.items(), key=lambda kv: (-kv[1]["exchanges"], kv[0]))]
    words = more_rows(len(rows), MAX_TABLE_ROWS * 2, "row", doc, "api_versions" if key == "apis" else key)
    note = f'<p class="note">{esc(words)}.</p>' if words else ""
    return (f'<section><h2>{esc(title)}</h2>'
            + _table(_FIG_HEAD.format(esc(column)), "".join(rows[:MAX_TABLE_ROWS * 2])) + note + "</section>")


def lag_table(lagging: list[tuple[str, str, dict]]) -> str:
    """Lag last and max per partition (most lag first), with a bar for the max."""
    top = max((p["lag_max"] or 0) for _, _, p in lagging) or 1
    rows = "".join(
        f'<tr><td class="n">{esc(topic)}</td><td>{esc(part)}</td><td>{_num(p["lag_last"])}</td>'
        f'<td>{_num(p["lag_max"])}</td><td class="barcell"><span class="bar" '
        f'style="width:{100 * (p["lag_max"] or 0) / top:.0f}%"></span></td><td>{_num(p["fetch_records"])}</td>'
        f'<td>{human_bytes(p["fetch_bytes"])}</td></tr>'
        for topic, part, p in lagging[:MAX_TABLE_ROWS])
    return _table('<tr><th class="l">topic</th><th>part</th><th>last</th><th>max</th><th></th><th>records</th>'
                  '<th>fetched</th></tr>', rows)


def partition_table(doc: dict) -> str:
    """What each topic-partition moved: fetches, fetched bytes and records, lag, produced bytes and records."""
    rows = [(topic, part, p) for topic, parts in doc["partitions"].items() for part, p in parts.items()]
    if not rows:
        return ""
    rows.sort(key=lambda r: (-(r[2]["fetch_bytes"] + r[2]["produce_bytes"] + r[2]["share_bytes"]), r[0],
                             _part_key(r[1])))
    body = "".join(
        f'<tr><td class="n">{esc(topic)}</td><td>{esc(part)}</td><td>{_num(p["fetches"])}</td>'
        f'<td>{human_bytes(p["fetch_bytes"])}</td><td>{_num(p["fetch_records"])}</td><td>{_num(p["lag_last"])}</td>'
        f'<td>{_num(p["lag_max"])}</td><td>{_num(p["produces"])}</td><td>{human_bytes(p["produce_bytes"])}</td>'
        f'<td>{_num(p["produce_records"])}</td><td>{_num(p["acquired"])}</td></tr>'
        for topic, part, p in rows[:MAX_TABLE_ROWS])
    words = more_rows(len(rows), MAX_TABLE_ROWS, "partition", doc, "partitions")
    note = f'<p class="note">{esc(words)}.</p>' if words else ""
    head = ('<tr><th class="l">topic</th><th>part</th><th>fetches</th><th>fetched</th><th>records</th>'
            '<th>lag last</th><th>lag max</th><th>produces</th><th>produced</th><th>records</th>'
            '<th>share acquired</th></tr>')
    return ('<section><h2>By topic-partition</h2><p class="note">Most bytes first.</p>'
            + _table(head, body) + note + "</section>")


def exchange_table(title: str, items: list[dict]) -> str:
    if not items:
        return ""
    rows = "".join(
        f'<tr><td>{esc(_clock(e["ts_ns"] / 1e9))}</td>'
        f'<td class="n">{esc(e["client"])}</td><td class="n">{esc(e["broker"])}</td>'
        f'<td class="n">{_api(e)}</td><td>{e["correlation_id"]}</td>'
        f'<td class="n">{esc(e["client_id"])}</td><td>{ms(e["latency_ms"])}</td>'
        f'<td class="err">{esc(", ".join(e["error_codes"]))}</td></tr>' for e in items)
    head = ('<tr><th class="l">time (UTC)</th><th class="l">client</th><th class="l">broker</th><th class="l">api</th>'
            '<th>corr</th><th class="l">client id</th><th>latency ms</th><th class="l">errors</th></tr>')
    return f'<section><h2>{esc(title)}</h2>' + _table(head, rows) + "</section>"


def _api(e: dict) -> str:
    return "?" if e["api"] is None else f'{esc(e["api"])} v{esc(e["api_version"])}'


def _clock(ts: float) -> str:
    text = utc_text(ts, "%H:%M:%S")
    if text.startswith("@"):
        return text
    return f"{text}.{int(round(ts % 1 * 1e6)) % 1000000:06d}"


def share_table(doc: dict) -> str:
    groups = doc["share_groups"]
    if not groups:
        return ""
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1]["share_fetches"] - kv[1]["share_acknowledges"], kv[0]))
    rows = "".join(
        f'<tr><td class="n">{esc(g)}</td><td>{f["share_fetches"]:,}</td><td>{f["share_acknowledges"]:,}</td>'
        f'<td>{f["records"]:,}</td><td>{f["acquired"]:,}</td><td>{f["redelivered"]:,}</td>'
        + "".join(f'<td>{n:,}</td>' for n in f["acknowledgements"].values()) + "</tr>"
        for g, f in ordered[:MAX_TABLE_ROWS])
    words = more_rows(len(ordered), MAX_TABLE_ROWS, "share group", doc, "share_groups")
    note = f'<p class="note">{esc(words)}.</p>' if words else ""
    names = next(iter(groups.values()))["acknowledgements"].keys()
    head = ('<tr><th class="l">group</th><th>fetches</th><th>acks</th><th>records</th><th>acquired</th>'
            '<th>redelivered</th>' + "".join(f"<th>{esc(n.lower())}</th>" for n in names) + "</tr>")
    return ('<section><h2>Share groups</h2><p class="note">Records acquired by ShareFetch, redeliveries '
            '(DeliveryCount &gt; 1), and acknowledgements by type.</p>' + _table(head, rows) + note + "</section>")
