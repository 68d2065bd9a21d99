"""Hostile input through every view (issue 12, rendering): captures built by tests/render/hostile.py.

- Escape sequences, C0/C1 controls, a bidi override and rich markup in client ids, topics, group ids,
  member ids and record keys reach no terminal raw: `inspect` (lines, -V, -V --records), `stats`
  (tables), `live` (the dashboard), on a plain output and on a forced colour terminal (where the only
  escape sequences left are rich's own colours), and rich markup is shown as text.
- Timestamps no calendar holds (pcapng with if_tsresol 0, past year 9999) crash no view: `inspect`,
  `inspect -V`, `--json`, `stats`, `stats --json`, `stats --html`, `live`.
- Unknown tagged fields of SaslAuthenticate are redacted everywhere unless --show-secrets.
- A body of thousands of tagged fields, or of nested arrays, shows a bounded tree and says what it
  left out.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner

from kwire.cli.main import cli
from tests.render.hostile import BIDI, MARKUP, RAW_CONTROLS, absurd_time_pcapng, encode_body, escape_capture, \
    exchange, sasl_tagged, tagged_flood
from tests.fuzz.conversation import conversation_pcap

SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own colours and styles


def run(*args: str, color: bool = False) -> str:
    env = {"FORCE_COLOR": "1", "TERM": "xterm-256color", "COLUMNS": "160"} if color else \
        {"NO_COLOR": "1", "COLUMNS": "160"}
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "hostile.pcap"
    data, names = escape_capture(random.Random(1215))
    path.write_bytes(data)
    return str(path), names


def views(path: str, tmp_path) -> dict[str, str]:
    html = tmp_path / "report.html"
    return {
        "inspect": run("inspect", path),
        "inspect -V --records": run("inspect", "-V", "--records", path),
        "stats": run("stats", "--html", str(html), path),
        "live": run("live", "--replay", path, "--speed", "0", "--exit-when-done"),
    }


def assert_safe(text: str, where: str) -> None:
    bare = SGR.sub("", text)
    for raw in RAW_CONTROLS:
        assert raw not in bare, f"{where}: raw {raw!r} reaches the terminal"


@pytest.mark.parametrize("color", [False, True], ids=["plain", "terminal"])
def test_escape_sequences_never_reach_the_terminal(hostile, tmp_path, color):
    path, names = hostile
    outputs = views(path, tmp_path) if not color else {
        "inspect": run("inspect", path, color=True),
        "inspect -V --records": run("inspect", "-V", "--records", path, color=True),
        "stats": run("stats", path, color=True),
        "live": run("live", "--replay", path, "--speed", "0", "--exit-when-done", color=True),
    }
    for where, text in outputs.items():
        assert_safe(text, where)
    seen = {where: SGR.sub("", text) for where, text in outputs.items()}
    # What the strings were is still shown, escaped, and markup as text.
    assert "\\x1b]0;pwned\\x07" in seen["inspect"] and "\\u202e" in seen["inspect"]
    for where in ("inspect", "inspect -V --records", "stats"):
        assert MARKUP in seen[where], where
    tree = seen["inspect -V --records"]
    for name in ("topic", "group", "member", "key", "client"):
        escaped = names[name].encode("unicode_escape").decode().replace("\\u009b", "\\x9b")
        assert escaped[:12] in tree, name
    assert "cli\\x" in seen["live"]  # the client id, escaped, on the dashboard


def test_html_report_escapes_and_shows_controls(hostile, tmp_path):
    path, _ = hostile
    html = tmp_path / "r.html"
    run("stats", "--html", str(html), path)
    page = html.read_text()
    for raw in RAW_CONTROLS:
        assert raw not in page
    assert "\\x1b]0;pwned\\x07" in page and "[bold red]markup[/]" in page


ABSURD = [((1 << 62) + 12345, 0), (253402300800, 0), (2**63 - 1, 9), (0, 9), ((1 << 63) + 5, 0x80 | 1)]


@pytest.mark.parametrize("ticks, tsresol", ABSURD, ids=["2^62s", "year10000", "2^63-1ns", "epoch", "2^63 binary"])
def test_absurd_timestamps_crash_no_view(tmp_path, ticks, tsresol):
    path = tmp_path / "t.pcapng"
    path.write_bytes(absurd_time_pcapng(ticks, tsresol))
    html = tmp_path / "t.html"
    line = run("inspect", str(path))
    assert "Metadata v1" in line
    run("inspect", "-V", str(path))
    assert json.loads(run("inspect", "--json", str(path)).splitlines()[0])["api"] == "Metadata"
    assert "By api and version" in run("stats", str(path))
    assert json.loads(run("stats", "--json", str(path)))["totals"]["exchanges"] == 1
    run("stats", "--html", str(html), str(path))
    assert "<svg" in html.read_text()
    run("live", "--replay", str(path), "--speed", "0", "--exit-when-done")
    if ticks > 10**12 and tsresol == 0:
        assert line.startswith("@")  # epoch seconds where no date can be


def test_sasl_unknown_tagged_fields_are_redacted(tmp_path):
    secret = b"tagged-secret-pw-7731"
    path = tmp_path / "sasl.pcap"
    path.write_bytes(sasl_tagged(secret))
    forms = (secret.hex(), secret.decode(), secret.hex()[-16:])
    outputs = [run("inspect", "--json", str(path)), run("inspect", "--json", "--records", str(path)),
               run("inspect", "-V", str(path)), run("inspect", str(path)),
               run("inspect", "--json", "-j", "2", str(path))]
    for text in outputs:
        for form in forms:
            assert form not in text
    record = [json.loads(line) for line in outputs[0].splitlines()][1]
    assert record["request"]["_unknown_tagged_fields"] == {"77": {"redacted": len(secret)}}
    assert record["response"]["_unknown_tagged_fields"] == {"78": {"redacted": len(secret)}}
    shown = run("inspect", "--json", "--show-secrets", str(path))
    assert shown.count(secret.hex()) >= 2


def test_a_flood_of_tagged_fields_shows_a_bounded_tree(tmp_path):
    path = tmp_path / "flood.pcap"
    path.write_bytes(tagged_flood(5000))
    out = run("inspect", "-V", str(path))
    assert "unknown tagged fields (5,000)" in out
    assert "… 4,950 more fields" in out
    assert len(out.splitlines()) < 80
    record = json.loads(run("inspect", "--json", str(path)))
    assert len(record["request"]["_unknown_tagged_fields"]) == 5000  # JSON keeps everything


def test_nested_arrays_stop_at_the_line_budget(tmp_path):
    topics = [{"Name": f"t{i}", "TopicId": bytes(16), "Partitions": [
        {"PartitionIndex": p, "LeaderId": 1, "ReplicaNodes": [1, 2, 3], "IsrNodes": [1, 2, 3],
         "OfflineReplicas": [], "ErrorCode": 0} for p in range(30)]} for i in range(40)]
    body = {"Brokers": [{"NodeId": 1, "Host": "b", "Port": 9092}], "ClusterId": "c", "Topics": topics}
    path = tmp_path / "meta.pcap"
    path.write_bytes(conversation_pcap(exchange(3, 12, 1, "cli", {"Topics": None}, body)))
    out = run("inspect", "-V", str(path))
    assert "… 10 more" in out  # 30 partitions a topic, 20 shown
    assert re.search(r"… [\d,]+ more entries not shown \(this view stops at 2,000 lines", out)
    assert len(out.splitlines()) < 2100


def test_enum_and_error_names_and_record_dates_in_the_tree(hostile):
    path, _ = hostile
    tree = run("inspect", "-V", "--records", path)
    assert "IsolationLevel: 1 (READ_COMMITTED)" in tree
    assert "Acks: -1 (ALL)" in tree
    assert "KeyType: 0 (GROUP)" in tree
    assert "ErrorCode: 27 (REBALANCE_IN_PROGRESS)" in tree
    assert "Timestamp: 1795305690000 (2026-11-22 00:01:30.000)" in tree
    lines = run("inspect", path).splitlines()
    heartbeat = next(line for line in lines if "Heartbeat" in line)
    assert "REBALANCE_IN_PROGRESS" in heartbeat


def test_encode_body_round_trips_through_the_decoder():
    """The generator's writer against kwire's decoder: what it writes is what the decoder reads."""
    from kwire.codec.compiler import decoder_for
    from kwire.codec.schemas import schema_for

    values = {"GroupId": "g" + BIDI, "GenerationId": 7, "MemberId": "m", "GroupInstanceId": None}
    raw = encode_body(12, "request", 4, values)
    body, end = decoder_for(schema_for(12, "request"), 4)(raw)
    assert end == len(raw)
    assert body == values
