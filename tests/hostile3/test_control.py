"""Control characters from the wire reach no output raw (issue 49): tests/hostile3/control.py's capture, every
string of every api and version holding every C0, C1 and bidi control (and the other invisible characters),
through every output kwire writes; each output's bytes are scanned for them.

- terminal views (inspect lines, -V, -V --records; stats tables; the live dashboard), plain and on a forced
  colour terminal (where the only escape sequences are rich's colours): escaped as Python spells them;
- JSON (inspect --json, --records; stats --json; the findings log): \\uXXXX escapes, the JSON valid and the
  strings intact once read back;
- the HTML report; Prometheus label values (stats --metrics, the exporter's families), which stay distinct;
- error lines quoting what they were given.
"""

from __future__ import annotations

import json
import re

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kwire.safe_text import label_safe
from tests.hostile3.control import RAW, HostileFiller, raw_in, write_capture
from tests.hostile3.outputs import COLOUR, command, files_of, live_outputs

SGR = re.compile(r"\x1b\[[0-9;]*m")  # rich's own colours and styles
SEED = 49


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("control") / "control.pcap"
    n = write_capture(path, SEED)
    return str(path), n


@pytest.fixture(scope="module")
def outputs(capture, tmp_path_factory):
    path, _ = capture
    out = {}
    for args in (("inspect",), ("inspect", "-V"), ("inspect", "-V", "--records"), ("inspect", "--json"),
                 ("inspect", "--json", "--records"), ("inspect", "--changes"), ("inspect", "--json", "--show-secrets"),
                 ("stats", "--json", "-j", "0")):
        out[" ".join(args)], out[" ".join(args) + " (stderr)"] = command(*args, path)
    out.update(files_of(path, tmp_path_factory.mktemp("files")))
    out.update(live_outputs(path))
    log = tmp_path_factory.mktemp("live") / "findings.jsonl"
    out["live --no-screen"], out["live (stderr)"] = command("live", "--replay", path, "--speed", "0", "--no-screen",
                                                           "--exit-when-done", "--findings-log", str(log))
    out["live --findings-log FILE"] = log.read_bytes()
    return out


def _hostile() -> HostileFiller:
    """The generator's strings, made again from the same seed."""
    return HostileFiller(SEED)


def test_no_output_holds_a_raw_control(outputs):
    leaks = {name: [hex(ord(c)) for c in raw_in(data.decode("utf-8"))] for name, data in outputs.items()}
    assert {name: chars for name, chars in leaks.items() if chars} == {}
    assert len(outputs) >= 20 and outputs["live --findings-log FILE"]


def test_a_colour_terminal_gets_rich_colours_only(capture):
    path, _ = capture
    for args in (("inspect",), ("inspect", "-V", "--records"), ("stats", "-j", "0")):
        out, _ = command(*args, path, env=COLOUR)
        assert b"\x1b[" in out  # colours there are
        assert raw_in(SGR.sub("", out.decode())) == [], args


def test_views_show_the_strings_escaped(outputs):
    lines = outputs["inspect"].decode()
    assert "client-0\\x" in lines and "\\u202e" in lines and "\\x9b" in lines
    assert "topic-a\\x" in outputs["inspect -V"].decode()
    assert "\\u202e" in outputs["stats --html"].decode()


def test_json_is_valid_and_the_strings_intact(capture, outputs):
    path, n = capture
    records = [json.loads(line) for line in outputs["inspect --json"].splitlines()]
    assert len(records) == n
    records = [r for r in records if r["client_id"] is not None]  # (ControlledShutdown v0: header v0)
    hostile = {f"client-{key}" for key in {r["api_key"] for r in records}}
    assert {r["client_id"] for r in records} == {_hostile().hostile(base) for base in hostile}
    for r in records:
        assert set(RAW) <= set(r["client_id"])
    document = json.loads(outputs["stats --json -j 0"])
    assert _hostile().hostile("group-a") in document["groups"]
    for line in outputs["live --findings-log"].splitlines():
        json.loads(line)
    text = outputs["inspect --json --records"].decode()
    assert "\\u202e" in text and "\\u009b" in text and "\\udb40\\udc01" in text  # a tag: a surrogate pair


def test_metric_labels_are_escaped_and_distinct(capture, outputs):
    path, _ = capture
    records = [json.loads(line) for line in outputs["inspect --json"].splitlines()]
    wanted = {label_safe(r["client_id"] if r["client_id"] is not None else "(null)") for r in records}
    for name in ("stats --metrics", "live --metrics"):
        seen = set()
        for family in text_string_to_metric_families(outputs[name].decode()):
            for sample in family.samples:
                if "client_id" in sample.labels and sample.name == "kwire_exchanges_total":
                    seen.add(sample.labels["client_id"])
        assert seen == wanted, name
    assert len(wanted) == len({r["client_id"] for r in records})


def test_error_lines_escape_what_they_quote(tmp_path):
    bad = tmp_path / "not\x9ba\u202ecapture\x1b[2J.pcap"
    bad.write_bytes(b"not a capture at all")
    _, err = command("stats", str(bad), exit_code=1)
    assert b"kwire: error:" in err and raw_in(err.decode()) == []
    assert b"\\x9b" in err and b"\\u202e" in err
